"""The worker against real PostgreSQL and Redis: runs, retries, DLQ, pools, async, timeouts."""

from __future__ import annotations

import signal
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
import redis
from psycopg import sql

from queue_runtime import JobStatus, RetryPolicy, Settings, configure, get_job
from queue_runtime.config import JobConfig
from queue_runtime.metrics import WorkerMetrics
from queue_runtime.runtime import Runtime
from queue_runtime.store import Completion, NewJob, Stores
from queue_runtime.worker import Worker, claim_schedule
from queue_runtime.worker._reaper import Reaper
from tests.integration import fault_app
from tests.integration.conftest import PrivateRedis
from tests.integration.workers import Spawner, spawning
from tests.support import free_port, wait_until

pytestmark = [pytest.mark.pg, pytest.mark.redis]
FAST_RETRY = RetryPolicy(max_attempts=3, base_delay=0.01, max_delay=0.05)


def fast(settings: Settings, **changes: Any) -> Settings:
    """Settings tuned for quick tests: short leases, quick polling, fast retries."""
    base = {
        "lease_ttl": 2.0,
        "poll_interval": 0.1,
        "retry": FAST_RETRY,
        "shutdown_grace": 5.0,
        "unknown_job_deadline": 1.0,  # an unknown name is handed back, then dead after 1 s
    }
    return settings.model_copy(update={**base, **changes})


@pytest.fixture
def rt(settings: Settings) -> Iterator[Runtime]:
    fault_app.create_tables(settings.database_url or "", settings.schema_name)
    runtime = configure(fast(settings))
    yield runtime
    runtime.close()


@pytest.fixture
def spawner(tmp_path: Path) -> Iterator[Spawner]:
    yield from spawning(tmp_path)


@pytest.fixture
def start_worker(rt: Runtime) -> Iterator[Callable[..., Worker]]:
    workers: list[Worker] = []

    def start(runtime: Runtime | None = None, **kwargs: Any) -> Worker:
        worker = Worker(runtime or rt, **kwargs).start()
        workers.append(worker)
        return worker

    yield start
    for worker in workers:
        worker.stop()


def executions(rt: Runtime) -> list[tuple[int, int]]:
    query = sql.SQL("SELECT job_id, attempt FROM {}.executions ORDER BY id").format(
        sql.Identifier(rt.settings.schema_name)
    )
    with psycopg.connect(rt.settings.database_url or "") as conn:
        return [(int(a), int(b)) for a, b in conn.execute(query).fetchall()]


def finished(job_id: int) -> bool:
    return get_job(job_id).status() in (JobStatus.SUCCEEDED, JobStatus.DEAD)


def test_jobs_run_once_and_results_are_visible(
    rt: Runtime, start_worker: Callable[..., Worker]
) -> None:
    handles = [fault_app.work.enqueue(n) for n in range(30)]
    start_worker()
    for n, handle in enumerate(handles):
        assert handle.result(timeout=20) == n * 2
    ran = executions(rt)
    assert sorted(job_id for job_id, _ in ran) == sorted(h.id for h in handles)
    assert {attempt for _, attempt in ran} == {1}


def test_a_method_job_runs_on_its_instance_read_back_in_the_worker(
    rt: Runtime, start_worker: Callable[..., Worker]
) -> None:
    handle = fault_app.Shelf(4, "north").restock.enqueue(3)
    assert get_job(handle.id).record().name == "tests.integration.fault_app.Shelf.restock"
    start_worker()
    assert handle.result(timeout=20) == "north#4+3"
    assert [job_id for job_id, _ in executions(rt)] == [handle.id]


def test_a_classmethod_job_runs_on_the_class_it_was_read_from(
    rt: Runtime, start_worker: Callable[..., Worker]
) -> None:
    north = fault_app.NorthWarehouse.recount.enqueue(2)
    base = fault_app.Warehouse.recount.enqueue(5)
    assert get_job(north.id).record().name == "tests.integration.fault_app.Warehouse.recount"
    start_worker()
    assert north.result(timeout=20) == "NorthWarehouse/north+2"  # the subclass, as cls was
    assert base.result(timeout=20) == "Warehouse/any+5"


