"""bench/runtime_bench.py end to end, tiny: every tool measured, every job run once, nothing left.

Runs the bench as a subprocess (it configures the global runtime and starts
worker processes) on the real PostgreSQL and Redis, with 200 jobs.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest
import redis

from tests.support import pg_admin_url, redis_test_url

pytestmark = [pytest.mark.pg, pytest.mark.redis, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]
JOBS = 200


@pytest.fixture(scope="module")
def bench_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, dict]:
    pytest.importorskip(
        "pgqueuer", reason="the bench extra is not installed (pip install -e '.[bench]')"
    )
    pytest.importorskip("procrastinate", reason="the bench extra is not installed")
    tmp = tmp_path_factory.mktemp("bench")
    argv = [sys.executable, "bench/runtime_bench.py", f"--jobs={JOBS}", "--single-jobs=50"]
    argv += ["--rate=100", "--duration=1", f"--json={tmp / 'out.json'}", f"--work-dir={tmp}"]
    proc = subprocess.run(argv, cwd=REPO, capture_output=True, text=True, timeout=280)
    assert proc.returncode == 0, proc.stderr[-2000:]
    pid = int(next(tmp.glob("[0-9]*")).name)  # the bench's work dir is named by its pid
    return pid, json.loads((tmp / "out.json").read_text())


def test_every_tool_has_every_figure(bench_run: tuple[int, dict]) -> None:
    _, result = bench_run
    assert set(result["tools"]) == {"ours", "pgqueuer", "procrastinate"}
    for name, tool in result["tools"].items():
        failed = {k: v for k, v in tool["metrics"].items() if not isinstance(v, float)}
        assert failed == {}, name
        assert tool["metrics"]["drain_jobs_s"] > 0
        assert tool["metrics"]["pickup_p50_ms"] <= tool["metrics"]["pickup_p99_ms"]


def test_every_job_ran_exactly_once(bench_run: tuple[int, dict]) -> None:
    _, result = bench_run
    for tool in result["tools"].values():
        assert tool["notes"]["drain_runs"] == f"{JOBS}/{JOBS} jobs ran, 0 ran more than once"
        assert tool["notes"]["latency_jobs"] == "100/100 jobs at 100/s"


def test_targets_are_judged_against_pgqueuer(bench_run: tuple[int, dict]) -> None:
    _, result = bench_run
    assert all(t["met"] in (True, False) for t in result["targets"])


def test_nothing_is_left_behind(bench_run: tuple[int, dict]) -> None:
    pid, _ = bench_run
    with psycopg.connect(pg_admin_url(), autocommit=True) as conn:
        databases = conn.execute(
            "SELECT datname FROM pg_database WHERE datname LIKE %s", (f"bench\\_%\\_{pid}",)
        ).fetchall()
        slots = conn.execute(
            "SELECT slot_name FROM pg_replication_slots WHERE slot_name = %s", (f"bench_wal_{pid}",)
        ).fetchall()
    assert databases == [] and slots == []
    client = redis.Redis.from_url(redis_test_url())
    try:
        assert list(client.scan_iter(match=f"bench-{pid}-*", count=1000)) == []
    finally:
        client.close()
    assert _processes_of_bench(pid) == []


def _processes_of_bench(pid: int) -> list[int]:
    """Live processes whose environment points at this bench run's work dir."""
    marker = f"/{pid}/".encode()
    found = []
    for environ in Path("/proc").glob("[0-9]*/environ"):
        try:
            data = environ.read_bytes()
        except OSError:  # gone, or not ours to read
            continue
        if b"BENCH_STARTS_DIR=" in data and marker in data.split(b"BENCH_STARTS_DIR=")[1][:300]:
            found.append(int(environ.parent.name))
    return found
