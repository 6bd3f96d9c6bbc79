"""Enqueue through the public API, on the real PostgreSQL: what an app developer sees."""

from __future__ import annotations

import asyncio
import logging
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

import psycopg
import pytest
from psycopg import sql
from pydantic import BaseModel

from queue_runtime import JobStatus, Mode, Settings, configure, get_job, job
from queue_runtime.errors import (
    JobFailed,
    JobNotFound,
    JobTimeout,
    KeyReused,
    PayloadError,
    PayloadTooLarge,
    PoolMismatchError,
)
from queue_runtime.registry import Registry
from queue_runtime.runtime import Runtime
from queue_runtime.store import Completion

jobs = Registry()  # this module's jobs, apart from the app-wide registry


@job(pool="batch", registry=jobs)
def make_thumbnail(image_id: int, size: int = 256) -> str:
    return f"thumb-{image_id}-{size}"


@job(pool="batch", registry=jobs)
async def fetch_twice(x: int) -> int:
    await asyncio.sleep(0)
    return 2 * x


@job(registry=jobs)
def explode(reason: str) -> None:
    raise RuntimeError(reason)


class Order(BaseModel):
    sku: str
    qty: int


@job(pool="transactional", registry=jobs)
def bill(order: Order, amount: Decimal, due: datetime) -> dict[str, Any]:
    return {"sku": order.sku, "total": str(amount * order.qty), "due_year": due.year}


@job(registry=jobs)
def untyped(anything):  # type: ignore[no-untyped-def]
    return anything


@job(registry=jobs)
def per_tenant(tenant: str) -> str:
    return tenant


@job(pool="reports", registry=jobs)
def in_unknown_pool() -> None:
    return None


def stored_jobs(settings: Settings) -> int:
    query = sql.SQL("SELECT count(*) FROM {}.jobs").format(sql.Identifier(settings.schema_name))
    with psycopg.connect(settings.database_url or "") as conn:
        row = conn.execute(query).fetchone()
    return int(row[0]) if row else -1


def run_next(runtime: Runtime, pool: str = "batch") -> None:
    """Play a worker for one job: claim, decode, run, complete."""
    [claimed] = runtime.store.claim(pool, 1, "test-worker")
    fn = jobs.get(claimed.name)
    args, kwargs = fn.decode(claimed.args)
    result = fn.encode_result(fn.fn(*args, **kwargs))
    runtime.store.complete_many([Completion(claimed.id, claimed.attempt, result)])


# -- validation ----------------------------------------------------------------


def test_invalid_arguments_are_refused_and_nothing_is_stored(
    runtime: Runtime, settings: Settings
) -> None:
    with pytest.raises(PayloadError, match=r"image_id.*valid integer"):
        make_thumbnail.enqueue("not-a-number")
    with pytest.raises(PayloadError, match="missing a required argument"):
        make_thumbnail.enqueue(size=3)  # type: ignore[call-arg]
    with pytest.raises(PayloadError, match="unexpected keyword argument 'colour'"):
        make_thumbnail.enqueue(1, colour="red")  # type: ignore[call-arg]
    assert stored_jobs(settings) == 0


def test_payload_over_the_limit_is_refused(settings: Settings) -> None:
    runtime = configure(settings, max_payload_bytes=64)
    try:
        with pytest.raises(PayloadTooLarge, match="> max_payload_bytes=64"):
            untyped.enqueue("x" * 100)
        assert stored_jobs(settings) == 0
    finally:
        runtime.close()


def test_pool_that_is_not_configured_is_refused(runtime: Runtime) -> None:
    with pytest.raises(PoolMismatchError, match=r"wants pool 'reports', which is not configured"):
        in_unknown_pool.enqueue()


def test_code_and_config_disagreeing_on_the_pool_is_refused(settings: Settings) -> None:
    conflicting = {make_thumbnail.name: {"pool": "transactional"}}
    runtime = configure(settings, jobs=conflicting)
    try:
        with pytest.raises(PoolMismatchError, match=r"@job\(pool='batch'\).*'transactional'"):
            make_thumbnail.enqueue(1)
    finally:
        runtime.close()


# -- JSON only -----------------------------------------------------------------


