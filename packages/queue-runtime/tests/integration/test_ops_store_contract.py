"""The JobStore contract for cancel and pause: one test body, PostgreSQL and memory.

What operators do (``queue-runtime cancel|pause|resume``) and what workers
poll (``control``). Times in the past make jobs due at once, times in the
future keep them scheduled: no sleeps.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from queue_runtime.config import Settings
from queue_runtime.pg.connect import open_pool
from queue_runtime.pg.store import PgJobStore
from queue_runtime.store import Cancellation, Completion, Failure, JobStatus, JobStore, NewJob
from queue_runtime.testing import MemoryJobStore


@pytest.fixture(params=["pg", "memory"])
def store(request: pytest.FixtureRequest) -> Iterator[JobStore]:
    if request.param == "memory":
        yield MemoryJobStore(pools=list(Settings().pools))
        return
    settings: Settings = request.getfixturevalue("settings")
    pool = open_pool(settings, max_size=4)
    try:
        yield PgJobStore(pool, settings)
    finally:
        pool.close()


def new(n: int = 0, **fields: Any) -> NewJob:
    return NewJob(**{"name": "app.jobs.work", "pool": "batch", "args": {"n": n}, **fields})


def later(seconds: float) -> datetime:
    return datetime.now(UTC) + timedelta(seconds=seconds)


def status(store: JobStore, job_id: int) -> JobStatus:
    found = store.get(job_id)
    assert found is not None, f"job {job_id} vanished"
    return found.status


def test_queued_and_scheduled_jobs_are_cancelled_and_never_claimed(store: JobStore) -> None:
    queued, scheduled = store.enqueue(new(1)), store.enqueue(new(2, run_at=later(3600)))
    assert store.cancel_job(queued, "ops@host") is Cancellation.CANCELLED
    assert store.cancel_job(scheduled) is Cancellation.CANCELLED
    assert store.claim("batch", 10, "w1") == []
    record = store.get(queued)
    assert record is not None
    assert (record.status, record.error, record.args) == (
        JobStatus.CANCELLED,
        "cancelled by ops@host",
        {"n": 1},
    )
    assert status(store, scheduled) is JobStatus.CANCELLED


def test_a_retrying_job_is_cancelled_before_its_next_attempt(store: JobStore) -> None:
    job_id = store.enqueue(new(1))
    [c] = store.claim("batch", 1, "w1")
    store.fail(Failure(c.id, c.attempt, "boom", retry_at=later(3600)))
    assert status(store, job_id) is JobStatus.RETRYING
    assert store.cancel_job(job_id) is Cancellation.CANCELLED
    record = store.get(job_id)
    assert record is not None and record.status is JobStatus.CANCELLED
    assert [entry["error"] for entry in record.history] == ["boom"]  # the history stays


def test_a_running_job_gets_a_request_its_worker_reads(store: JobStore) -> None:
    job_id, other = store.enqueue(new(1)), store.enqueue(new(2))
    claimed = store.claim("batch", 2, "w1")
    assert store.control([c.id for c in claimed]).cancel_requested == frozenset()
    assert store.cancel_job(job_id) is Cancellation.REQUESTED
    assert store.cancel_job(job_id) is Cancellation.REQUESTED  # asking twice: the same request
    assert status(store, job_id) is JobStatus.RUNNING  # it runs until it stops itself
    assert store.control([c.id for c in claimed]).cancel_requested == {job_id}
    assert store.control([other]).cancel_requested == frozenset()  # only the ids asked about


def test_an_attempt_that_stops_ends_cancelled_once_and_fenced(store: JobStore) -> None:
    job_id = store.enqueue(new(1))
    [c] = store.claim("batch", 1, "w1")
    store.cancel_job(job_id)
    assert store.cancel_attempt(c.id, c.attempt + 1, "stale token") is False
    assert store.cancel_attempt(c.id, c.attempt, "stopped on its cancel request") is True
    assert store.cancel_attempt(c.id, c.attempt, "again") is False
    record = store.get(job_id)
    assert record is not None
    assert (record.status, record.error) == (JobStatus.CANCELLED, "stopped on its cancel request")
    assert store.control([job_id]).cancel_requested == frozenset()  # the request is consumed


def test_a_running_job_that_ignores_the_request_keeps_its_result(store: JobStore) -> None:
    job_id = store.enqueue(new(1))
    [c] = store.claim("batch", 1, "w1")
    assert store.cancel_job(job_id) is Cancellation.REQUESTED
    assert store.complete_many([Completion(c.id, c.attempt, 42)]) == 1
    record = store.get(job_id)
    assert record is not None and (record.status, record.result) == (JobStatus.SUCCEEDED, 42)
    assert store.cancel_job(job_id) is Cancellation.FINISHED


def test_finished_and_unknown_jobs_say_so(store: JobStore) -> None:
    done, dead = store.enqueue(new(1)), store.enqueue(new(2, max_attempts=1))
    first, second = store.claim("batch", 2, "w1")
    store.complete_many([Completion(first.id, first.attempt, None)])
    store.fail(Failure(second.id, second.attempt, "boom"))
    assert store.cancel_job(done) is Cancellation.FINISHED
    assert store.cancel_job(dead) is Cancellation.FINISHED
    assert status(store, done) is JobStatus.SUCCEEDED and status(store, dead) is JobStatus.DEAD
    assert store.cancel_job(10_000_000) is Cancellation.UNKNOWN
    cancelled = store.enqueue(new(3))
    store.cancel_job(cancelled)
    assert store.cancel_job(cancelled) is Cancellation.FINISHED


def test_a_replayed_dead_job_is_cancelled_as_its_replay(store: JobStore) -> None:
    dead = store.enqueue(new(1, max_attempts=1))
    [c] = store.claim("batch", 1, "w1")
    store.fail(Failure(c.id, c.attempt, "boom"))
    [replay] = store.replay([dead])
    assert store.cancel_job(dead) is Cancellation.CANCELLED
    assert status(store, replay) is JobStatus.CANCELLED


def test_pause_and_resume_are_idempotent_and_shown_in_stats(store: JobStore) -> None:
    assert store.control([]).paused == frozenset()
    assert store.pause("batch", "ops@host") is True
    assert store.pause("batch") is False
    assert store.control([]).paused == {"batch"}
    paused = {s.pool: s.paused for s in store.stats()}
    assert paused["batch"] is True and paused["transactional"] is False
    assert store.resume("batch") is True
    assert store.resume("batch") is False
    assert store.control([]).paused == frozenset()
    assert not any(s.paused for s in store.stats())
