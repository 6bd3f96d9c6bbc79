"""``migrator loadtest``: certify a job by running it through the real runtime under load and chaos.

``run_loadtest(spec, settings, progress) -> LoadTestReport``, in four steps with typed
results (prepare, drive, collect, certify: :mod:`migrator.loadtest.run`); renderers in
:mod:`migrator.render.loadtest`. See docs/loadtest.md.
"""

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
    "run_loadtest",
]