def test_typed_values_are_stored_as_json_and_come_back_typed(runtime: Runtime) -> None:
    due = datetime(2030, 5, 17, 9, 30, tzinfo=UTC)
    handle = bill.enqueue(Order(sku="A-1", qty=3), Decimal("2.50"), due)
    stored = handle.record().args
    assert stored == {
        "order": {"sku": "A-1", "qty": 3},
        "amount": "2.50",
        "due": "2030-05-17T09:30:00Z",
    }
    run_next(runtime, "transactional")
    assert handle.result(timeout=5) == {"sku": "A-1", "total": "7.50", "due_year": 2030}


def test_unannotated_values_go_through_the_codecs_and_the_rest_runs_as_before(
    runtime: Runtime,
) -> None:
    due = datetime(2030, 5, 17, 9, 30, tzinfo=UTC)
    stored = untyped.enqueue(due).record().args
    assert stored == {"anything": {"__qr__": "datetime", "v": "2030-05-17T09:30:00+00:00"}}
    assert untyped.enqueue({"plain": [1, "two", None]}).record().args == {
        "anything": {"plain": [1, "two", None]}
    }
    fallen_back = untyped.enqueue(float("nan"))  # no codec: it runs in-process, as the site did
    assert fallen_back.id < 0 and fallen_back.status() is JobStatus.SUCCEEDED


# -- handles -------------------------------------------------------------------


def test_get_job_round_trip(runtime: Runtime) -> None:
    handle = make_thumbnail.enqueue(42, size=128)
    assert get_job(handle.id).status() is JobStatus.QUEUED
    run_next(runtime)
    assert get_job(handle.id).result(timeout=5) == "thumb-42-128"
    assert get_job(handle.id).wait(timeout=1) is JobStatus.SUCCEEDED


def test_result_times_out_while_the_job_waits(runtime: Runtime) -> None:
    handle = make_thumbnail.enqueue(1)
    with pytest.raises(JobTimeout, match="still queued"):
        handle.result(timeout=0.05)


def test_unknown_job_id(runtime: Runtime) -> None:
    with pytest.raises(JobNotFound):
        get_job(987654).status()


def test_dead_job_result_raises(runtime: Runtime) -> None:
    from queue_runtime.store import Failure

    handle = explode.enqueue("boom")
    [claimed] = runtime.store.claim("batch", 1, "w")
    runtime.store.fail(Failure(claimed.id, claimed.attempt, "RuntimeError: boom"))
    with pytest.raises(JobFailed, match="is dead: RuntimeError: boom"):
        handle.result(timeout=1)


# -- options -------------------------------------------------------------------


def test_idempotency_key_returns_the_existing_job(runtime: Runtime) -> None:
    first = make_thumbnail.enqueue(1, idempotency_key="thumb-1")
    again = make_thumbnail.enqueue(1, idempotency_key="thumb-1")
    assert (again.id, first.created, again.created) == (first.id, True, False)


def test_an_idempotency_key_reused_with_other_arguments_is_refused(runtime: Runtime) -> None:
    first = make_thumbnail.enqueue(1, idempotency_key="thumb-2")
    with pytest.raises(KeyReused, match="'thumb-2' names job"):
        make_thumbnail.enqueue(2, idempotency_key="thumb-2")  # another call's result: never
    assert make_thumbnail.enqueue(1, idempotency_key="thumb-2").id == first.id


def test_run_at_and_tenant(runtime: Runtime) -> None:
    handle = make_thumbnail.enqueue(1, run_at=timedelta(hours=1), tenant="acme")
    assert handle.record().tenant == "acme"
    assert runtime.store.claim("batch", 10, "w") == []
    [batch] = [s for s in runtime.store.stats() if s.pool == "batch"]
    assert batch.scheduled == 1
    with pytest.raises(PayloadError, match="no timezone"):
        make_thumbnail.enqueue(1, run_at=datetime(2030, 1, 1))


def test_a_parameter_named_like_an_option_stays_an_argument(runtime: Runtime) -> None:
    plain = per_tenant.enqueue(tenant="as-argument")
    assert (plain.record().args, plain.record().tenant) == ({"tenant": "as-argument"}, None)
    both = per_tenant.options(tenant="acme", idempotency_key="t-1").enqueue("as-argument")
    record = both.record()
    assert (record.args, record.tenant, record.idempotency_key) == (
        {"tenant": "as-argument"},
        "acme",
        "t-1",
    )


def test_enqueue_many_returns_handles_in_order(runtime: Runtime) -> None:
    handles = make_thumbnail.enqueue_many([((i,), {"size": 64}) for i in range(5)])
    assert [h.record().args for h in handles] == [{"image_id": i, "size": 64} for i in range(5)]
    with pytest.raises(PayloadError):
        make_thumbnail.enqueue_many([((1,), {}), (("bad",), {})])
    assert len(runtime.store.claim("batch", 100, "w")) == 5  # the bad batch stored nothing


