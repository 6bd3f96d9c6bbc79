"""``queue-runtime status --json``: each pool's row lists its periodic jobs' next runs.

The command runs in a subprocess: importing ``periodic_app`` here would register its
periodic job in this process, and every in-process worker of later tests would tick it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from queue_runtime import Settings

JOB = "tests.integration.periodic_app.beat"
EVERY = timedelta(seconds=2)  # periodic_app.EVERY
DIST = Path(__file__).resolve().parents[2]  # packages/queue-runtime: ``tests.`` imports from here


@pytest.mark.pg
def test_status_json_shows_each_pools_next_runs(settings: Settings) -> None:
    argv = ["--database-url", settings.database_url or "", "--schema", settings.schema_name]
    app = ["--app", "tests.integration.periodic_app"]
    before = datetime.now(UTC)
    done = subprocess.run(
        [sys.executable, "-m", "queue_runtime.cli", *argv, "status", "--json", *app],
        cwd=DIST,
        capture_output=True,
        text=True,
        timeout=60,
    )
    after = datetime.now(UTC)
    assert done.returncode == 0, done.stderr
    by_pool = {row["pool"]: row for row in json.loads(done.stdout)}

    [beat] = by_pool["batch"]["periodic"]
    assert (beat["job"], beat["schedule"]) == (JOB, "every 0:00:02")
    shown = datetime.fromisoformat(beat["next_run"])
    # The command computed the next run at some moment between before and after: the
    # next tick after it. Compared with a "now" read after the subprocess, a tick that
    # fell while the command was starting up on a slow machine looked in the past.
    assert before <= shown <= after + EVERY, (before, shown, after)
    assert all(row["periodic"] == [] for pool, row in by_pool.items() if pool != "batch")
