"""``migrator loadtest`` end to end: real CLI, real worker subprocesses, real chaos.

The app under test is ``tests/e2e/loadtest_app``: ``record_payment`` writes a
payment row per execution (non-idempotent, declared so: the gate holds it).

- With an idempotency key (the execution guard, the key committed with the
  payment) and all three kinds of chaos, the load test passes, certifies the
  job, and the app's enqueues then go async; every job paid exactly once.
- Without a key, under kill-workers, it fails and shows the duplicate
  completions (and the payments table shows the double payments).
- Without ``--sandbox`` it refuses to run (exit 2).

Each test gets its own schema and Redis prefix on the shared servers (dropped
and deleted afterwards, SCAN, never FLUSHALL); Redis restarts happen on a
private redis-server the load test starts and stops by PID.
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from click.testing import CliRunner
from psycopg import sql

from migrator.cli import main
from queue_runtime import Settings, configure
from queue_runtime.gate import certification, gate_decision
from tests.e2e._queue_env import fast_sandbox
from tests.e2e.loadtest_app import jobs
from tests.support import pg_admin_url, wait_until

REPO = Path(__file__).resolve().parents[4]
DIST = Path(__file__).resolve().parents[2]  # packages/job-migrator: ``tests.e2e`` imports from here
JOB = "tests.e2e.loadtest_app.jobs.record_payment"
SANDBOX = "tests.e2e.loadtest_app.sandbox"
# A job a killed worker had claimed but not started waits for the lease TTL (2 s), and
# after a Redis restart for the reaper's epoch wait too: the SLA leaves room for both.
SLA_MS = "15000"


@pytest.fixture
def sandbox() -> Iterator[Settings]:
    with fast_sandbox(
        "qr_lt", lambda schema: jobs.create_tables(pg_admin_url(), schema)
    ) as settings:
        yield settings


def run_cli(settings: Settings, tmp_path: Path, *options: str) -> tuple[int, str, dict]:
    """``migrator loadtest JOB --sandbox SANDBOX ...`` in a subprocess; (status, output, JSON report)."""
    report = tmp_path / f"report-{secrets.token_hex(3)}.json"
    env = {k: v for k, v in os.environ.items() if k != "QUEUE_RUNTIME_MODE"}
    env["LOADTEST_APP_SETTINGS"] = settings.model_dump_json(by_alias=True)
    env["COLUMNS"] = "200"
    command = [sys.executable, "-c", "from migrator.cli import main; main()", "loadtest", JOB]
    command += ["--sandbox", SANDBOX, "--json", str(report), "--markdown", str(report) + ".md"]
    done = subprocess.run(
        [*command, *options], cwd=DIST, env=env, capture_output=True, text=True, timeout=110
    )
    output = done.stdout + done.stderr
    assert report.exists(), output
    return done.returncode, output, json.loads(report.read_text())


def payments(settings: Settings) -> list[tuple[int, int]]:
    """(job id, payments written for it) for the jobs the workers ran."""
    query = sql.SQL(
        "SELECT job_id, count(*) FROM {}.payments WHERE job_id IS NOT NULL GROUP BY job_id"
    ).format(sql.Identifier(settings.schema_name))
    with psycopg.connect(settings.database_url or "") as conn:
        return [(int(a), int(b)) for a, b in conn.execute(query).fetchall()]


@pytest.mark.pg
@pytest.mark.redis
@pytest.mark.slow
def test_keyed_job_passes_under_all_chaos_certifies_and_opens_the_gate(
    sandbox: Settings, tmp_path: Path
) -> None:
    runtime = configure(sandbox)
    try:
        assert not gate_decision(runtime, jobs.record_payment).run_async  # uncertified: inline
        assert jobs.record_payment.enqueue(1, idempotency_key="before").id < 0  # ran in-process

        status, output, report = run_cli(
            sandbox,
            tmp_path,
            "--rate", "20", "--duration", "6s", "--burst", "3x:1s@2s",
            "--chaos", "kill-workers,redis-restart,pg-terminate",
            "--args", "tests.e2e.loadtest_app.args:payments",
            "--key", "pay-{run}-{i}",
            "--workers", "2", "--concurrency", "4",
            "--sla-p99-ms", SLA_MS, "--drain-timeout", "40s", "--certify-by", "e2e",
        )  # fmt: skip

        assert status == 0, output
        assert report["passed"] and report["certified"], report["reasons"]
        assert report["duplicate_completions"] == []
        assert report["lost"] == report["unfinished"] == 0
        assert report["succeeded"] == report["enqueued"] > 120  # the burst added jobs
        kinds = {e["kind"] for e in report["chaos_events"]}
        assert kinds == {"kill-workers", "redis-restart", "pg-terminate"}
        assert report["latency"]["p99_ms"] <= float(SLA_MS)
        paid = payments(sandbox)
        assert len(paid) == report["enqueued"]
        assert all(count == 1 for _, count in paid), "a keyed payment was made twice"
        assert "PASSED" in output and "certified by e2e" in output

        cert = certification(runtime, JOB, report["fingerprint"])
        assert cert is not None and cert.certified_by == "e2e"
        assert cert.figures["duplicate_completions"] == 0
        wait_until(
            lambda: gate_decision(runtime, jobs.record_payment).run_async,
            timeout=10,
            message="the gate to open for the certified fingerprint",
        )
        assert jobs.record_payment.enqueue(2, idempotency_key="after").id > 0  # queued: async
    finally:
        runtime.close()


@pytest.mark.pg
@pytest.mark.redis
@pytest.mark.slow
def test_job_without_key_fails_under_kill_workers_and_shows_duplicate_completions(
    sandbox: Settings, tmp_path: Path
) -> None:
    status, output, report = run_cli(
        sandbox,
        tmp_path,
        "--rate", "20", "--duration", "5s", "--chaos", "kill-workers", "--kills", "3",
        "--workers", "2", "--concurrency", "4", "--sla-p99-ms", SLA_MS, "--drain-timeout", "40s",
    )  # fmt: skip

    assert status == 1, output
    assert not report["passed"] and not report["certified"]
    duplicates = report["duplicate_completions"]
    assert duplicates, report
    assert any("completed more than once" in r for r in report["reasons"])
    assert all(not d["keyed"] and d["completions"] >= 2 for d in duplicates)
    assert "duplicate completions" in output and f"job {duplicates[0]['key']} (no key)" in output
    assert report["lost"] == 0 and report["succeeded"] == report["enqueued"]
    paid = dict(payments(sandbox))
    assert all(paid[int(d["key"])] >= 2 for d in duplicates)  # the effect really happened twice
    runtime = configure(sandbox)
    try:
        assert certification(runtime, JOB) is None
    finally:
        runtime.close()


def test_refuses_to_run_without_a_sandbox() -> None:
    result = CliRunner().invoke(main, ["loadtest", JOB, "--rate", "5", "--duration", "2s"])
    assert result.exit_code == 2
    assert "refusing to run without --sandbox" in result.output


def test_refuses_a_sandbox_that_does_not_configure_queue_mode(tmp_path: Path) -> None:
    (tmp_path / "not_a_sandbox.py").write_text("x = 1\n")  # configures nothing
    # A subprocess: importing a sandbox configures the global runtime of the process.
    done = subprocess.run(
        [
            sys.executable, "-c", "from migrator.cli import main; main()", "loadtest", JOB,
            "--sandbox", "not_a_sandbox", "--rate", "5", "--duration", "2s",
        ],
        cwd=tmp_path,
        env={**os.environ, "QUEUE_RUNTIME_MODE": "inline", "PYTHONPATH": str(DIST)},
        capture_output=True,
        text=True,
        timeout=60,
    )  # fmt: skip
    assert done.returncode == 2, done.stdout + done.stderr
    assert "does not configure queue_runtime in queue mode" in done.stderr


def test_bad_options_are_usage_errors() -> None:
    result = CliRunner().invoke(
        main,
        [
            "loadtest",
            JOB,
            "--sandbox",
            SANDBOX,
            "--rate",
            "5",
            "--duration",
            "2s",
            "--burst",
            "ten",
        ],
    )
    assert result.exit_code == 2
    assert "invalid burst" in result.output
