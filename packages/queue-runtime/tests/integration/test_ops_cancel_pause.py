"""Cancel, pause and resume on real servers, with real worker processes.

Cancel: queued and scheduled jobs never run; a running job that checks its
context stops and ends cancelled (sync and async); one that ignores the
request finishes and its result stands. Pause: two worker processes both stop
claiming from the pool within the documented bound (``CONTROL_INTERVAL``
plus a claim, asserted under 2 s) while a running job goes on; resume
restarts claims. The CLI's lines and exit codes, through subprocesses.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from queue_runtime import JobStatus, Settings, configure
from queue_runtime.runtime import Runtime
from queue_runtime.store import Cancellation, Completion
from tests.integration import fault_app, ops_app
from tests.integration.workers import ROOT, Spawner, executions
from tests.support import wait_until

pytestmark = [pytest.mark.pg, pytest.mark.redis, pytest.mark.slow]
PAUSE_BOUND = 2.0  # seconds: docs/runtime.md promises claims stop within this


def tuned(settings: Settings) -> Settings:
    return settings.model_copy(
        update={"lease_ttl": 2.0, "poll_interval": 0.1, "shutdown_grace": 5.0}
    )


@pytest.fixture
def spawner(tmp_path: Path) -> Iterator[Spawner]:
    spawned = Spawner(tmp_path, app="tests.integration.ops_app")
    try:
        yield spawned
    finally:
        spawned.stop_all()


@pytest.fixture
def rt(settings: Settings) -> Iterator[Runtime]:
    fast = tuned(settings)
    fault_app.create_tables(fast.database_url or "", fast.schema_name)
    runtime = configure(fast)
    try:
        yield runtime
    finally:
        runtime.close()


def cli(settings: Settings, *argv: str) -> subprocess.CompletedProcess[str]:
    flags = ["--database-url", settings.database_url or "", "--schema", settings.schema_name]
    return subprocess.run(
        [sys.executable, "-m", "queue_runtime.cli", *flags, *argv],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )


def started(settings: Settings) -> set[int]:
    return {e.job_id for e in executions(settings)}


def status_of(rt: Runtime, job_id: int) -> JobStatus:
    found = rt.store.get(job_id)
    assert found is not None
    return found.status


def stays(condition: Callable[[], bool], seconds: float, message: str) -> None:
    """``condition`` holds on every look for ``seconds`` (an observation window, not a wait)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        assert condition(), message
        time.sleep(0.05)


def test_cancelled_queued_and_scheduled_jobs_never_run(rt: Runtime, spawner: Spawner) -> None:
    queued = ops_app.work.enqueue(1)
    scheduled = ops_app.work.enqueue(2, run_at=timedelta(seconds=1))
    assert queued.cancel() is Cancellation.CANCELLED
    assert scheduled.cancel(by="test") is Cancellation.CANCELLED
    spawner.start(rt.settings)
    marker = ops_app.work.enqueue(3, run_at=timedelta(seconds=1.5))  # due after `scheduled`
    assert marker.result(timeout=30) == 6
    assert started(rt.settings) == {marker.id}
    assert queued.status() is JobStatus.CANCELLED and scheduled.status() is JobStatus.CANCELLED
    assert queued.wait(timeout=1) is JobStatus.CANCELLED
    assert queued.cancel() is Cancellation.FINISHED  # a second cancel: already finished
    shown = cli(rt.settings, "show", str(scheduled.id))
    assert shown.returncode == 0 and "cancelled" in shown.stdout


@pytest.mark.parametrize("job_name", ["cooperative", "async_cooperative"])
def test_a_running_job_that_checks_its_context_stops_and_ends_cancelled(
    rt: Runtime, spawner: Spawner, job_name: str
) -> None:
    job = getattr(ops_app, job_name)
    spawner.start(rt.settings)
    handle = job.enqueue(60.0)
    wait_until(lambda: handle.id in started(rt.settings), timeout=30, message="it started")
    assert handle.status() is JobStatus.RUNNING

    asked = time.monotonic()
    done = cli(rt.settings, "cancel", str(handle.id))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().startswith(f"job {handle.id}: cancel requested (running")
    assert handle.wait(timeout=10) is JobStatus.CANCELLED
    took = time.monotonic() - asked
    record = handle.record()
    assert record.error is not None and "cancel request" in record.error
    assert record.attempt == 1  # not retried
    assert rt.store.dead_letters() == []  # not dead-lettered
    [ran] = [e for e in executions(rt.settings) if e.job_id == handle.id]
    assert ran.finished_at is None  # it stopped before the end of its loop
    assert took < 5.0


def test_a_running_job_that_ignores_the_request_finishes_with_its_result(
    rt: Runtime, spawner: Spawner
) -> None:
    spawner.start(rt.settings)
    handle = ops_app.stubborn.enqueue(30.0)
    wait_until(lambda: handle.id in started(rt.settings), timeout=30, message="it started")
    assert handle.cancel() is Cancellation.REQUESTED
    assert handle.result(timeout=10) == {"saw_cancel": True, "done": True}
    assert handle.status() is JobStatus.SUCCEEDED
    assert handle.cancel() is Cancellation.FINISHED