def test_a_payload_naming_another_class_for_a_classmethod_job_is_dead_lettered(
    rt: Runtime, start_worker: Callable[..., Worker]
) -> None:
    forged = {"cls": {"__qr__": "class", "cls": "tests.integration.fault_app:Ledger"}, "count": 1}
    job_id = rt.store.enqueue(
        NewJob(name=fault_app.Warehouse.recount.name, pool="batch", args=forged)
    )
    start_worker()
    wait_until(lambda: finished(job_id), timeout=20, message="forged class in the DLQ")
    record = get_job(job_id).record()
    assert record.status is JobStatus.DEAD and "invalid payload" in (record.error or "")
    assert "Ledger" in (record.error or "") and executions(rt) == []


def test_failing_job_is_retried_then_dead_lettered(
    rt: Runtime, start_worker: Callable[..., Worker]
) -> None:
    handle = fault_app.poison.enqueue(7)
    start_worker()
    wait_until(lambda: finished(handle.id), timeout=20, message="poison job in the DLQ")
    record = get_job(handle.id).record()
    assert record.status is JobStatus.DEAD
    assert record.attempt == FAST_RETRY.max_attempts
    assert "ValueError: poison 7" in (record.error or "")
    assert [a for _, a in executions(rt)] == [1, 2, 3]
    assert [d.id for d in rt.store.dead_letters()] == [handle.id]


def test_permanent_error_goes_to_the_dlq_at_once(
    rt: Runtime, start_worker: Callable[..., Worker]
) -> None:
    handle = fault_app.refuse.enqueue(1)
    start_worker()
    wait_until(lambda: finished(handle.id), timeout=20, message="refused job in the DLQ")
    record = get_job(handle.id).record()
    assert (record.status, record.attempt) == (JobStatus.DEAD, 1)
    assert "bad input 1" in (record.error or "")


def test_unknown_job_and_invalid_payload_are_dead_lettered_with_the_reason(
    rt: Runtime, start_worker: Callable[..., Worker]
) -> None:
    unknown = rt.store.enqueue(NewJob(name="app.gone_job", pool="batch", args={}))
    invalid = rt.store.enqueue(NewJob(name=fault_app.work.name, pool="batch", args={"n": "x"}))
    start_worker()
    wait_until(lambda: finished(unknown) and finished(invalid), timeout=20, message="DLQ")
    gone, bad = get_job(unknown).record(), get_job(invalid).record()
    assert gone.status is JobStatus.DEAD and "unknown job" in (gone.error or "")
    assert "unknown_job_deadline 1s" in (gone.error or "")
    assert bad.status is JobStatus.DEAD and "invalid payload" in (bad.error or "")
    assert executions(rt) == []


def test_a_worker_only_claims_jobs_of_its_pools(
    rt: Runtime, start_worker: Callable[..., Worker]
) -> None:
    batch = fault_app.work.enqueue(1)
    urgent = fault_app.urgent.enqueue(1)
    start_worker(pools=["transactional"])
    assert urgent.result(timeout=20) == 1001
    assert get_job(batch.id).status() is JobStatus.QUEUED
    start_worker(pools=["batch"])
    assert batch.result(timeout=20) == 2


def test_claim_schedule_weights_high_priority_pools(settings: Settings) -> None:
    schedule = claim_schedule(settings, ["batch", "transactional"])
    assert schedule == ["transactional"] * 4 + ["batch"]


class CountingStore:
    """The real PgJobStore, counting claim calls per pool."""

    def __init__(self, store: Any) -> None:
        self._store = store
        self.claims: dict[str, int] = {}

    def claim(self, pool: str, limit: int, worker_id: str) -> Any:
        self.claims[pool] = self.claims.get(pool, 0) + 1
        return self._store.claim(pool, limit, worker_id)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)


def RuntimeWith(runtime: Runtime, store: Any) -> Runtime:
    """``runtime`` with its job store replaced (the other stores shared)."""
    stores = Stores(store, runtime.gate_store, runtime.inspector, runtime.leases)
    return Runtime(runtime.settings, runtime.registry, stores=stores)


