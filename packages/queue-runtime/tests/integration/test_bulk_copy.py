"""Bulk enqueue's direct binary COPY stores exactly what the one-by-one INSERT stores."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import psycopg
import pytest
from psycopg import sql

from queue_runtime.config import Settings
from queue_runtime.errors import StoreError
from queue_runtime.jobs import job as register
from queue_runtime.payload import EncodedArgs, dumps
from queue_runtime.pg.connect import channel, open_pool
from queue_runtime.pg.store import PgJobStore
from queue_runtime.registry import Registry
from queue_runtime.runtime import Runtime
from queue_runtime.store import NewJob

COLUMNS = (
    "name, pool, priority, args, max_attempts, run_at, tenant, idempotency_key, state, attempt"
)


@pytest.fixture
def store(settings: Settings) -> Iterator[PgJobStore]:
    pool = open_pool(settings, max_size=4)
    try:
        yield PgJobStore(pool, settings)
    finally:
        pool.close()


def rows(settings: Settings, ids: list[int]) -> list[tuple[Any, ...]]:
    query = sql.SQL("SELECT id, {} FROM {}.jobs WHERE id = ANY(%s)").format(
        sql.SQL(COLUMNS), sql.Identifier(settings.schema_name)
    )
    with psycopg.connect(settings.database_url or "") as conn:
        found = {row[0]: row[1:] for row in conn.execute(query, (ids,))}
    return [found[i] for i in ids]


def encoded(**args: Any) -> dict[str, Any]:
    """Arguments as the payload codec hands them over: with their JSON text."""
    payload = EncodedArgs(args)
    payload.json = dumps(payload)
    return payload


PAST = datetime(2000, 1, 1, tzinfo=UTC)


def batch() -> list[NewJob]:
    soon = datetime(2031, 2, 3, 4, 5, 6, 789012, tzinfo=timezone(timedelta(hours=-5)))
    return [
        NewJob("app.a", "batch", encoded(n=1, s='h\u00e9llo \u2603 "q" \\ \n\t')),
        NewJob("app.a", "batch", {"plain": [1, 2.5, None, True], "nested": {"k": "v"}}),
        NewJob("app.b", "transactional", encoded(n=2), priority=-7, max_attempts=9),
        NewJob("app.b", "transactional", encoded(n=3), priority=32767, tenant="acme \u00e9"),
        NewJob("app.a", "batch", encoded(n=4), run_at=soon),
        NewJob("app.a", "batch", encoded(n=5), run_at=datetime(1999, 12, 31, 23, 59, tzinfo=UTC)),
        NewJob("app.a", "batch", encoded()),
    ]


def test_bulk_rows_equal_one_by_one_rows(store: PgJobStore, settings: Settings) -> None:
    jobs = batch()
    one_by_one = [store.enqueue(job) for job in jobs]
    bulk = store.enqueue_many(jobs)
    assert bulk == sorted(bulk) and min(bulk) > max(one_by_one)  # ids in batch order
    single_rows, bulk_rows = rows(settings, one_by_one), rows(settings, bulk)
    for job, single, copied in zip(jobs, single_rows, bulk_rows, strict=True):
        if job.run_at is None or job.run_at < PAST:  # now(): each transaction's clock
            single, copied = single[:5] + single[6:], copied[:5] + copied[6:]
        assert copied == single
    assert bulk_rows[4][5] == jobs[4].run_at
    # A run_at in the past is stored as now, in both paths (issue 22 item 9).
    assert bulk_rows[5][5] > PAST and single_rows[5][5] > PAST


def test_bulk_run_at_defaults_to_the_database_clock(store: PgJobStore, settings: Settings) -> None:
    with psycopg.connect(settings.database_url or "") as conn:
        before = conn.execute("SELECT now()").fetchone()[0]  # type: ignore[index]
    ids = store.enqueue_many([NewJob("app.a", "batch", encoded(n=i)) for i in range(3)])
    run_ats = {row[5] for row in rows(settings, ids)}
    assert len(run_ats) == 1 and run_ats.pop() >= before


def test_a_failed_copy_leaves_nothing_and_notifies_nobody(
    store: PgJobStore, settings: Settings
) -> None:
    jobs = [NewJob("app.a", "batch", encoded(n=1)), NewJob("app.a", "batch", {"bad": "\u0000"})]
    with psycopg.connect(settings.database_url or "", autocommit=True) as listener:
        listener.execute(sql.SQL("LISTEN {}").format(sql.Identifier(channel(settings))))
        with pytest.raises(StoreError):
            store.enqueue_many(jobs)  # jsonb refuses \u0000: the whole COPY fails
        assert list(listener.notifies(timeout=0.5)) == []
        count = listener.execute(
            sql.SQL("SELECT count(*) FROM {}.jobs").format(sql.Identifier(settings.schema_name))
        ).fetchone()
    assert count == (0,)
    assert store.enqueue_many([jobs[0]])  # the pooled connection is usable again


def test_keyed_and_naive_batches_take_the_checked_copy(store: PgJobStore) -> None:
    keyed = [NewJob("app.a", "batch", encoded(n=1), idempotency_key="k") for _ in range(2)]
    first, second = store.enqueue_many(keyed)  # one key, one call: one job
    assert first == second


def test_unusual_jobs_fall_back_to_the_checked_copy(store: PgJobStore) -> None:
    naive = datetime(2031, 1, 1, 12, 0)  # no timezone: refused by the checked COPY, as before
    with pytest.raises(TypeError, match="offset-naive"):
        store.enqueue_many([NewJob("app.a", "batch", encoded(n=1), run_at=naive)])
    for bad in ({"priority": 2**15}, {"max_attempts": -(2**31) - 1}):
        for key in (None, "k"):  # both COPYs refuse it, as INSERT does (no silent wrap-around)
            job = NewJob("app.a", "batch", encoded(), idempotency_key=key, **bad)  # type: ignore[arg-type]
            with pytest.raises(StoreError, match=r"NumericValueOutOfRange: .*out of range"):
                store.enqueue_many([job])
    assert store.enqueue_many([NewJob("app.a", "batch", encoded(n=2))])  # the connection is fine


def test_a_job_batch_is_a_sequence_of_new_jobs(store: PgJobStore, settings: Settings) -> None:
    from queue_runtime.pg.bulk import JobBatch

    template = NewJob("app.a", "transactional", {}, priority=3, tenant="t1", max_attempts=2)
    batch = JobBatch(template, [encoded(n=i) for i in range(4)])
    assert len(batch) == 4 and batch[1].args == {"n": 1} and batch[1].tenant == "t1"
    assert [job.args for job in batch[2:]] == [{"n": 2}, {"n": 3}]
    ids = store.enqueue_many(batch)
    assert [row[:5] for row in rows(settings, ids)] == [
        ("app.a", "transactional", 3, {"n": i}, 2) for i in range(4)
    ]
    keyed = JobBatch(NewJob("app.a", "batch", {}, idempotency_key="same"), [encoded(n=1)] * 2)
    first, second = store.enqueue_many(keyed)  # keys: the checked COPY, one job per key
    assert first == second


def test_a_fully_async_batch_asks_the_gate_once(
    runtime: Runtime, monkeypatch: pytest.MonkeyPatch
) -> None:
    from queue_runtime import _enqueue

    asked: list[str] = []
    real = _enqueue.gate_decision

    def counting(rt: Runtime, jf: Any, key: str | None = None) -> Any:
        asked.append(jf.name)
        return real(rt, jf, key)

    monkeypatch.setattr(_enqueue, "gate_decision", counting)

    @register(name="t.bulk.scale", registry=Registry())
    def scale(n: int, factor: float = 1.0) -> None: ...

    handles = scale.enqueue_many([((n,), {"factor": n / 2}) for n in range(5)])
    assert asked == ["t.bulk.scale"]
    assert len({h.id for h in handles}) == 5
    assert [h.record().args for h in handles] == [{"n": n, "factor": n / 2} for n in range(5)]
