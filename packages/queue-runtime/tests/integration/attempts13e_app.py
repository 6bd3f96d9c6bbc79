"""Jobs for the attempt-history tests (``test_attempt_history_13e``): one that fails twice
and then succeeds, one that always fails. A worker subprocess imports it; it configures
the runtime from ``QR_TEST_SETTINGS``.
"""

from __future__ import annotations

from pathlib import Path

from queue_runtime import RetryPolicy, configure, job
from queue_runtime.testing import settings_from_env

_settings = settings_from_env()
if _settings is not None:
    configure(_settings)

QUICK = RetryPolicy(max_attempts=3, base_delay=0.05, max_delay=0.1)


def _count_run(path: str) -> int:
    """Appends a line to ``path`` per run; the run's number (1 for the first)."""
    with Path(path).open("a", encoding="utf-8") as f:
        f.write("run\n")
    return len(Path(path).read_text(encoding="utf-8").splitlines())


def _charge(run: int) -> None:
    raise ConnectionError(f"gateway timeout on run {run}")


@job(pool="batch", retry=QUICK)
def flaky(path: str) -> str:
    """Fails on its first two runs (a traceback two frames deep), then succeeds."""
    run = _count_run(path)
    if run < 3:
        _charge(run)
    return f"charged on run {run}"


@job(pool="batch", retry=QUICK)
def doomed(path: str) -> None:
    """Fails on every run: dead after its third attempt."""
    run = _count_run(path)
    raise ValueError(f"bad card on run {run}")
