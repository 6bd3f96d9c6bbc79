"""``migrator scan`` as a library call: scan, apply the baseline and the suppressions, judge
``--fail-on``.

    outcome = scan_project(ScanRequest(root=Path("app"), fail_on=Idempotency.UNSAFE))

The command line (:mod:`migrator.cli.scan`) only parses options, calls
:func:`scan_project` and renders the :class:`ScanOutcome`
(:mod:`migrator.render.scan`); everything here works the same from Python.
"""

from migrator.scan.baseline import load_baseline, write_baseline
from migrator.scan.project import (
    PARSE_ERRORS,
    ScanOutcome,
    ScanRequest,
    failing_sites,
    narrowed,
    project_root,
    scan_project,
    unparsed_files,
)
from migrator.scan.suppress import Suppressions, without_suppressed

__all__ = [
    "PARSE_ERRORS",
    "ScanOutcome",
    "ScanRequest",
    "Suppressions",
    "failing_sites",
    "load_baseline",
    "narrowed",
    "project_root",
    "scan_project",
    "unparsed_files",
    "without_suppressed",
    "write_baseline",
]
