"""Fault injection with real worker processes: SIGKILL, Redis flush/restart, killed
PostgreSQL connections, poison jobs with an injected clock, tenant caps under redelivery.

Every job records its executions (``<schema>.executions``, own transaction) so
each test compares what actually ran with what the queue says completed.
Leases are short (2 s) to keep the file fast; waits are conditions with deadlines.
"""

from __future__ import annotations

import os
import random
import secrets
import signal
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import psycopg
import pytest

from queue_runtime import JobStatus, RetryPolicy, Settings, configure, get_job
from queue_runtime.retry import Backoff
from queue_runtime.runtime import Runtime
from queue_runtime.store import Failure, Stores
from queue_runtime.worker import Worker
from tests.integration import fault_app
from tests.integration.conftest import PrivateRedis
from tests.integration.workers import Execution, Spawner, db_now, executions, spawning
from tests.support import wait_until

pytestmark = [pytest.mark.pg, pytest.mark.redis, pytest.mark.slow]
LEASE_TTL = 2.0


def tuned(settings: Settings, **changes: Any) -> Settings:
    base = {"lease_ttl": LEASE_TTL, "poll_interval": 0.1, "shutdown_grace": 5.0}
    return settings.model_copy(update={**base, **changes})


@pytest.fixture
def spawner(tmp_path: Path) -> Iterator[Spawner]:
    yield from spawning(tmp_path)


def use(settings: Settings) -> Runtime:
    fault_app.create_tables(settings.database_url or "", settings.schema_name)
    return configure(settings)


def all_succeeded(rt: Runtime, ids: list[int]) -> bool:
    return all(rt.store.get(i).status is JobStatus.SUCCEEDED for i in ids)  # type: ignore[union-attr]


def executions_per_job(ran: list[Execution]) -> dict[int, list[Execution]]:
    per_job: dict[int, list[Execution]] = {}
    for e in ran:
        per_job.setdefault(e.job_id, []).append(e)
    return per_job


def test_sigkill_mid_batch_loses_nothing_and_reruns_only_what_was_running(
    settings: Settings, spawner: Spawner
) -> None:
    rt = use(tuned(settings))
    ids = [fault_app.work.enqueue(n, seconds=0.3).id for n in range(40)]
    victim = spawner.start(rt.settings, "--pool", "batch", "--concurrency", "4")
    spawner.start(rt.settings, "--pool", "batch", "--concurrency", "4")
    wait_until(
        lambda: sum(e.pid == victim.pid for e in executions(rt.settings)) >= 6,
        timeout=30,
        message="the victim to be mid-batch",
    )
    victim.send_signal(signal.SIGKILL)
    killed_at = db_now(rt.settings)
    victim.wait(timeout=10)
    wait_until(lambda: all_succeeded(rt, ids), timeout=40, message="every job to succeed")

    per_job = executions_per_job(executions(rt.settings))
    assert sorted(per_job) == sorted(ids)  # every job ran, and only these
    rerun = {job_id for job_id, runs in per_job.items() if len(runs) > 1}
    in_flight = _in_flight_at_kill(per_job, victim.pid, killed_at)
    assert rerun <= in_flight, (rerun, in_flight)
    cut_short = {
        e.job_id for e in executions(rt.settings) if e.pid == victim.pid and not e.finished_at
    }
    assert cut_short <= rerun  # what the kill interrupted ran again
    assert all(len(per_job[j]) == 2 for j in rerun)
    print(f"SIGKILL: {len(rerun)} re-executed of {len(in_flight)} in flight at the kill")
    _assert_one_success_each(rt, ids)


def _in_flight_at_kill(
    per_job: dict[int, list[Execution]], pid: int, killed_at: datetime
) -> set[int]:
    """Jobs the victim had started and not finished, or finished less than an ack ago."""
    ack_window = timedelta(seconds=1)
    return {
        job_id
        for job_id, runs in per_job.items()
        for e in runs
        if e.pid == pid and (e.finished_at is None or e.finished_at > killed_at - ack_window)
    }


def _assert_one_success_each(rt: Runtime, ids: list[int]) -> None:
    query = f"SELECT id, count(*) FROM {rt.settings.schema_name}.job_history GROUP BY id"
    with psycopg.connect(rt.settings.database_url or "") as conn:
        counts = dict(conn.execute(query).fetchall())  # type: ignore[arg-type]
    assert counts == dict.fromkeys(ids, 1)


