"""bench/held_xmin_bench.py end to end, short windows: the hold is real, every job runs, nothing left.

Runs the bench as a subprocess on the real PostgreSQL and Redis (it configures the
global runtime and starts worker processes), ours at 100 jobs/s.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest

from tests.support import pg_admin_url

pytestmark = [pytest.mark.pg, pytest.mark.redis, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def bench_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, dict]:
    tmp = tmp_path_factory.mktemp("held")
    argv = [sys.executable, "bench/held_xmin_bench.py", "--tools=ours", "--rates=100"]
    argv += ["--before=2", "--hold=3", "--after=1", f"--json={tmp / 'out.json'}"]
    argv += [f"--work-dir={tmp}"]
    proc = subprocess.run(argv, cwd=REPO, capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    pid = int(next(tmp.glob("[0-9]*")).name)
    return pid, json.loads((tmp / "out.json").read_text())


def test_the_snapshot_really_held_xmin_and_every_job_ran(bench_run: tuple[int, dict]) -> None:
    _, result = bench_run
    (run,) = result["runs"]
    assert run["notes"]["xmin held"] == "yes"
    offered, ran = run["notes"]["jobs"].split(" ")[0].split("/")
    assert offered == ran and int(ran) >= 100 * 5  # about 6 s at 100/s, allowing late ticks


def test_every_window_has_its_figures(bench_run: tuple[int, dict]) -> None:
    _, result = bench_run
    metrics = result["runs"][0]["metrics"]
    for window in ("before", "hold", "after"):
        assert metrics[f"{window}_offered_jobs_s"] > 50
        assert metrics[f"{window}_completed_jobs_s"] > 0
        assert metrics[f"{window}_pickup_p50_ms"] <= metrics[f"{window}_pickup_p99_ms"]
    assert metrics["dead_tuples_hold_end"] >= metrics["dead_tuples_hold_start"]


def test_the_database_is_dropped(bench_run: tuple[int, dict]) -> None:
    pid, _ = bench_run
    with psycopg.connect(pg_admin_url(), autocommit=True) as conn:
        left = conn.execute(
            "SELECT datname FROM pg_database WHERE datname LIKE %s", (f"bench\\_xmin\\_%\\_{pid}",)
        ).fetchall()
    assert left == []