def test_polling_rounds_claim_high_priority_pools_more_often(
    rt: Runtime, start_worker: Callable[..., Worker]
) -> None:
    counting = CountingStore(rt.store)
    start_worker(RuntimeWith(rt, counting))
    wait_until(lambda: counting.claims.get("batch", 0) >= 5, timeout=20, message="5 rounds")
    ratio = counting.claims["transactional"] / counting.claims["batch"]
    assert 3.5 <= ratio <= 4.5, counting.claims


def test_async_jobs_run_on_the_event_loop(rt: Runtime, start_worker: Callable[..., Worker]) -> None:
    handles = [fault_app.async_work.enqueue(n, seconds=0.2) for n in range(20)]
    start_worker(concurrency=20)
    for n, handle in enumerate(handles):
        assert handle.result(timeout=20) == {"value": n * 3, "job_id": handle.id}


def test_async_timeout_fails_the_attempt(rt: Runtime, start_worker: Callable[..., Worker]) -> None:
    handle = fault_app.async_too_slow.enqueue(5.0)
    start_worker()
    wait_until(lambda: finished(handle.id), timeout=20, message="async timeouts to the DLQ")
    record = get_job(handle.id).record()
    assert record.status is JobStatus.DEAD
    assert record.attempt == FAST_RETRY.max_attempts
    assert "timed out after 0.2s" in (record.error or "")


def test_sync_timeout_fails_the_attempt_and_fences_out_the_late_result(
    rt: Runtime, start_worker: Callable[..., Worker]
) -> None:
    configure(rt.settings.model_copy(update={"retry": RetryPolicy(max_attempts=1)}))
    handle = fault_app.too_slow.enqueue(1.0)
    start_worker()
    wait_until(lambda: finished(handle.id), timeout=20, message="timed-out job in the DLQ")
    # The thread finishes its sleep later and records the end; the result is not stored.
    wait_until(lambda: _finished_executions(rt) == 1, timeout=10, message="late finish")
    record = get_job(handle.id).record()
    assert record.status is JobStatus.DEAD and "timed out after 0.3s" in (record.error or "")
    assert record.result is None


def _finished_executions(rt: Runtime) -> int:
    query = sql.SQL("SELECT count(*) FROM {}.executions WHERE finished_at IS NOT NULL").format(
        sql.Identifier(rt.settings.schema_name)
    )
    with psycopg.connect(rt.settings.database_url or "") as conn:
        row = conn.execute(query).fetchone()
    return int(row[0]) if row else 0


def test_per_job_config_overrides_the_retry_policy(settings: Settings) -> None:
    # Config beats code: the worker uses the spec the registry resolves.
    policy = RetryPolicy(max_attempts=2, base_delay=0.01)
    tuned = settings.model_copy(update={"jobs": {fault_app.poison.name: JobConfig(retry=policy)}})
    assert fault_app.poison.spec(tuned).retry == policy


def test_sigterm_lets_the_running_job_finish_and_exits_zero(rt: Runtime, spawner: Spawner) -> None:
    handle = fault_app.work.enqueue(21, seconds=1.5)
    port = free_port()
    proc = spawner.start(rt.settings, "--pool", "batch", "--metrics-port", str(port))
    wait_until(lambda: executions(rt), timeout=20, message="the job to start")
    scraped = wait_until(lambda: _get(f"http://127.0.0.1:{port}/metrics"), timeout=10)
    assert 'claim_latency_seconds_count{pool="batch"}' in str(scraped)
    proc.send_signal(signal.SIGTERM)
    later = fault_app.work.enqueue(1)
    assert proc.wait(timeout=20) == 0, spawner.logs()
    assert get_job(handle.id).status() is JobStatus.SUCCEEDED
    assert handle.result(timeout=1) == 42
    assert get_job(later.id).status() is JobStatus.QUEUED  # not claimed after SIGTERM