@pytest.mark.parametrize("fault", ["flushall", "restart"])
def test_redis_flush_or_restart_loses_nothing_and_runs_no_live_job_twice(
    settings: Settings, spawner: Spawner, private_redis: PrivateRedis, fault: str
) -> None:
    rt = use(tuned(settings, redis_url=private_redis.url))
    slow = [fault_app.work.enqueue(n, seconds=8.0).id for n in range(4)]
    quick = [fault_app.work.enqueue(n, seconds=0.05).id for n in range(20)]
    for _ in range(2):
        spawner.start(rt.settings, "--pool", "batch", "--concurrency", "4")
    wait_until(
        lambda: _running_longer_than_a_lease(rt.settings, slow),
        timeout=30,
        message="the slow jobs to be running for more than a lease ttl (reaper-eligible)",
    )
    for _ in range(3 if fault == "flushall" else 1):
        seen = spawner.logs().count("re-asserted")
        if fault == "flushall":
            private_redis.client().flushall()
        else:
            private_redis.restart()
        wait_until(
            lambda s=seen: spawner.logs().count("re-asserted") > s,
            timeout=10,
            message="the workers to re-assert their leases",
        )
    more = [fault_app.work.enqueue(n, seconds=0.05).id for n in range(10)]
    wait_until(lambda: all_succeeded(rt, slow + quick + more), timeout=40, message="all jobs")

    per_job = executions_per_job(executions(rt.settings))
    twice = {job_id: len(runs) for job_id, runs in per_job.items() if len(runs) > 1}
    assert twice == {}, f"jobs executed more than once after {fault}: {twice}\n{spawner.logs()}"
    assert sorted(per_job) == sorted(slow + quick + more)


def test_redis_stalled_longer_than_a_lease_runs_no_live_job_twice(
    settings: Settings, spawner: Spawner, private_redis: PrivateRedis
) -> None:
    """Redis frozen (SIGSTOP) past the lease ttl keeps its data and its epoch, but the live
    workers' leases expire meanwhile: no reaper may rescue them once it answers again."""
    rt = use(tuned(settings, redis_url=private_redis.url))
    slow = [fault_app.work.enqueue(n, seconds=10.0).id for n in range(3)]
    for _ in range(2):
        spawner.start(rt.settings, "--pool", "batch", "--concurrency", "4")
    wait_until(
        lambda: _running_longer_than_a_lease(rt.settings, slow),
        timeout=30,
        message="the slow jobs to be running for more than a lease ttl (reaper-eligible)",
    )
    assert private_redis.pid is not None
    os.kill(private_redis.pid, signal.SIGSTOP)
    try:
        wait_until(
            lambda: spawner.logs().count("reaper round skipped") >= 2,
            timeout=20,
            message="both reapers to find Redis unreachable",
        )
        frozen_until = time.monotonic() + LEASE_TTL * 1.5  # every lease has expired by then
        wait_until(lambda: time.monotonic() > frozen_until, timeout=10, message="leases expiring")
    finally:
        os.kill(private_redis.pid, signal.SIGCONT)
    with private_redis.client() as client:
        assert client.dbsize() > 0, "the stall must keep Redis's data (else it is the flush test)"
    more = [fault_app.work.enqueue(n, seconds=0.05).id for n in range(10)]
    wait_until(lambda: all_succeeded(rt, slow + more), timeout=40, message="all jobs")

    per_job = executions_per_job(executions(rt.settings))
    twice = {job_id: len(runs) for job_id, runs in per_job.items() if len(runs) > 1}
    assert twice == {}, f"jobs executed more than once after a Redis stall: {twice}"
    assert sorted(per_job) == sorted(slow + more)
    assert "Redis answers again after an outage" in spawner.logs()


def _running_longer_than_a_lease(settings: Settings, ids: list[int]) -> bool:
    started = {e.job_id: e.started_at for e in executions(settings) if e.job_id in ids}
    if len(started) < len(ids):
        return False
    return db_now(settings) - max(started.values()) > timedelta(seconds=LEASE_TTL + 0.5)


def with_application_name(dsn: str, name: str) -> str:
    parts = urlsplit(dsn)
    query = f"{parts.query}&application_name={name}" if parts.query else f"application_name={name}"
    return urlunsplit((parts.scheme, parts.netloc, parts.path, query, parts.fragment))


def terminate_backends(dsn: str, app_name: str) -> int:
    assert app_name.startswith("qr-fault-")  # never anyone else's connections
    with psycopg.connect(dsn, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = %s",
            (app_name,),
        ).fetchall()
    return sum(1 for (ok,) in rows if ok)


def test_workers_recover_from_terminated_database_connections(
    settings: Settings, spawner: Spawner
) -> None:
    app_name = f"qr-fault-{secrets.token_hex(4)}"
    dsn = settings.database_url or ""
    rt = use(tuned(settings))
    ids = [fault_app.work.enqueue(n, seconds=0.1).id for n in range(60)]
    worker_settings = rt.settings.model_copy(
        update={"database_url": with_application_name(dsn, app_name)}
    )
    for _ in range(2):
        spawner.start(worker_settings, "--pool", "batch", "--concurrency", "4")
    terminated = 0
    for round_ in range(3):
        wait_until(
            lambda r=round_: len(executions(rt.settings)) >= 10 * (r + 1),
            timeout=30,
            message="progress between terminations",
        )
        terminated += terminate_backends(dsn, app_name)
    assert terminated >= 3  # pool connections and LISTEN connections of both workers
    wait_until(lambda: all_succeeded(rt, ids), timeout=40, message="every job after the kills")
    assert _connected(dsn, app_name)  # the workers reconnected under their own name
    print(f"pg_terminate_backend: {terminated} worker connections killed; all {len(ids)} jobs done")


