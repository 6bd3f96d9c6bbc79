"""The JobStore contract: every implementation must pass this suite (after River).

One test body, a parametrised ``store`` fixture (dramatiq's habit): the real
PostgreSQL (one fresh schema per test) and the in-memory store of
``queue_runtime.testing``. Tests of what only PostgreSQL has (row locks,
NOTIFY, lost connections, an unmigrated schema) take ``pg_store`` instead, and
say why. Times in the past make jobs due at once; times in the future keep
them waiting: no sleeps.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from typing import Any

import psycopg
import pytest
from psycopg import sql

from queue_runtime.config import Settings
from queue_runtime.errors import KeyReused, SchemaNotMigrated
from queue_runtime.pg.connect import channel, open_pool
from queue_runtime.pg.store import PgJobStore
from queue_runtime.store import (
    Completion,
    EnqueuedKey,
    Failure,
    JobStatus,
    JobStore,
    NewJob,
    args_digest,
)
from queue_runtime.testing import MemoryJobStore
from tests.support import wait_until


class Backend(StrEnum):
    PG = "pg"
    MEMORY = "memory"


@pytest.fixture
def pg_store(settings: Settings) -> Iterator[PgJobStore]:
    """The PostgreSQL store on a fresh migrated schema."""
    store = PgJobStore(open_pool(settings, max_size=8), settings)
    try:
        yield store
    finally:
        store.close()  # the sync pool and every loop's async pool


@pytest.fixture(params=list(Backend))
def store(request: pytest.FixtureRequest) -> Iterator[JobStore]:
    """Every JobStore implementation: PostgreSQL and memory."""
    if request.param is Backend.MEMORY:
        yield MemoryJobStore(pools=list(Settings().pools))
        return
    yield request.getfixturevalue("pg_store")


def ago(seconds: float) -> datetime:
    return datetime.now(UTC) - timedelta(seconds=seconds)


def later(seconds: float) -> datetime:
    return datetime.now(UTC) + timedelta(seconds=seconds)


def new(n: int = 0, **fields: Any) -> NewJob:
    return NewJob(**{"name": "app.jobs.work", "pool": "batch", "args": {"n": n}, **fields})


def status(store: JobStore, job_id: int) -> JobStatus:
    found = store.get(job_id)
    assert found is not None, f"job {job_id} vanished"
    return found.status


def test_implements_every_operation_of_the_seam(store: JobStore) -> None:
    operations = {m for m, v in vars(JobStore).items() if callable(v) and not m.startswith("_")}
    operations.discard("close")  # lifecycle, not a domain operation (checked just below)
    assert len(operations) == 28  # + cancel_job, cancel_attempt, pause, resume, control
    # (and enqueue_many_returning, enqueued_key, switch_periodic, disabled_periodic,
    # and the async twins aenqueue_returning and aget)
    assert callable(getattr(store, "close", None))
    assert all(callable(getattr(store, op, None)) for op in operations)


def test_switch_periodic_records_only_changes_and_lists_what_is_off(store: JobStore) -> None:
    assert store.disabled_periodic() == frozenset()
    assert store.switch_periodic("app.jobs.digest", False, "ann", "maintenance")
    assert not store.switch_periodic("app.jobs.digest", False, "ann", "again")  # already off
    assert store.switch_periodic("app.jobs.report", False, None, "noisy")
    assert store.disabled_periodic() == frozenset({"app.jobs.digest", "app.jobs.report"})
    assert store.switch_periodic("app.jobs.digest", True, "ben", "done")
    assert not store.switch_periodic("app.jobs.digest", True, "ben", "done")  # already on
    assert store.disabled_periodic() == frozenset({"app.jobs.report"})


# -- enqueue -------------------------------------------------------------------


def test_enqueue_stores_a_queued_job(store: JobStore) -> None:
    job_id = store.enqueue(new(7, tenant="acme", max_attempts=3))
    found = store.get(job_id)
    assert found is not None
    assert (found.status, found.args, found.attempt, found.max_attempts) == (
        JobStatus.QUEUED,
        {"n": 7},
        0,
        3,
    )
    assert found.tenant == "acme" and found.pool == "batch" and found.name == "app.jobs.work"


# PostgreSQL only: NOTIFY is how its workers wake up (memory has no listeners).
def test_enqueue_many_keeps_order_and_notifies_once_per_pool(
    pg_store: PgJobStore, settings: Settings
) -> None:
    store = pg_store
    with psycopg.connect(settings.database_url or "", autocommit=True) as listener:
        listener.execute(sql.SQL("LISTEN {}").format(sql.Identifier(channel(settings))))
        jobs = [new(i, pool="batch" if i % 2 else "transactional") for i in range(10)]
        ids = store.enqueue_many(jobs)
        notes = list(listener.notifies(timeout=1.0))
    assert len(ids) == len(set(ids)) == 10
    assert [store.get(i).args["n"] for i in ids] == list(range(10))  # type: ignore[union-attr]
    assert sorted(n.payload for n in notes) == ["batch", "transactional"]


def test_enqueue_many_keeps_order(store: JobStore) -> None:
    jobs = [new(i, pool="batch" if i % 2 else "transactional") for i in range(10)]
    ids = store.enqueue_many(jobs)
    assert len(ids) == len(set(ids)) == 10
    assert [store.get(i).args["n"] for i in ids] == list(range(10))  # type: ignore[union-attr]


def test_enqueue_many_of_nothing_is_nothing(store: JobStore) -> None:
    assert store.enqueue_many([]) == []


# -- claim ---------------------------------------------------------------------


def test_claim_orders_by_priority_then_run_at(store: JobStore) -> None:
    # Due jobs in the order they became due; a past run_at is the enqueue (see below).
    low_old = store.enqueue(new(1, priority=0))
    high_old = store.enqueue(new(3, priority=5))
    high_new = store.enqueue(new(2, priority=5))
    low_new = store.enqueue(new(4, priority=0))
    claimed = store.claim("batch", 10, "w1")
    assert [c.id for c in claimed] == [high_old, high_new, low_old, low_new]
    assert all(c.attempt == 1 for c in claimed)
    assert status(store, low_new) is JobStatus.RUNNING


def test_a_run_at_in_the_past_never_jumps_the_queue(store: JobStore) -> None:
    """Issue 22 item 9: a run_at 100 years back is due now, behind the jobs already waiting,
    by every enqueue path (single, keyed, COPY batch, keyed batch)."""
    ancient = datetime.now(UTC) - timedelta(days=36_525)
    waiting = store.enqueue(new(0))
    late = [
        store.enqueue(new(1, run_at=ancient)),
        store.enqueue(new(2, run_at=ancient, idempotency_key="k-past-1")),
        *store.enqueue_many([new(3, run_at=ancient)]),
        *store.enqueue_many([new(4, run_at=ancient, idempotency_key="k-past-2")]),
    ]
    claimed = store.claim("batch", 10, "w1")
    assert [c.id for c in claimed] == [waiting, *late]
    assert all(c.due is not None and c.due >= claimed[0].enqueued_at.timestamp() for c in claimed)


def test_claim_respects_limit_pool_and_run_at(store: JobStore) -> None:
    due = [store.enqueue(new(i)) for i in range(3)]
    store.enqueue(new(9, run_at=later(3600)))
    store.enqueue(new(8, pool="transactional"))
    first = store.claim("batch", 2, "w1")
    rest = store.claim("batch", 10, "w1")
    assert len(first) == 2
    assert sorted(c.id for c in first + rest) == due


# PostgreSQL only: row locks of another transaction (memory has one lock, no rows to lock).
def test_skip_locked_leaves_locked_rows_to_others(pg_store: PgJobStore, settings: Settings) -> None:
    store = pg_store
    first, second = store.enqueue(new(1, run_at=ago(10))), store.enqueue(new(2))
    table = sql.SQL("{}.jobs").format(sql.Identifier(settings.schema_name))
    with psycopg.connect(settings.database_url or "") as holder:
        holder.execute(sql.SQL("SELECT 1 FROM {} WHERE id = %s FOR UPDATE").format(table), (first,))
        assert [c.id for c in store.claim("batch", 10, "w2")] == [second]
    assert [c.id for c in store.claim("batch", 10, "w3")] == [first]


def test_concurrent_claimers_never_share_a_job(store: JobStore) -> None:
    ids = set(store.enqueue_many([new(i) for i in range(300)]))
    seen: list[list[int]] = [[] for _ in range(4)]
    start = threading.Barrier(4)

    def drain(slot: int) -> None:
        start.wait(timeout=10)
        while batch := store.claim("batch", 7, f"w{slot}"):
            seen[slot].extend(c.id for c in batch)

    threads = [threading.Thread(target=drain, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    every = [job_id for part in seen for job_id in part]
    assert len(every) == len(set(every)) == 300 and set(every) == ids
    assert sum(1 for part in seen if part) >= 2  # the claimers really ran side by side


# -- completion and fencing ----------------------------------------------------


def test_complete_many_moves_jobs_to_history_with_results(store: JobStore) -> None:
    ids = store.enqueue_many([new(i) for i in range(3)])
    claimed = store.claim("batch", 10, "w1")
    done = [Completion(c.id, c.attempt, {"double": c.args["n"] * 2}) for c in claimed]
    assert store.complete_many(done) == 3
    records = [store.get(i) for i in ids]
    assert [r.status for r in records if r] == [JobStatus.SUCCEEDED] * 3
    assert [r.result for r in records if r] == [{"double": 0}, {"double": 2}, {"double": 4}]
    assert store.claim("batch", 10, "w1") == []


def test_stale_token_cannot_complete_fail_or_defer(store: JobStore) -> None:
    job_id = store.enqueue(new(1))
    [first] = store.claim("batch", 1, "w1")
    assert store.rescue([(job_id, first.attempt)]) == 1  # w1 lost its lease
    [second] = store.claim("batch", 1, "w2")
    assert second.attempt == first.attempt + 1

    assert store.complete_many([Completion(job_id, first.attempt, "stale")]) == 0
    assert store.defer(job_id, first.attempt, later(60)) is False
    assert store.fail(Failure(job_id, first.attempt, "stale error")) is JobStatus.RUNNING
    assert store.rescue([(job_id, first.attempt)]) == 0
    assert status(store, job_id) is JobStatus.RUNNING

    assert store.complete_many([Completion(job_id, second.attempt, "fresh")]) == 1
    assert store.get(job_id).result == "fresh"  # type: ignore[union-attr]


def test_fail_with_retry_time_goes_back_to_the_queue_later(store: JobStore) -> None:
    job_id = store.enqueue(new(1))
    [c] = store.claim("batch", 1, "w1")
    assert store.fail(Failure(c.id, c.attempt, "boom", retry_at=later(3600))) is JobStatus.RETRYING
    record = store.get(job_id)
    assert record is not None and record.status is JobStatus.RETRYING
    assert [(h["attempt"], h["error"], h["worker"]) for h in record.history] == [(1, "boom", "w1")]
    assert store.claim("batch", 1, "w1") == []  # not due yet


def test_retry_when_due_is_claimed_with_the_next_attempt(store: JobStore) -> None:
    store.enqueue(new(1))
    [c] = store.claim("batch", 1, "w1")
    store.fail(Failure(c.id, c.attempt, "boom", retry_at=ago(1)))
    [again] = store.claim("batch", 1, "w2")
    assert (again.id, again.attempt) == (c.id, 2)


def test_fail_without_retry_time_dead_letters_the_job(store: JobStore) -> None:
    job_id = store.enqueue(new(5, max_attempts=1))
    [c] = store.claim("batch", 1, "w1")
    assert store.fail(Failure(c.id, c.attempt, "ValueError: bad", traceback="Traceback...")) is (
        JobStatus.DEAD
    )
    [dead] = store.dead_letters()
    assert (dead.id, dead.status, dead.args, dead.error) == (
        job_id,
        JobStatus.DEAD,
        {"n": 5},
        "ValueError: bad",
    )
    assert store.claim("batch", 1, "w1") == []


def test_defer_does_not_consume_an_attempt(store: JobStore) -> None:
    job_id = store.enqueue(new(1, max_attempts=2))
    [c] = store.claim("batch", 1, "w1")
    assert store.defer(c.id, c.attempt, later(3600)) is True
    record = store.get(job_id)
    assert record is not None and record.status is JobStatus.QUEUED
    assert record.max_attempts - record.attempt == 2  # still two attempts to go
    assert store.claim("batch", 1, "w1") == []


def test_an_unknown_name_handed_back_keeps_its_first_time_and_its_attempts(
    store: JobStore,
) -> None:
    """Issue 22 item 13: ``defer(unknown=True)`` records the first hand-back; claims report
    how long ago it was (``unknown_for``); no hand-back consumes an attempt."""
    job_id = store.enqueue(new(1))
    [first] = store.claim("batch", 1, "w1")
    assert first.unknown_for is None
    assert store.defer(first.id, first.attempt, ago(1), unknown=True) is True
    [second] = store.claim("batch", 1, "w2")
    assert second.id == job_id and second.unknown_for is not None
    assert 0 <= second.unknown_for < 60
    store.defer(second.id, second.attempt, ago(1), unknown=True)
    [third] = store.claim("batch", 1, "w1")
    assert third.unknown_for is not None and third.unknown_for >= second.unknown_for  # not reset
    store.defer(third.id, third.attempt, ago(1))  # any other deferral keeps it too
    [fourth] = store.claim("batch", 1, "w1")
    assert fourth.unknown_for is not None and fourth.unknown_for >= third.unknown_for
    assert fourth.max_attempts - fourth.attempt == first.max_attempts - 1  # 3 deferrals: 0 spent


# -- rescue --------------------------------------------------------------------


def test_running_tokens_and_rescue(store: JobStore) -> None:
    store.enqueue_many([new(1), new(2)])
    claimed = store.claim("batch", 2, "w1")
    tokens = sorted((c.id, c.attempt) for c in claimed)
    assert sorted(store.running_tokens(older_than_seconds=0)) == tokens
    assert store.running_tokens(older_than_seconds=3600) == []
    assert store.rescue(tokens) == 2
    assert store.rescue(tokens) == 0  # idempotent: several reapers are harmless
    again = store.claim("batch", 2, "w2")
    assert sorted((c.id, c.attempt) for c in again) == [(i, 2) for i, _ in tokens]


def test_rescue_on_the_last_attempt_dead_letters(store: JobStore) -> None:
    job_id = store.enqueue(new(1, max_attempts=1))
    [c] = store.claim("batch", 1, "w1")
    assert store.rescue([(c.id, c.attempt)]) == 1
    record = store.get(job_id)
    assert record is not None and record.status is JobStatus.DEAD
    assert record.error == "lease lost on the last attempt"


# -- dead-letter queue ---------------------------------------------------------


def _dead(store: JobStore, n: int, **fields: Any) -> int:
    job_id = store.enqueue(new(n, max_attempts=1, **fields))
    [c] = store.claim("batch", 1, "w1")
    store.fail(Failure(c.id, c.attempt, f"error {n}"))
    return job_id


def test_dead_letters_filter_by_name_newest_first(store: JobStore) -> None:
    a = _dead(store, 1)
    b = _dead(store, 2, name="app.other")
    c = _dead(store, 3)
    assert [r.id for r in store.dead_letters()] == [c, b, a]
    assert [r.id for r in store.dead_letters(name="app.other")] == [b]
    assert [r.id for r in store.dead_letters(limit=1)] == [c]


def test_replay_requeues_as_a_new_job_and_handles_follow(store: JobStore) -> None:
    old = _dead(store, 4, idempotency_key="order-4")
    [new_id] = store.replay([old])
    assert new_id != old and store.dead_letters() == []
    follow = store.get(old)
    assert follow is not None and (follow.id, follow.status) == (new_id, JobStatus.QUEUED)
    assert follow.args == {"n": 4} and follow.idempotency_key == "order-4"
    assert [h["error"] for h in follow.history] == ["error 4"]  # the attempt history travels
    assert store.enqueue_returning(new(4, idempotency_key="order-4")) == (new_id, False)
    [c] = store.claim("batch", 1, "w1")
    assert (c.id, c.attempt) == (new_id, 1)


def test_replay_ignores_jobs_that_are_not_dead(store: JobStore) -> None:
    queued = store.enqueue(new(1))
    assert store.replay([queued, 123456]) == []


def test_purge_dead_all_or_some_and_frees_keys(store: JobStore) -> None:
    a = _dead(store, 1, idempotency_key="k-a")
    b = _dead(store, 2)
    assert store.purge_dead([a]) == 1
    assert [r.id for r in store.dead_letters()] == [b]
    assert store.purge_dead() == 1 and store.dead_letters() == []
    fresh, created = store.enqueue_returning(new(1, idempotency_key="k-a"))
    assert created and fresh != a


def test_retention_purges_old_successes_never_dead_jobs(store: JobStore) -> None:
    ok = store.enqueue(new(1, idempotency_key="done-1"))
    [c] = store.claim("batch", 1, "w1")
    store.complete_many([Completion(c.id, c.attempt)])
    dead = _dead(store, 2)
    assert store.purge_finished(older_than_seconds=3600) == 0
    assert store.purge_finished(older_than_seconds=0, batch=1) == 1
    assert store.get(ok) is None and status(store, dead) is JobStatus.DEAD


def test_retention_purges_in_batches(store: JobStore) -> None:
    store.enqueue_many([new(i) for i in range(7)])
    claimed = store.claim("batch", 10, "w1")
    store.complete_many([Completion(c.id, c.attempt) for c in claimed])
    assert store.purge_finished(older_than_seconds=0, batch=3) == 7
    assert all(store.get(c.id) is None for c in claimed)


def test_cancel_only_before_it_runs(store: JobStore) -> None:
    waiting, running = store.enqueue(new(1, run_at=later(60))), store.enqueue(new(2))
    store.claim("batch", 1, "w1")
    assert store.cancel(waiting) is True and status(store, waiting) is JobStatus.CANCELLED
    assert store.cancel(running) is False and status(store, running) is JobStatus.RUNNING


# -- the async twins -----------------------------------------------------------


def test_an_async_enqueue_is_claimable_its_key_answers_once_and_aget_reads_it(
    store: JobStore,
) -> None:
    async def enqueue() -> list[Any]:
        # The first use of a loop from several coroutines at once: one opens the pool.
        try:
            plain, keyed = await asyncio.gather(
                store.aenqueue_returning(new(1)),
                store.aenqueue_returning(new(2, idempotency_key="ak")),
            )
            again = await store.aenqueue_returning(new(2, idempotency_key="ak"))
            return [plain, keyed, again, await store.aget(plain[0]), await store.aget(999_999_999)]
        finally:
            # As an app that ends its loop itself must (queue_runtime.pg.loop_pools): the
            # loop's pool closed from inside it, not left to asyncio.run's cancellation of
            # the pool's tasks (once, under two CI runs at a time, that never returned).
            if isinstance(store, PgJobStore):
                await store.aclose()

    (plain_id, plain_created), keyed, again, read, missing = asyncio.run(enqueue())
    assert plain_created and keyed[1] and again == (keyed[0], False)
    assert read is not None and (read.id, read.status) == (plain_id, JobStatus.QUEUED)
    assert read.args == {"n": 1} and missing is None
    with pytest.raises(KeyReused, match="'ak' names job"):
        asyncio.run(store.aenqueue_returning(new(3, idempotency_key="ak")))
    assert sorted(c.id for c in store.claim("batch", 10, "w1")) == sorted([plain_id, keyed[0]])


# PostgreSQL only: the async pools, one per event loop, and what close() does with them.
def test_close_ends_the_async_pools_of_closed_and_running_loops(
    pg_store: PgJobStore, settings: Settings
) -> None:
    def connections(expected: int) -> None:
        query = (
            "SELECT count(*) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
        with psycopg.connect(settings.database_url or "", autocommit=True) as admin:
            count = lambda: admin.execute(query).fetchone() == (expected,)  # noqa: E731
            wait_until(count, timeout=10, message=f"{expected} connection(s)")

    asyncio.run(pg_store.aenqueue_returning(new(1)))  # this loop is closed by now
    connections(2)  # the sync pool's and the closed loop's (dropped at the next use or close)
    running = asyncio.new_event_loop()
    thread = threading.Thread(target=running.run_forever, daemon=True)
    thread.start()
    try:
        done = asyncio.run_coroutine_threadsafe(pg_store.aenqueue_returning(new(2)), running)
        done.result(timeout=30)
        connections(2)  # the closed loop's pool was dropped when the running one opened
        pg_store.close()
        connections(0)
    finally:
        running.call_soon_threadsafe(running.stop)
        thread.join(timeout=10)
        running.close()


# -- idempotency keys ----------------------------------------------------------


def test_known_key_returns_the_same_job_in_every_state(store: JobStore) -> None:
    job_id, created = store.enqueue_returning(new(1, idempotency_key="k1"))
    assert created
    assert store.enqueue_returning(new(1, idempotency_key="k1")) == (job_id, False)  # queued
    [c] = store.claim("batch", 1, "w1")
    assert store.enqueue_returning(new(1, idempotency_key="k1")) == (job_id, False)  # running
    store.complete_many([Completion(c.id, c.attempt, "ok")])
    assert store.enqueue_returning(new(1, idempotency_key="k1")) == (job_id, False)  # finished
    record = store.get(job_id)
    assert record is not None and (record.status, record.result) == (JobStatus.SUCCEEDED, "ok")


def test_a_key_reused_for_another_call_is_refused_in_every_state(store: JobStore) -> None:
    job_id = store.enqueue(new(1, idempotency_key="k2"))
    other_job = NewJob("app.jobs.other", "batch", {"n": 1}, idempotency_key="k2")
    for refused in (new(2, idempotency_key="k2"), other_job):
        with pytest.raises(KeyReused, match="'k2' names job"):
            store.enqueue_returning(refused)  # queued
    [c] = store.claim("batch", 1, "w1")
    with pytest.raises(KeyReused):
        store.enqueue_returning(new(3, idempotency_key="k2"))  # running
    store.complete_many([Completion(c.id, c.attempt, "ok")])
    with pytest.raises(KeyReused):
        store.enqueue_returning(new(4, idempotency_key="k2"))  # finished
    assert store.enqueue_returning(new(1, idempotency_key="k2")) == (job_id, False)
    assert len(store.claim("batch", 10, "w1")) == 0  # nothing was enqueued by the refusals


def test_an_enqueued_key_names_its_job_and_call_in_every_state(store: JobStore) -> None:
    """What an inline run asks before it runs (``gate.guard.checked_call``)."""
    assert store.enqueued_key("k3") is None
    job_id = store.enqueue(new(1, idempotency_key="k3"))
    digest = args_digest("app.jobs.work", {"n": 1})
    held = EnqueuedKey("k3", job_id, digest)
    assert store.enqueued_key("k3") == held  # queued
    assert not held.names_other_call(digest)
    assert held.names_other_call(args_digest("app.jobs.work", {"n": 2}))
    [c] = store.claim("batch", 1, "w1")
    assert store.enqueued_key("k3") == held  # running
    store.complete_many([Completion(c.id, c.attempt, "ok")])
    assert store.enqueued_key("k3") == held  # finished


def test_keys_expire_after_retention_but_never_under_a_live_or_dead_job(store: JobStore) -> None:
    done = store.enqueue(new(1, idempotency_key="old-done"))
    [c] = store.claim("batch", 1, "w1")
    store.complete_many([Completion(c.id, c.attempt)])
    queued = store.enqueue(new(2, idempotency_key="old-queued"))
    dead = _dead(store, 3, idempotency_key="old-dead")
    assert store.purge_keys(older_than_seconds=3600) == 0  # all younger than an hour
    assert store.purge_keys(older_than_seconds=0, batch=1) == 1  # only the finished job's
    fresh, created = store.enqueue_returning(new(9, idempotency_key="old-done"))
    assert created and fresh != done  # an expired key names a new call
    assert store.enqueue_returning(new(2, idempotency_key="old-queued")) == (queued, False)
    assert store.enqueue_returning(new(3, idempotency_key="old-dead")) == (dead, False)
    with pytest.raises(KeyReused):
        store.enqueue_returning(new(4, idempotency_key="old-queued"))


def test_keys_in_a_batch_dedupe_against_the_table_and_each_other(store: JobStore) -> None:
    known = store.enqueue(new(0, idempotency_key="known"))
    ids = store.enqueue_many(
        [
            new(0, idempotency_key="known"),  # a key names one call: the same arguments
            new(2, idempotency_key="x"),
            new(2, idempotency_key="x"),
            new(4),
        ]
    )
    assert ids[0] == known and ids[1] == ids[2] and len({ids[1], ids[3], known}) == 3
    assert len(store.claim("batch", 10, "w1")) == 3
    with pytest.raises(KeyReused):  # other arguments: refused (test_bulk_idempotency_keys.py)
        store.enqueue_many([new(1, idempotency_key="known")])


def test_concurrent_enqueues_of_one_key_make_one_job(store: JobStore) -> None:
    results: list[tuple[int, bool]] = []
    start = threading.Barrier(6)

    def enqueue() -> None:
        start.wait(timeout=10)
        results.append(store.enqueue_returning(new(1, idempotency_key="race")))

    threads = [threading.Thread(target=enqueue) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert len({job_id for job_id, _ in results}) == 1
    assert sum(created for _, created in results) == 1


# -- stats, robustness ---------------------------------------------------------


def test_stats_per_pool(store: JobStore) -> None:
    _dead(store, 5)
    store.enqueue_many([new(i) for i in range(4)])
    store.enqueue(new(9, run_at=later(3600)))
    store.enqueue(new(8, pool="transactional"))
    claimed = store.claim("batch", 3, "w1")
    store.complete_many([Completion(claimed[0].id, claimed[0].attempt)])
    # A retry due 5 s ago: the oldest due job (a past run_at at enqueue would be now).
    store.fail(Failure(claimed[1].id, claimed[1].attempt, "boom", retry_at=ago(5)))
    stats = {s.pool: s for s in store.stats()}
    batch = stats["batch"]
    assert (batch.depth, batch.scheduled, batch.running, batch.dead) == (2, 1, 1, 1)
    assert batch.succeeded_last_minute == 1 and batch.lag_seconds >= 4.0
    assert stats["transactional"].depth == 1


# PostgreSQL only: a terminated backend (memory has no connection to lose).
def test_store_reconnects_after_losing_its_connection(
    pg_store: PgJobStore, settings: Settings
) -> None:
    store = pg_store
    store.enqueue(new(1))
    with psycopg.connect(settings.database_url or "", autocommit=True) as admin:
        admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
    assert len(store.claim("batch", 10, "w1")) == 1


# PostgreSQL only: memory has no schema to migrate.
def test_unmigrated_schema_is_a_clear_error(bare_settings: Settings) -> None:
    pool = open_pool(bare_settings, max_size=1)
    try:
        with pytest.raises(SchemaNotMigrated, match="queue-runtime migrate"):
            PgJobStore(pool, bare_settings).enqueue(new(1))
    finally:
        pool.close()