def test_pause_stops_claims_in_every_worker_and_resume_restarts_them(
    rt: Runtime, spawner: Spawner
) -> None:
    workers = [spawner.start(rt.settings) for _ in range(2)]
    warm = [ops_app.work.enqueue(n, seconds=0.05) for n in range(8)]
    wait_until(lambda: all(h.status() is JobStatus.SUCCEEDED for h in warm), timeout=30)
    long = ops_app.work.enqueue(100, seconds=3.0)
    wait_until(lambda: long.id in started(rt.settings), timeout=30, message="long job started")

    done = cli(rt.settings, "pause", "batch")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("pool batch paused")
    wait_until(
        lambda: spawner.logs().count("pool batch paused") == len(workers),
        timeout=PAUSE_BOUND,
        message="every worker paused the pool",
    )

    held = [ops_app.work.enqueue(n, seconds=0.05) for n in range(6)]
    stays(
        lambda: not set(started(rt.settings)) & {h.id for h in held},
        seconds=1.5,
        message="a paused pool's job started",
    )
    assert all(h.status() is JobStatus.QUEUED for h in held)
    assert long.result(timeout=10) == 200  # the running job went on and finished
    status = cli(rt.settings, "status")
    assert status.returncode == 0 and "paused: batch" in status.stdout

    done = cli(rt.settings, "resume", "batch")
    assert done.returncode == 0 and done.stdout.startswith("pool batch resumed")
    wait_until(
        lambda: spawner.logs().count("pool batch resumed") == len(workers),
        timeout=PAUSE_BOUND,
        message="every worker resumed the pool",
    )
    wait_until(lambda: all(h.status() is JobStatus.SUCCEEDED for h in held), timeout=10)
    assert "paused" not in cli(rt.settings, "status").stdout


def test_cli_cancel_says_one_line_per_id_and_fails_on_finished_or_unknown(rt: Runtime) -> None:
    finished = ops_app.work.enqueue(2)
    [claimed] = rt.store.claim("batch", 1, "w1")
    rt.store.complete_many([Completion(claimed.id, claimed.attempt, 4)])
    other = ops_app.work.enqueue(3)

    ok = cli(rt.settings, "cancel", str(other.id))
    assert (ok.returncode, ok.stdout.strip(), ok.stderr) == (
        0,
        f"job {other.id}: cancelled (it will not run)",
        "",
    )
    mixed = cli(rt.settings, "cancel", str(finished.id), "999999")
    assert mixed.returncode == 1
    assert mixed.stderr.splitlines() == [
        f"error: job {finished.id}: already finished (succeeded), nothing to cancel",
        "error: job 999999: unknown id",
    ]
    assert other.status() is JobStatus.CANCELLED


def test_cli_pause_and_resume_lines_and_an_unknown_pool(rt: Runtime) -> None:
    lines: list[Any] = []
    for argv in (["pause", "batch"], ["pause", "batch"], ["resume", "batch"], ["resume", "batch"]):
        done = cli(rt.settings, *argv)
        lines.append((done.returncode, done.stdout.strip().split(":")[0]))
    assert lines == [
        (0, "pool batch paused"),
        (0, "pool batch was already paused"),
        (0, "pool batch resumed"),
        (0, "pool batch was not paused"),
    ]
    unknown = cli(rt.settings, "pause", "nope")
    assert unknown.returncode == 2 and unknown.stdout == ""
    assert unknown.stderr.splitlines() == [
        "error: unknown pool 'nope'; configured pools: batch, transactional"
    ]
    assert cli(rt.settings, "resume", "nope").returncode == 2


def test_a_worker_started_while_its_pool_is_paused_claims_nothing_until_resumed(
    rt: Runtime, spawner: Spawner
) -> None:
    assert rt.store.pause("batch", "test") is True
    held = ops_app.work.enqueue(1)
    spawner.start(rt.settings)
    wait_until(lambda: "serving pools" in spawner.logs(), timeout=30, message="worker up")
    stays(lambda: held.id not in started(rt.settings), 1.0, "it claimed from a paused pool")
    assert held.status() is JobStatus.QUEUED
    assert rt.store.resume("batch") is True
    assert held.result(timeout=10) == 2


def test_a_cancelled_job_is_counted_by_job_in_the_worker_metrics(
    rt: Runtime, spawner: Spawner
) -> None:
    from tests.integration.test_metrics_by_job import scrape, value
    from tests.support import free_port

    port = free_port()
    spawner.start(rt.settings, "--metrics-port", str(port))
    wait_until(lambda: scrape(port), timeout=30, message="the worker's /metrics")
    handle = ops_app.cooperative.enqueue(60.0)
    wait_until(lambda: handle.id in started(rt.settings), timeout=30, message="it started")
    assert handle.cancel() is Cancellation.REQUESTED
    assert handle.wait(timeout=10) is JobStatus.CANCELLED
    by = {"job": ops_app.cooperative.name, "pool": "batch"}

    def counted() -> bool:
        samples = scrape(port)
        return (
            samples is not None and value(samples, "queue_runtime_jobs_cancelled_total", **by) == 1
        )

    wait_until(counted, timeout=10, message="queue_runtime_jobs_cancelled_total = 1")
    samples = scrape(port) or {}
    assert value(samples, "queue_runtime_jobs_failed_total", **by) == 0  # not a failure
    assert value(samples, "queue_runtime_jobs_completed_total", **by) == 0