def test_reaper_waits_out_a_new_epoch_then_rescues_only_attempts_without_a_lease(
    rt: Runtime,
) -> None:
    now = [0.0]
    leases = rt.leases
    reaper = Reaper(rt.store, leases, ttl=0.2, metrics=WorkerMetrics(), clock=lambda: now[0])
    ids = {fault_app.work.enqueue(1).id, fault_app.work.enqueue(2).id}
    alive, orphan = rt.store.claim("batch", 10, "w-test")
    leases.acquire([alive.token], "w-test", ttl=30)
    wait_until(lambda: len(rt.store.running_tokens(0.2)) == 2, timeout=5, message="old claims")
    assert {alive.id, orphan.id} == ids

    assert reaper.sweep() == 0  # first sight of the epoch: quiet period
    now[0] += 0.3
    assert reaper.sweep() == 1
    assert get_job(orphan.id).status() is JobStatus.RETRYING
    assert get_job(alive.id).status() is JobStatus.RUNNING

    # A flush: the epoch and the live lease vanish together.
    with redis.Redis.from_url(rt.settings.redis_url or "") as client:
        client.delete(f"{rt.settings.redis_prefix}:epoch", leases.lease_key(alive.token))
    assert reaper.sweep() == 0  # new epoch: no rescue although the lease is missing
    leases.heartbeat([alive.token], "w-test", ttl=30)  # the live worker re-asserts
    now[0] += 0.3
    assert reaper.sweep() == 0
    assert get_job(alive.id).status() is JobStatus.RUNNING


def test_redis_outage_pauses_claiming_but_not_running_jobs(
    settings: Settings, private_redis: PrivateRedis, start_worker: Callable[..., Worker]
) -> None:
    rt = configure(fast(settings, redis_url=private_redis.url))
    slow = fault_app.work.enqueue(1, seconds=2.0)
    worker = start_worker(rt)
    wait_until(lambda: executions(rt), timeout=20, message="the slow job to start")
    private_redis.stop()
    wait_until(lambda: worker.paused_for_redis, timeout=10, message="the worker to notice")
    quick = fault_app.work.enqueue(2)
    assert slow.result(timeout=20) == 2  # completed in PostgreSQL while Redis was down
    assert get_job(quick.id).status() is JobStatus.QUEUED
    private_redis.start()
    assert quick.result(timeout=20) == 4
    assert not worker.paused_for_redis


def test_metrics_count_what_the_worker_did(
    rt: Runtime, start_worker: Callable[..., Worker]
) -> None:
    handles = [fault_app.work.enqueue(n) for n in range(5)]
    poison = fault_app.poison.enqueue(1)
    worker = start_worker(pools=["batch"])
    for handle in handles:
        handle.wait(timeout=20)
    wait_until(lambda: finished(poison.id), timeout=20, message="poison in the DLQ")
    m = worker.metrics
    wait_until(lambda: m.value("jobs_completed_total", "batch") == 5, timeout=5, message="acks")
    # The DLQ row is committed before the settler counts it: wait for the count itself.
    wait_until(lambda: m.value("dead_lettered_total", "batch") == 1, timeout=5, message="DLQ count")
    assert m.value("retries_total", "batch") == FAST_RETRY.max_attempts - 1
    assert m.value("claim_latency_seconds_count", "batch") > 0
    assert m.value("consumer_throughput", "batch") == pytest.approx(5 / 60)
    m.observe_stats(rt.store.stats())
    assert m.value("dlq_depth", "batch") == 1
    assert m.value("queue_depth", "batch") == 0


def test_metrics_are_served_over_http(rt: Runtime) -> None:
    metrics = WorkerMetrics()
    metrics.job_completed("batch", 3)
    port = free_port()
    metrics.serve(port, addr="127.0.0.1")
    body = wait_until(lambda: _get(f"http://127.0.0.1:{port}/metrics"), timeout=5)
    assert 'jobs_completed_total{pool="batch"} 3.0' in str(body)


def _get(url: str) -> str | None:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return response.read().decode()
    except OSError:
        return None


def test_notify_wakes_an_idle_worker_long_before_the_poll_interval(
    settings: Settings, start_worker: Callable[..., Worker]
) -> None:
    rt = configure(fast(settings, poll_interval=30.0))
    worker = start_worker(rt)
    wait_until(lambda: worker._parts.listener.connected.is_set(), timeout=10, message="LISTEN")
    started = time.monotonic()
    assert fault_app.work.enqueue(5).result(timeout=10) == 10
    assert time.monotonic() - started < 5.0  # not the 30 s poll


