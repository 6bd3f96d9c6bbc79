"""Bulk enqueue keeps the key semantics of ``enqueue``: a key names one call.

The store's ``enqueue_many`` (the binary COPY on PostgreSQL, and the
in-memory store: one test body, both backends) stores each key with the digest
of its call; the same key for other arguments, within the batch or against a
key already known, is refused with ``KeyReused`` and nothing of the batch is
stored; the same key with the same arguments answers with the existing job.
Then the public ``JobFunction.enqueue_many(..., idempotency_keys=...)``, queued
and in the gate's inline fallback, on the real PostgreSQL.
"""

from __future__ import annotations

from collections.abc import Iterator
from enum import StrEnum

import psycopg
import pytest
from psycopg import sql

from queue_runtime import KeyReused, PayloadError, Settings, job
from queue_runtime.gate import set_rollout
from queue_runtime.pg.bulk import JobBatch
from queue_runtime.pg.connect import open_pool
from queue_runtime.pg.store import PgJobStore
from queue_runtime.registry import Registry
from queue_runtime.runtime import Runtime
from queue_runtime.store import JobStore, NewJob, args_digest
from queue_runtime.testing import MemoryJobStore

jobs = Registry()
ran: list[int] = []


@job(pool="batch", name="t.bulkkeys.mail", registry=jobs)
def mail(order_id: int, to: str = "a@example.com") -> int:
    return order_id


@job(pool="batch", name="t.bulkkeys.receipt", idempotency="non_idempotent", registry=jobs)
def receipt(order_id: int) -> int:
    ran.append(order_id)
    return order_id


class Backend(StrEnum):
    PG = "pg"
    MEMORY = "memory"


@pytest.fixture(params=list(Backend))
def store(request: pytest.FixtureRequest) -> Iterator[JobStore]:
    if request.param is Backend.MEMORY:
        yield MemoryJobStore(pools=list(Settings().pools))
        return
    settings: Settings = request.getfixturevalue("settings")
    pool = open_pool(settings, max_size=4)
    try:
        yield PgJobStore(pool, settings)
    finally:
        pool.close()


def new(n: int, key: str | None = None, name: str = "t.bulkkeys.mail") -> NewJob:
    return NewJob(name, "batch", {"order_id": n}, idempotency_key=key)


def queued(store: JobStore) -> int:
    return sum(s.depth + s.scheduled for s in store.stats())


def test_a_batch_key_names_its_call_for_later_enqueues(store: JobStore) -> None:
    [(first, created)] = store.enqueue_many_returning([new(1, "k1")])
    assert created
    with pytest.raises(KeyReused, match="'k1' names job"):
        store.enqueue_returning(new(2, "k1"))  # a batch's key is no wildcard any more
    assert store.enqueue_returning(new(1, "k1")) == (first, False)


def test_a_key_given_twice_in_a_batch_for_other_arguments_refuses_the_batch(
    store: JobStore,
) -> None:
    with pytest.raises(KeyReused, match="'k' is given twice in the batch"):
        store.enqueue_many([new(0), new(1, "k"), new(2, "k")])
    assert queued(store) == 0  # all or nothing: not even the unkeyed job
    same = store.enqueue_many_returning([new(1, "k"), new(1, "k"), new(3)])
    assert same[0][0] == same[1][0] and [c for _, c in same] == [True, False, True]


def test_a_batch_reusing_a_known_key_for_another_call_stores_nothing(store: JobStore) -> None:
    known, _ = store.enqueue_returning(new(1, "known"))
    with pytest.raises(KeyReused, match="'known' names job"):
        store.enqueue_many([new(5, "fresh"), new(6), new(2, "known")])
    assert queued(store) == 1
    # the batch's other key was not taken either: it is free for any call
    assert store.enqueue_returning(new(7, "fresh"))[1] is True
    again = store.enqueue_many_returning([new(1, "known"), new(8, "new")])
    assert again[0] == (known, False) and again[1][1] is True


def test_another_job_under_a_batch_key_is_another_call(store: JobStore) -> None:
    store.enqueue_many([new(1, "shared")])
    with pytest.raises(KeyReused):
        store.enqueue_many([new(1, "shared", name="t.bulkkeys.receipt")])


def test_a_job_batch_with_keys_per_call(store: JobStore) -> None:
    template = NewJob("t.bulkkeys.mail", "batch", {}, priority=2)
    batch = JobBatch(template, [{"order_id": n} for n in range(3)], ["a", None, "c"])
    assert [j.idempotency_key for j in batch] == ["a", None, "c"] and batch[2].priority == 2
    ids = store.enqueue_many(batch)
    assert store.enqueue_returning(new(2, "c")) == (ids[2], False)
    assert JobBatch(template, [{}], [None]).keyed is False  # no key at all: the direct COPY


def test_the_postgresql_batch_stores_the_digest_single_enqueue_stores(
    settings: Settings,
) -> None:
    pool = open_pool(settings, max_size=2)
    try:
        store = PgJobStore(pool, settings)
        store.enqueue_many([new(1, "bulk")])
        store.enqueue_returning(new(1, "single"))
    finally:
        pool.close()
    query = sql.SQL("SELECT key, args_digest FROM {}.idempotency_keys ORDER BY key").format(
        sql.Identifier(settings.schema_name)
    )
    with psycopg.connect(settings.database_url or "") as conn:
        stored = conn.execute(query).fetchall()
    digest = args_digest("t.bulkkeys.mail", {"order_id": 1})
    assert stored == [("bulk", digest), ("single", digest)]


# -- the public API ------------------------------------------------------------


def test_enqueue_many_with_keys_answers_as_enqueue(runtime: Runtime) -> None:
    first = mail.enqueue(1, idempotency_key="m-1")
    handles = mail.enqueue_many(
        [((1,), {}), ((2,), {}), ((3,), {"to": "b@example.com"})],
        idempotency_keys=["m-1", "m-2", None],
    )
    assert [h.created for h in handles] == [False, True, True]
    assert handles[0].id == first.id
    assert handles[1].record().idempotency_key == "m-2"
    with pytest.raises(KeyReused):
        mail.enqueue(9, idempotency_key="m-2")
    with pytest.raises(KeyReused):
        mail.enqueue_many([((4,), {}), ((1,), {"to": "c"})], idempotency_keys=["m-4", "m-1"])
    with pytest.raises(PayloadError, match=r"one key \(or None\) per call"):
        mail.enqueue_many([((5,), {})], idempotency_keys=["m-5", "m-6"])
    assert mail.enqueue(4, idempotency_key="m-4").created  # the refused batch took nothing


def test_enqueue_many_with_keys_in_the_inline_fallback_goes_through_the_guard(
    runtime: Runtime,
) -> None:
    ran.clear()
    set_rollout(runtime, receipt.name, "inline", who="test")
    handles = receipt.enqueue_many([((1,), {}), ((2,), {})], idempotency_keys=["r-1", "r-2"])
    assert [h.result() for h in handles] == [1, 2] and ran == [1, 2]
    again = receipt.enqueue_many([((1,), {})], idempotency_keys=["r-1"])
    assert again[0].result() == 1 and ran == [1, 2]  # the guard answered: not sent twice
    with pytest.raises(KeyReused, match="'r-2' names another call"):
        receipt.enqueue_many([((3,), {}), ((9,), {})], idempotency_keys=["r-3", "r-2"])
    with pytest.raises(KeyReused, match="given twice in the batch"):
        receipt.enqueue_many([((4,), {}), ((5,), {})], idempotency_keys=["r-4", "r-4"])
    assert ran == [1, 2]  # refused before anything ran
