"""Jobs for the dashboard's browser tests (``test_dashboard_browser.py``).

A worker subprocess imports this module (``queue-runtime worker
tests.integration.dashboard_browser_app``) and configures the runtime from
``QR_TEST_SETTINGS``; the dashboard imports it (``--app``) for the periodic
page. ``deliver`` fails permanently (straight to the dead-letter queue) until
the file it is given exists, so a test can dead-letter it, create the file,
replay it from the dashboard and watch it succeed; ``linger`` runs until its
release file exists, so the workers page has a worker holding a job.
"""

from __future__ import annotations

import os
import time
from datetime import timedelta
from pathlib import Path

from queue_runtime import Permanent, Settings, configure, job

if os.environ.get("QR_TEST_SETTINGS"):
    configure(Settings.model_validate_json(os.environ["QR_TEST_SETTINGS"]))


@job(pool="batch")
def deliver(flag: str, note: str = "") -> str:
    if not Path(flag).exists():
        raise Permanent(f"the endpoint is down ({flag} is missing)")
    return f"delivered {note}"


@job(pool="batch")
def linger(release: str, seconds: float = 60.0) -> None:
    """Runs until the file ``release`` exists (at most ``seconds``): a job a worker holds."""
    deadline = time.monotonic() + seconds
    while not Path(release).exists() and time.monotonic() < deadline:
        time.sleep(0.05)


@job(pool="batch", every=timedelta(hours=1))
def hourly_digest() -> None:
    """A periodic declaration for /periodic (its ticks run and do nothing)."""
