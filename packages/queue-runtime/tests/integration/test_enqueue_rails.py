"""Issue 22, items 1, 2, 4 and 8, on the real PostgreSQL: keys and bad input at enqueue.

1. The guard holds in inline mode (the documented rollback), as in queue mode.
2. An inline run sees the keys of queued jobs: another call is refused, the
   same call answers with the queued job.
4. A key PostgreSQL cannot hold, or that names nothing, is a PayloadError.
8. Arguments and options the store would refuse, or silently change, are a
   PayloadError before anything reaches the database.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg
import pytest
from psycopg import sql
from pydantic import ValidationError

from queue_runtime import Mode, Settings, configure, job
from queue_runtime.errors import ConfigError, KeyReused, PayloadError, Unencodable
from queue_runtime.gate import key_state, set_rollout
from queue_runtime.handle import InlineHandle, JobHandle
from queue_runtime.registry import Registry
from queue_runtime.runtime import Runtime
from queue_runtime.store import KeyStatus

pytestmark = [pytest.mark.pg]

jobs = Registry()
runs: list[tuple[str, Any]] = []


@job(name="rails.mail", idempotency="non_idempotent", registry=jobs)
def mail(user: int) -> dict[str, int]:
    runs.append(("mail", user))
    return {"sent": user}


@job(name="rails.ship", idempotent=True, registry=jobs)
def ship(order: int, note: str) -> int:
    runs.append(("ship", order))
    return order


@job(name="rails.maybe", idempotent=True, registry=jobs)
def maybe(x: Any | None = None, items: list[Any] | None = None) -> None:
    runs.append(("maybe", x))


@job(name="rails.text", idempotent=True, registry=jobs)
def text(s: str) -> str:
    return s


@job(name="rails.loose", idempotent=True, registry=jobs)
def loose(value):  # type: ignore[no-untyped-def]
    return None


@job(name="rails.raw", idempotent=True, registry=jobs)
def raw(data: bytes) -> None: ...


@job(name="rails.obj", idempotent=True, registry=jobs)
def obj(thing: object) -> None: ...


@job(name="rails.seq", idempotent=True, registry=jobs)
def seq(values: list) -> None:  # type: ignore[type-arg]
    ...


def _count(settings: Settings, table: str) -> int:
    query = sql.SQL("SELECT count(*) FROM {}.{}").format(
        sql.Identifier(settings.schema_name), sql.Identifier(table)
    )
    with psycopg.connect(settings.database_url or "") as conn:
        row = conn.execute(query).fetchone()
    assert row is not None
    return int(row[0])


@pytest.fixture
def inline_mode(settings: Settings) -> Runtime:
    """``mode = "inline"`` (the README's rollback) on the app's real database."""
    runs.clear()
    return configure(settings.model_copy(update={"mode": Mode.INLINE}))


# -- 1. the guard in inline mode -------------------------------------------------------


def test_inline_mode_runs_a_keyed_call_once_and_refuses_the_key_for_another_call(
    inline_mode: Runtime,
) -> None:
    first = mail.enqueue(1, idempotency_key="k")
    again = mail.enqueue(1, idempotency_key="k")
    with pytest.raises(KeyReused, match=r"'k' names another call of rails\.mail"):
        mail.enqueue(2, idempotency_key="k")
    assert runs == [("mail", 1)]  # once, though enqueued three times
    assert first.result() == again.result() == {"sent": 1}
    stored = key_state(inline_mode, "k")  # in PostgreSQL, where a worker's guard looks
    assert stored is not None and stored.state is KeyStatus.COMPLETED
    try:
        assert _count(inline_mode.settings, "job_keys") == 1
    finally:
        inline_mode.close()


def test_inline_mode_guards_each_keyed_call_of_a_batch(inline_mode: Runtime) -> None:
    try:
        mail.enqueue(1, idempotency_key="b1")
        handles = mail.enqueue_many([((1,), {}), ((2,), {})], idempotency_keys=["b1", "b2"])
        assert [h.result() for h in handles] == [{"sent": 1}, {"sent": 2}]
        with pytest.raises(KeyReused):
            mail.enqueue_many([((3,), {}), ((1,), {})], idempotency_keys=["b3", "b2"])
        assert runs == [("mail", 1), ("mail", 2)]  # b1 ran once; nothing of the refused batch
    finally:
        inline_mode.close()


# -- 2. an inline run sees the keys of queued jobs ----------------------------------------


def test_an_inline_run_refuses_a_key_a_queued_job_holds_for_another_call(
    runtime: Runtime,
) -> None:
    runs.clear()
    set_rollout(runtime, ship.name, "async", who="test")
    queued = ship.enqueue(1, "x", idempotency_key="K1")
    assert not isinstance(queued, InlineHandle)
    with pytest.raises(KeyReused, match=rf"'K1' names another call \(job {queued.id}, enqueued\)"):
        mail.enqueue(1, idempotency_key="K1")  # gated: it would run inline
    with pytest.raises(KeyReused):
        mail.enqueue_many([((1,), {})], idempotency_keys=["K1"])
    assert runs == []  # mail never ran
    assert key_state(runtime, "K1") is None  # and took no guard key


def test_a_call_whose_queued_job_holds_the_key_answers_with_that_job_after_a_rollback(
    runtime: Runtime,
) -> None:
    """Queued while async, enqueued again once rolled back to inline: one job, no inline run."""
    runs.clear()
    set_rollout(runtime, ship.name, "async", who="test")
    queued = ship.enqueue(7, "x", idempotency_key="order-7")
    set_rollout(runtime, ship.name, "inline", who="test")
    again = ship.enqueue(7, "x", idempotency_key="order-7")
    assert type(again) is JobHandle and (again.id, again.created) == (queued.id, False)
    [known] = ship.enqueue_many([((7, "x"), {})], idempotency_keys=["order-7"])
    assert type(known) is JobHandle and known.id == queued.id
    inline = configure(runtime.settings.model_copy(update={"mode": Mode.INLINE}))
    try:
        assert ship.enqueue(7, "x", idempotency_key="order-7").id == queued.id
        with pytest.raises(KeyReused):
            ship.enqueue(8, "x", idempotency_key="order-7")
    finally:
        inline.close()
    assert runs == []  # the queued job is the one run of that call


def test_a_queued_enqueue_refuses_a_key_an_inline_run_holds_for_another_call(
    runtime: Runtime,
) -> None:
    """The other direction: a gated job ran inline under K; another job queued under K would
    reach a worker whose guard finds K completed and hands back the other call's result, so
    this call would never run. Refused at enqueue, one by one and in a batch."""
    runs.clear()
    mail.enqueue(1, idempotency_key="Z")  # gated (non-idempotent): inline, through the guard
    set_rollout(runtime, ship.name, "async", who="test")
    with pytest.raises(KeyReused, match=r"'Z' names another call of rails\.mail"):
        ship.enqueue(1, "x", idempotency_key="Z")
    with pytest.raises(KeyReused):
        ship.enqueue_many([((2, "y"), {}), ((1, "x"), {})], idempotency_keys=["Y", "Z"])
    assert _count(runtime.settings, "jobs") == 0  # nothing of the refused batch either
    assert runs == [("mail", 1)]


# -- 4. keys -------------------------------------------------------------------------------


BAD_KEYS: list[tuple[Any, str]] = [
    ("k" * 10_000, "10000 characters long; the limit is 512"),
    ("k" * 513, "513 characters long"),
    ("order\x00-1", r"contains NUL"),
    ("", "is empty"),
    ("   ", "is empty"),
    ("order-\ud800", "lone surrogate"),
    (42, "must be a str, got int"),
]


@pytest.mark.parametrize(("key", "why"), BAD_KEYS, ids=lambda v: repr(v)[:20])
def test_a_key_postgresql_cannot_hold_or_that_names_nothing_is_refused_at_enqueue(
    runtime: Runtime, key: Any, why: str
) -> None:
    set_rollout(runtime, ship.name, "async", who="test")
    attempts: list[Callable[[], Any]] = [
        lambda: ship.enqueue(1, "x", idempotency_key=key),
        lambda: ship.options(idempotency_key=key).enqueue(1, "x"),
        lambda: ship.enqueue_many([((1, "x"), {})], idempotency_keys=[key]),
        lambda: mail.enqueue(1, idempotency_key=key),  # gated: inline, through the guard
    ]
    for attempt in attempts:
        with pytest.raises(PayloadError, match=why):
            attempt()
    assert _count(runtime.settings, "jobs") == _count(runtime.settings, "job_keys") == 0


def test_a_key_at_the_limit_is_stored_whole(runtime: Runtime) -> None:
    set_rollout(runtime, ship.name, "async", who="test")
    key = "é" * 511 + "😀"  # 512 characters, 2,026 bytes of UTF-8
    handle = ship.enqueue(1, "x", idempotency_key=key)
    record = handle.record()
    assert record.idempotency_key == key
    assert ship.enqueue(1, "x", idempotency_key=key).id == handle.id


# -- 8. arguments and options --------------------------------------------------------------


cyclic: list[Any] = []
cyclic.append(cyclic)

BAD_CALLS: list[tuple[str, Callable[[], Any], str]] = [
    ("NaN for Any | None", lambda: maybe.enqueue(float("nan")), "not JSON"),
    ("inf in list[Any]", lambda: maybe.enqueue(items=[1, float("inf")]), "not JSON"),
    ("lone surrogate in str", lambda: text.enqueue("a\ud800b"), "lone surrogate"),
    ("NUL in str", lambda: text.enqueue("a\x00b"), "contains NUL"),
    ("NUL in a nested value", lambda: loose.enqueue({"k": ["a\x00"]}), "contains NUL"),
    ("NUL in a dict key", lambda: loose.enqueue({"a\x00": 1}), "contains NUL"),
    ("invalid UTF-8 bytes", lambda: raw.enqueue(b"\xff\xfe"), "UnicodeDecodeError"),
    ("an object", lambda: obj.enqueue(object()), "cannot be stored as JSON"),
    ("a cyclic list", lambda: seq.enqueue(cyclic), "Circular reference"),
    ("run_at=5", lambda: ship.enqueue(1, "x", run_at=5), "aware datetime or a timedelta"),
    ("run_at naive", lambda: ship.enqueue(1, "x", run_at=datetime(2030, 1, 1)), "no timezone"),
    ("run_at=timedelta.max", lambda: ship.enqueue(1, "x", run_at=timedelta.max), "year 9999"),
    ("priority=10**6", lambda: ship.enqueue(1, "x", priority=10**6), "from -32768 to 32767"),
    ("priority='9'", lambda: ship.enqueue(1, "x", priority="9"), "priority must be an int"),
    (
        "batch priority=10**6",
        lambda: ship.enqueue_many([((1, "x"), {})], priority=10**6),
        "from -32768 to 32767",
    ),
    ("tenant with NUL", lambda: ship.enqueue(1, "x", tenant="acme\x00"), "tenant .* contains NUL"),
    ("tenant=42", lambda: ship.enqueue(1, "x", tenant=42), "tenant must be a str, got int"),
    ("tenant blank", lambda: ship.options(tenant="  ").enqueue(1, "x"), "tenant .* is empty"),
    ("tenant too long", lambda: ship.enqueue(1, "x", tenant="t" * 513), "513 characters long"),
    (
        "tenant surrogate, batch",
        lambda: ship.enqueue_many([((1, "x"), {})], tenant="a\ud800"),
        "lone surrogate",
    ),
]


@pytest.mark.parametrize(("what", "call", "why"), BAD_CALLS, ids=[c[0] for c in BAD_CALLS])
def test_bad_input_is_one_payload_error_before_anything_reaches_the_database(
    settings: Settings, what: str, call: Callable[[], Any], why: str
) -> None:
    runtime = configure(settings)
    try:
        with pytest.raises(PayloadError, match=why) as refused:
            call()
        assert not isinstance(refused.value, Unencodable)  # refused, not run as the site did
        assert not runtime.opened  # no store was even opened: nothing reached PostgreSQL
        assert str(refused.value).count("\n") == 0  # one line
    finally:
        runtime.close()
    assert _count(settings, "jobs") == 0


def test_the_same_values_done_right_are_stored_and_come_back(runtime: Runtime) -> None:
    """The refusals above are not a blanket: what PostgreSQL can hold goes through."""
    for name in (maybe.name, text.name, loose.name, raw.name, ship.name):
        set_rollout(runtime, name, "async", who="test")
    stored = {
        maybe.enqueue(1.5, items=[1, None]).id: {"x": 1.5, "items": [1, None]},
        text.enqueue("mail 📧 ok").id: {"s": "mail 📧 ok"},
        loose.enqueue({"k": ["a\\u0000 is text"]}).id: {"value": {"k": ["a\\u0000 is text"]}},
        raw.enqueue(b"ok").id: {"data": "ok"},
    }
    for job_id, args in stored.items():
        record = runtime.store.get(job_id)
        assert record is not None and record.args == args
    later = datetime(9999, 12, 31, tzinfo=UTC)
    handle = ship.enqueue(1, "x", run_at=later, priority=-32768, tenant="t" * 512)
    assert handle.record().tenant == "t" * 512
    query = sql.SQL("SELECT run_at, priority FROM {}.jobs WHERE id = %s")
    with psycopg.connect(runtime.settings.database_url or "") as conn:
        row = conn.execute(query.format(sql.Identifier(runtime.settings.schema_name)), (handle.id,))
        assert row.fetchone() == (later, -32768)


def test_a_priority_out_of_smallint_in_job_or_in_configuration_is_refused_where_it_is_written(
    settings: Settings,
) -> None:
    """Not at the first enqueue, by PostgreSQL: at the decorator, and at the settings."""
    with pytest.raises(ConfigError, match=r"rails.too_high: priority=40000; expected an int from"):
        job(name="rails.too_high", priority=40000, registry=Registry())(lambda: None)
    with pytest.raises(ConfigError, match=r"priority='5'"):
        job(name="rails.text_priority", priority="5", registry=Registry())(lambda: None)
    with pytest.raises(ValidationError, match="less than or equal to 32767"):
        Settings(jobs={"rails.ship": {"priority": 10**6}})
    assert Settings(jobs={"rails.ship": {"priority": 32767}}).jobs["rails.ship"].priority == 32767