def _connected(dsn: str, app_name: str) -> bool:
    with psycopg.connect(dsn, autocommit=True) as conn:
        row = conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE application_name = %s", (app_name,)
        ).fetchone()
    return bool(row and row[0] > 0)


class RecordingStore:
    """The real PgJobStore; keeps every Failure the worker stores."""

    def __init__(self, store: Any) -> None:
        self._store = store
        self.failures: list[Failure] = []

    def fail(self, failure: Failure) -> JobStatus:
        self.failures.append(failure)
        return self._store.fail(failure)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)


def RuntimeWith(runtime: Runtime, store: Any) -> Runtime:
    """``runtime`` with its job store replaced (the other stores shared)."""
    stores = Stores(store, runtime.gate_store, runtime.inspector, runtime.leases)
    return Runtime(runtime.settings, runtime.registry, stores=stores)


def test_poison_job_backs_off_by_the_policy_then_dies(settings: Settings) -> None:
    policy = RetryPolicy(max_attempts=5, base_delay=0.5, max_delay=3.0)
    rt = use(tuned(settings, retry=policy))
    frozen = datetime(2001, 1, 1, tzinfo=UTC)  # retries are "due" at once: no real waiting
    recording = RecordingStore(rt.store)
    backoff = Backoff(rng=random.Random(1234), now=lambda: frozen)
    handle = fault_app.poison.enqueue(13)
    worker = Worker(RuntimeWith(rt, recording), ["batch"], backoff=backoff).start()
    try:
        wait_until(lambda: get_job(handle.id).status() is JobStatus.DEAD, timeout=20, message="DLQ")
    finally:
        worker.stop()

    expected_rng = random.Random(1234)
    expected = [expected_rng.uniform(0, min(3.0, 0.5 * 2 ** (a - 1))) for a in range(1, 5)]
    delays = [(f.retry_at - frozen).total_seconds() for f in recording.failures if f.retry_at]
    assert delays == pytest.approx(expected, abs=1e-6)
    assert [f.attempt for f in recording.failures] == [1, 2, 3, 4, 5]
    assert recording.failures[-1].retry_at is None
    record = get_job(handle.id).record()
    assert (record.status, record.attempt) == (JobStatus.DEAD, 5)
    assert len(executions(rt.settings)) == 5


def max_concurrency(runs: list[Execution], cut_at: datetime, cut_pid: int) -> int:
    """Peak number of overlapping executions; the killed worker's end at the kill."""
    events: list[tuple[datetime, int]] = []
    for e in runs:
        end = e.finished_at or (cut_at if e.pid == cut_pid else None)
        assert end is not None, f"execution of job {e.job_id} never finished"
        events += [(e.started_at, 1), (end, -1)]
    peak = level = 0
    for _, step in sorted(events, key=lambda ev: (ev[0], ev[1])):  # ends before starts on ties
        level += step
        peak = max(peak, level)
    return peak


def test_tenant_cap_holds_under_redelivery_after_sigkill(
    settings: Settings, spawner: Spawner
) -> None:
    rt = use(tuned(settings, tenant_caps={"acme": 2}))
    ids = [fault_app.work.enqueue(n, seconds=0.5, tenant="acme").id for n in range(12)]
    victim = spawner.start(rt.settings, "--pool", "batch", "--concurrency", "4")
    wait_until(
        lambda: any(e.pid == victim.pid and e.finished_at is None for e in executions(rt.settings)),
        timeout=30,
        message="the victim running an acme job",
    )
    # The second worker starts only now: started together, it could win every freed tenant
    # token while the victim polls, and the victim would never hold an acme job to die with.
    spawner.start(rt.settings, "--pool", "batch", "--concurrency", "4")
    victim.send_signal(signal.SIGKILL)
    killed_at = db_now(rt.settings)
    victim.wait(timeout=10)
    wait_until(lambda: all_succeeded(rt, ids), timeout=45, message="every acme job")

    runs = executions(rt.settings)
    peak = max_concurrency(runs, killed_at, victim.pid)
    assert peak == 2, f"peak concurrency of tenant acme was {peak}"
    assert any(e.pid == victim.pid and e.finished_at is None for e in runs)
    print(f"tenant cap: peak {peak}, {len(runs)} executions for {len(ids)} jobs")