def test_stopping_worker_hands_claimed_unstarted_jobs_back_at_once(rt: Runtime) -> None:
    handles = [fault_app.work.enqueue(n) for n in range(3)]
    worker = Worker(rt, ["batch"])
    claimed = rt.store.claim("batch", 10, worker.worker_id)
    worker.stopping.set()
    worker._parts.dispatcher.dispatch(claimed)
    assert [get_job(h.id).status() for h in handles] == [JobStatus.QUEUED] * 3
    assert rt.leases.alive([c.token for c in claimed]) == [False] * 3
    assert executions(rt) == []
    worker._parts.close()


@pytest.mark.parametrize("how", ["grace_expires", "second_signal"])
def test_jobs_running_past_the_grace_are_handed_back(
    rt: Runtime, spawner: Spawner, how: str
) -> None:
    grace = 0.5 if how == "grace_expires" else 60.0
    settings = rt.settings.model_copy(update={"shutdown_grace": grace})
    handle = fault_app.work.enqueue(1, seconds=60.0)
    proc = spawner.start(settings, "--pool", "batch")
    wait_until(lambda: executions(rt), timeout=20, message="the long job to start")
    proc.send_signal(signal.SIGTERM)
    if how == "second_signal":
        wait_until(lambda: "graceful shutdown" in spawner.logs(), timeout=10, message="1st signal")
        proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=20) == 0, spawner.logs()
    record = get_job(handle.id).record()
    assert record.status is JobStatus.QUEUED  # pending again, to run elsewhere
    assert rt.leases.alive([f"{handle.id}:1"]) == [False]


def _prefetching_worker(
    rt: Runtime, start_worker: Callable[..., Worker], slow_seconds: float, stall: float = 60.0
) -> tuple[Worker, list[int], list[str]]:
    """A worker with both slots busy on slow jobs and quick jobs waiting in its prefetch buffer.

    Returns the worker, the slow job ids and the tokens of the buffered (claimed,
    leased, not started) quick jobs. ``stall``: seconds before a buffer that does
    not move is handed back (long by default: the tests look at the buffer).
    """
    worker = start_worker(pools=["batch"], concurrency=2)
    worker._parts.buffers["batch"].stall = stall
    for handle in [fault_app.work.enqueue(n) for n in range(4)]:  # learn the pool's pace
        handle.wait(timeout=20)
    slow = [fault_app.work.enqueue(n, seconds=slow_seconds).id for n in range(2)]
    wait_until(lambda: len(executions(rt)) == 6, timeout=20, message="both slow jobs to start")
    for n in range(10):
        fault_app.work.enqueue(n)
    buffer = worker._parts.buffers["batch"]
    wait_until(lambda: len(buffer) > 0, timeout=10, message="quick jobs to be prefetched")
    return worker, slow, buffer.tokens()


def test_prefetched_jobs_hold_leases_renewed_by_the_heartbeat_and_run_once(
    rt: Runtime, start_worker: Callable[..., Worker]
) -> None:
    lease_ttl = rt.settings.lease_ttl
    worker, slow, tokens = _prefetching_worker(rt, start_worker, slow_seconds=lease_ttl + 1.5)
    ids = [int(token.split(":")[0]) for token in tokens]
    assert {get_job(i).status() for i in ids} == {JobStatus.RUNNING}  # claimed, not started
    assert rt.leases.alive(tokens) == [True] * len(tokens)
    assert not {job_id for job_id, _ in executions(rt)} & set(ids)
    time.sleep(lease_ttl + 0.5)  # past the ttl they were leased with, still unstarted
    assert rt.leases.alive(tokens) == [True] * len(tokens)
    wait_until(lambda: all(finished(i) for i in [*slow, *ids]), timeout=20, message="all jobs")
    ran = executions(rt)
    assert sorted(job_id for job_id, _ in ran) == sorted({job_id for job_id, _ in ran})
    assert {attempt for _, attempt in ran} == {1}  # nothing rescued, nothing run twice
    assert worker.metrics.value("lost_leases_total", "batch") == 0


