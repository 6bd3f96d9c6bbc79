"""``migrator loadtest``: certify a job by running it through the real runtime under load and chaos.

``run_loadtest(spec, settings, progress) -> LoadTestReport``; renderers in
:mod:`migrator.loadtest.render`. See docs/loadtest.md.
"""

from migrator.loadtest.render import render_json, render_markdown, render_terminal
from migrator.loadtest.report import (
    ChaosEvent,
    DuplicateCompletion,
    Execution,
    KeyMerge,
    Latency,
    LoadTestReport,
    evaluate,
)
from migrator.loadtest.run import LoadTestError, SandboxError, load_sandbox, run_loadtest
from migrator.loadtest.spec import (
    Burst,
    ChaosKind,
    LoadTestSpec,
    SpecError,
    declared_key,
    parse_burst,
    parse_chaos,
    parse_duration,
)
from migrator.loadtest.target import CertifyTarget, certify_target

__all__ = [
    "Burst",
    "CertifyTarget",
    "ChaosEvent",
    "ChaosKind",
    "DuplicateCompletion",
    "Execution",
    "KeyMerge",
    "Latency",
    "LoadTestError",
    "LoadTestReport",
    "LoadTestSpec",
    "SandboxError",
    "SpecError",
    "certify_target",
    "declared_key",
    "evaluate",
    "load_sandbox",
    "parse_burst",
    "parse_chaos",
    "parse_duration",
    "render_json",
    "render_markdown",
    "render_terminal",
    "run_loadtest",
]