# -- the caller's transaction --------------------------------------------------


def test_enqueue_with_conn_rolls_back_with_the_caller(runtime: Runtime, settings: Settings) -> None:
    with psycopg.connect(settings.database_url or "") as conn:
        handle = make_thumbnail.enqueue(7, conn=conn)
        assert stored_jobs(settings) == 0  # not visible before the caller commits
        conn.rollback()
    with pytest.raises(JobNotFound):
        handle.status()
    assert stored_jobs(settings) == 0


def test_enqueue_with_conn_commits_with_the_caller(runtime: Runtime, settings: Settings) -> None:
    with psycopg.connect(settings.database_url or "") as conn:
        with conn.transaction():
            handle = make_thumbnail.enqueue(8, conn=conn)
        assert handle.status() is JobStatus.QUEUED


# -- inline mode ---------------------------------------------------------------


@pytest.fixture
def inline() -> Runtime:
    runtime = configure(mode=Mode.INLINE)
    return runtime


def test_inline_mode_returns_a_finished_handle(inline: Runtime) -> None:
    handle = make_thumbnail.enqueue(5, size=10)
    assert (handle.status(), handle.result()) == (JobStatus.SUCCEEDED, "thumb-5-10")
    assert handle.wait(timeout=0) is JobStatus.SUCCEEDED


def test_inline_mode_runs_async_jobs(inline: Runtime) -> None:
    assert fetch_twice.enqueue(21).result() == 42


def test_inline_mode_runs_async_jobs_from_inside_an_event_loop(inline: Runtime) -> None:
    async def handler() -> int:
        return int(fetch_twice.enqueue(4).result())

    assert asyncio.run(handler()) == 8


def test_inline_failure_is_the_handles_outcome_and_logged(
    inline: Runtime, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.ERROR, logger="queue_runtime"):
        handle = explode.enqueue("kaput")
    [record] = caplog.records
    assert "failed inline: kaput" in record.getMessage() and record.exc_info is not None
    assert handle.status() is JobStatus.DEAD
    with pytest.raises(JobFailed, match="RuntimeError: kaput") as info:
        handle.result()
    assert isinstance(info.value.__cause__, RuntimeError)


def test_inline_mode_validates_like_queue_mode(inline: Runtime) -> None:
    with pytest.raises(PayloadError):
        make_thumbnail.enqueue("nope")
    assert [h.result() for h in make_thumbnail.enqueue_many([((1,), {}), ((2,), {})])] == [
        "thumb-1-256",
        "thumb-2-256",
    ]


def test_calling_the_function_still_runs_it_in_process() -> None:
    assert make_thumbnail(3, size=4) == "thumb-3-4"


def test_enqueue_wakes_workers_of_its_pool_at_commit(runtime: Runtime, settings: Settings) -> None:
    from queue_runtime.pg.connect import channel

    with psycopg.connect(settings.database_url or "", autocommit=True) as listener:
        listener.execute(sql.SQL("LISTEN {}").format(sql.Identifier(channel(settings))))
        make_thumbnail.enqueue(1)
        assert [n.payload for n in listener.notifies(timeout=2, stop_after=1)] == ["batch"]
        with psycopg.connect(settings.database_url or "") as conn:
            make_thumbnail.enqueue(2, conn=conn)
            assert list(listener.notifies(timeout=0.2)) == []  # not before the caller commits
            conn.commit()
        assert [n.payload for n in listener.notifies(timeout=2, stop_after=1)] == ["batch"]


def test_database_down_is_a_store_error_not_a_hang(
    monkeypatch: pytest.MonkeyPatch, settings: Settings
) -> None:
    import time

    from queue_runtime.errors import StoreError
    from queue_runtime.pg import connect
    from tests.support import free_port

    monkeypatch.setattr(connect, "POOL_TIMEOUT", 1.0)
    runtime = configure(settings, database_url=f"postgresql://postgres@127.0.0.1:{free_port()}/x")
    try:
        started = time.monotonic()
        with pytest.raises(StoreError, match="PoolTimeout") as info:
            make_thumbnail.enqueue(1)
        assert time.monotonic() - started < 5
        assert isinstance(info.value.__cause__, connect.PoolTimeout)
    finally:
        runtime.close()