def test_stopping_worker_returns_prefetched_jobs_at_once(
    rt: Runtime, start_worker: Callable[..., Worker]
) -> None:
    worker, slow, tokens = _prefetching_worker(rt, start_worker, slow_seconds=3.0)
    ids = [int(token.split(":")[0]) for token in tokens]
    stopping = threading.Thread(target=worker.stop)
    stopping.start()
    # Back to pending while the slow jobs are still running (not after the grace).
    wait_until(
        lambda: {get_job(i).status() for i in ids} == {JobStatus.QUEUED},
        timeout=1.5,
        message="prefetched jobs handed back",
    )
    assert rt.leases.alive(tokens) == [False] * len(tokens)
    assert {get_job(i).status() for i in slow} == {JobStatus.RUNNING}
    stopping.join(timeout=20)
    assert {get_job(i).status() for i in slow} == {JobStatus.SUCCEEDED}
    assert not {job_id for job_id, _ in executions(rt)} & set(ids)  # never started here
    record = get_job(ids[0]).record()
    # defer: the attempt is not consumed (max_attempts grows by one instead)
    assert (record.attempt, record.max_attempts) == (1, FAST_RETRY.max_attempts + 1)


def test_a_job_admitted_while_shutdown_begins_is_handed_back_not_started(rt: Runtime) -> None:
    handle = fault_app.work.enqueue(1)
    worker = Worker(rt, ["batch"])
    (job,) = rt.store.claim("batch", 1, worker.worker_id)
    rt.leases.acquire([job.token], worker.worker_id, ttl=30)
    worker.stopping.set()  # between the executor's take() and the attempt joining Inflight
    assert worker._parts.dispatcher._admit(job) is False
    worker._parts.dispatcher.seal()
    assert len(worker._parts.inflight) == 0
    assert get_job(handle.id).status() is JobStatus.QUEUED
    assert rt.leases.alive([job.token]) == [False]
    assert executions(rt) == []
    worker._parts.close()


def test_prefetched_jobs_stuck_behind_slow_ones_go_back_for_other_workers(
    rt: Runtime, start_worker: Callable[..., Worker]
) -> None:
    worker, slow, tokens = _prefetching_worker(rt, start_worker, slow_seconds=8.0, stall=1.0)
    ids = [int(token.split(":")[0]) for token in tokens]
    wait_until(
        lambda: {get_job(i).status() for i in ids} == {JobStatus.QUEUED},
        timeout=4,
        message="the stalled buffer handed back",
    )
    assert rt.leases.alive(tokens) == [False] * len(tokens)
    assert worker._parts.buffers["batch"].target() == 0  # the wait counted: no prefetch now
    other = start_worker(pools=["batch"], concurrency=2)
    wait_until(lambda: all(finished(i) for i in ids), timeout=10, message="another worker")
    assert {get_job(i).status() for i in slow} == {JobStatus.RUNNING}  # still on the first
    wait_until(
        lambda: other.metrics.value("jobs_completed_total", "batch") >= len(ids),
        timeout=5,
        message="the other worker's acks",
    )


def test_the_reaper_applies_history_retention_when_due(rt: Runtime) -> None:
    now = [0.0]
    reaper = Reaper(
        rt.store,
        rt.leases,
        ttl=0.2,
        metrics=WorkerMetrics(),
        clock=lambda: now[0],
        retention_seconds=0.0,
        purge_every=60.0,
    )
    handle = fault_app.work.enqueue(1)
    (claimed,) = rt.store.claim("batch", 10, "w-test")
    rt.store.complete_many([Completion(claimed.id, claimed.attempt, result=1)])
    assert get_job(handle.id).status() is JobStatus.SUCCEEDED

    assert reaper.retain() == 1  # due at once: retention 0 s keeps nothing finished
    assert rt.store.get(handle.id) is None  # gone from history
    second = fault_app.work.enqueue(2)
    (claimed,) = rt.store.claim("batch", 10, "w-test")
    rt.store.complete_many([Completion(claimed.id, claimed.attempt, result=2)])
    assert reaper.retain() == 0  # not due again before purge_every
    assert get_job(second.id).status() is JobStatus.SUCCEEDED
    now[0] += 61
    assert reaper.retain() == 1
