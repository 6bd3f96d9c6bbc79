"""Jobs for the inspect-CLI tests (``test_inspect_cli``): one that waits, one that fails.

A worker subprocess imports it; it configures the runtime from ``QR_TEST_SETTINGS``.
"""

from __future__ import annotations

import time
from pathlib import Path

from queue_runtime import RetryPolicy, configure, job
from queue_runtime.testing import settings_from_env

_settings = settings_from_env()
if _settings is not None:
    configure(_settings)


@job(pool="batch")
def hold(marker: str) -> str:
    """Runs until the test creates ``marker`` (at most 60 s): a job that is visibly running."""
    deadline = time.monotonic() + 60
    while not Path(marker).exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    return "released"


@job(pool="batch", retry=RetryPolicy(max_attempts=1))
def explode(n: int) -> None:
    raise ValueError(f"exploded {n}")


@job(pool="batch")
def noop(n: int) -> int:
    return n
