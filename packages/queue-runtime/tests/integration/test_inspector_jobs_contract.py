"""The Inspector's job listing, job detail and live workers: PostgreSQL + Redis and memory alike.

One test body, a parametrised backend (dramatiq's habit): ``PgInspector`` on a
fresh migrated schema with the presence records in the real Redis (a unique
prefix per test), and ``MemoryInspector`` over ``MemoryJobStore`` /
``MemoryLeaseStore``. No sleeps: expiry is awaited with a deadline.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from enum import StrEnum

import pytest
import redis

from queue_runtime.config import Settings
from queue_runtime.pg.connect import open_pool
from queue_runtime.pg.inspect import PgInspector
from queue_runtime.pg.store import PgJobStore
from queue_runtime.redis import RedisLeaseStore
from queue_runtime.store import (
    Completion,
    Failure,
    Inspector,
    JobQuery,
    JobStatus,
    JobStore,
    LeaseStore,
    NewJob,
    WorkerInfo,
)
from queue_runtime.testing import (
    MemoryInspector,
    MemoryJobStore,
    MemoryLeaseStore,
    wait_until,
)


class Backend(StrEnum):
    PG = "pg"
    MEMORY = "memory"


@dataclass
class Inspected:
    store: JobStore
    inspector: Inspector
    leases: LeaseStore


@pytest.fixture
def pg_inspected(settings: Settings, redis_client: redis.Redis) -> Iterator[Inspected]:
    pool = open_pool(settings, max_size=4)
    leases = RedisLeaseStore(redis_client, settings.redis_prefix)
    try:
        inspector = PgInspector(pool, settings.schema_name, lambda: leases)
        yield Inspected(PgJobStore(pool, settings), inspector, leases)
    finally:
        pool.close()  # the settings fixture deletes the Redis prefix


@pytest.fixture(params=list(Backend))
def inspected(request: pytest.FixtureRequest) -> Inspected:
    if request.param is Backend.MEMORY:
        jobs, leases = MemoryJobStore(list(Settings().pools)), MemoryLeaseStore()
        return Inspected(jobs, MemoryInspector(jobs, leases), leases)
    found: Inspected = request.getfixturevalue("pg_inspected")
    return found


def later(seconds: float) -> datetime:
    return datetime.now(UTC) + timedelta(seconds=seconds)


def one(store: JobStore, name: str = "app.work", pool: str = "batch", **kw: object) -> int:
    return store.enqueue(NewJob(name=name, pool=pool, args={"n": 1}, **kw))  # type: ignore[arg-type]


def claimed(store: JobStore, pool: str = "batch") -> tuple[int, int]:
    (job,) = store.claim(pool, 1, "w-test")
    return job.id, job.attempt


def every_state(store: JobStore) -> dict[JobStatus, int]:
    """One job in each state; returns the id per state (queued: a due one)."""
    ids: dict[JobStatus, int] = {}
    one(store, run_at=later(3600))  # scheduled: queued, not due (claims skip it)
    for state in (JobStatus.SUCCEEDED, JobStatus.DEAD, JobStatus.RETRYING, JobStatus.RUNNING):
        one(store)
        job_id, attempt = claimed(store)
        if state is JobStatus.SUCCEEDED:
            store.complete_many([Completion(job_id, attempt, result={"ok": True})])
        elif state is JobStatus.DEAD:
            trace = 'Traceback (most recent call last):\n  File "app.py"\nValueError: boom'
            store.fail(Failure(job_id, attempt, "ValueError: boom", trace, retry_at=None))
        elif state is JobStatus.RETRYING:
            store.fail(Failure(job_id, attempt, "OSError: flaky", retry_at=later(3600)))
        ids[state] = job_id
    cancelled = one(store, name="app.other", pool="transactional")
    assert store.cancel(cancelled)
    ids[JobStatus.CANCELLED] = cancelled
    ids[JobStatus.QUEUED] = one(store, name="app.other", pool="transactional")
    return ids


def test_the_state_filter_finds_each_state(inspected: Inspected) -> None:
    ids = every_state(inspected.store)
    for state, job_id in ids.items():
        page = inspected.inspector.list_jobs(JobQuery(state=state))
        found = [j.id for j in page.jobs]
        if state is JobStatus.QUEUED:
            assert job_id in found and len(found) == 2  # the due one and the scheduled one
        else:
            assert found == [job_id], state
        assert all(j.status is state for j in page.jobs)


def test_the_listing_is_newest_first_with_filters(inspected: Inspected) -> None:
    ids = every_state(inspected.store)
    page = inspected.inspector.list_jobs(JobQuery())
    listed = [j.id for j in page.jobs]
    assert listed == sorted(listed, reverse=True) and len(listed) == 7
    assert page.next_after is None
    other = inspected.inspector.list_jobs(JobQuery(job="app.other"))
    assert {j.id for j in other.jobs} == {ids[JobStatus.CANCELLED], ids[JobStatus.QUEUED]}
    pooled = inspected.inspector.list_jobs(JobQuery(pool="batch", state=JobStatus.DEAD))
    (dead,) = pooled.jobs
    assert dead.error == "ValueError: boom" and dead.finished_at is not None
    running = inspected.inspector.list_jobs(JobQuery(state=JobStatus.RUNNING)).jobs[0]
    assert running.started_at is not None and running.finished_at is None


def test_keyset_pages_return_every_job_exactly_once(inspected: Inspected) -> None:
    made = [one(inspected.store, name=f"app.j{i % 3}") for i in range(23)]
    for _ in range(6):  # some of them finished: the pages span both tables
        job_id, attempt = claimed(inspected.store)
        inspected.store.complete_many([Completion(job_id, attempt)])
    seen: list[int] = []
    after: int | None = None
    for _ in range(10):
        page = inspected.inspector.list_jobs(JobQuery(after=after, limit=5))
        assert len(page.jobs) <= 5
        seen += [j.id for j in page.jobs]
        if page.next_after is None:
            break
        after = page.next_after
    assert seen == sorted(made, reverse=True)
    filtered: list[int] = []
    after = None
    while True:
        page = inspected.inspector.list_jobs(JobQuery(job="app.j1", after=after, limit=2))
        filtered += [j.id for j in page.jobs]
        if page.next_after is None:
            break
        after = page.next_after
    assert filtered == [i for i in sorted(made, reverse=True) if (made.index(i) % 3) == 1]


def test_job_detail_of_a_dead_job_has_its_errors_and_traceback(inspected: Inspected) -> None:
    store = inspected.store
    job_id = one(store, idempotency_key="order-7", max_attempts=2)
    first = claimed(store)
    store.fail(Failure(*first, "OSError: flaky", retry_at=datetime.now(UTC)))
    second = claimed(store)
    store.fail(Failure(*second, "ValueError: boom", "Traceback ...\nValueError: boom", None))
    detail = inspected.inspector.job_detail(job_id)
    assert detail is not None
    assert (detail.status, detail.args, detail.attempt) == (JobStatus.DEAD, {"n": 1}, 2)
    assert detail.idempotency_key == "order-7" and detail.pool == "batch"
    assert detail.finished_at is not None and detail.enqueued_at <= detail.finished_at
    assert [e.error for e in detail.errors] == ["OSError: flaky", "ValueError: boom"]
    assert [e.attempt for e in detail.errors] == [1, 2]
    assert detail.errors[0].traceback is None
    assert detail.errors[1].traceback == "Traceback ...\nValueError: boom"
    assert all(e.at is not None and e.worker == "w-test" for e in detail.errors)


def test_job_detail_of_running_and_unknown_and_replayed_jobs(inspected: Inspected) -> None:
    store = inspected.store
    job_id = one(store)
    claimed(store)
    running = inspected.inspector.job_detail(job_id)
    assert running is not None and running.status is JobStatus.RUNNING
    assert running.started_at is not None and running.worker == "w-test"
    assert inspected.inspector.job_detail(987_654) is None
    dead_id = one(store)
    store.fail(Failure(*claimed(store), "boom", retry_at=None))
    (new_id,) = store.replay([dead_id])
    replayed = inspected.inspector.job_detail(dead_id)
    assert replayed is not None and replayed.id == new_id and replayed.status is JobStatus.QUEUED


def worker(worker_id: str, running: int = 0) -> WorkerInfo:
    now = datetime.now(UTC).replace(microsecond=0)
    return WorkerInfo(worker_id, "host-a", 4242, ("batch", "transactional"), running, now, now)


def test_workers_are_listed_until_retired_or_expired(inspected: Inspected) -> None:
    leases = inspected.leases
    leases.announce(worker("w-1", running=3), ttl=30)
    leases.announce(worker("w-2"), ttl=30)
    leases.announce(worker("w-3"), ttl=0.3)
    listed = inspected.inspector.workers()
    assert [w.id for w in listed] == ["w-1", "w-2", "w-3"]
    first = listed[0]
    assert (first.host, first.pid, first.pools, first.running) == (
        "host-a",
        4242,
        ("batch", "transactional"),
        3,
    )
    assert abs((first.seen_at - datetime.now(UTC)).total_seconds()) < 5
    leases.retire("w-2")
    wait_until(
        lambda: [w.id for w in inspected.inspector.workers()] == ["w-1"],
        timeout=10,
        message="w-2 retired and w-3 expired",
    )
