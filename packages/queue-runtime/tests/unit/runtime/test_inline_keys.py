"""The guard without a database: inline mode keeps its keys in process (``LocalKeys``)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from queue_runtime import Mode, Settings, configure, job
from queue_runtime.errors import KeyReused, PayloadError
from queue_runtime.gate import key_state
from queue_runtime.local_keys import PURGE_EVERY, LocalKeys
from queue_runtime.registry import Registry
from queue_runtime.runtime import Runtime
from queue_runtime.store import KeyStatus

jobs = Registry()
sent: list[int] = []


@job(name="local.mail", idempotency="non_idempotent", registry=jobs)
def mail(user: int) -> int:
    sent.append(user)
    return user


@pytest.fixture
def no_database() -> Iterator[Runtime]:
    sent.clear()
    runtime = configure(Settings(mode=Mode.INLINE))
    try:
        yield runtime
    finally:
        runtime.close()


def test_a_keyed_call_runs_once_and_another_call_under_its_key_is_refused(
    no_database: Runtime,
) -> None:
    assert [mail.enqueue(1, idempotency_key="k").result() for _ in range(3)] == [1, 1, 1]
    with pytest.raises(KeyReused):
        mail.enqueue(2, idempotency_key="k")
    assert sent == [1]
    state = key_state(no_database, "k")
    assert state is not None and state.state is KeyStatus.COMPLETED
    assert not no_database.opened  # no store: the keys are the process's


def test_a_batch_is_guarded_and_refused_whole(no_database: Runtime) -> None:
    handles = mail.enqueue_many([((1,), {}), ((1,), {})], idempotency_keys=["a", "a"])
    assert [h.result() for h in handles] == [1, 1] and sent == [1]
    with pytest.raises(KeyReused):
        mail.enqueue_many([((5,), {}), ((2,), {})], idempotency_keys=["b", "a"])
    assert sent == [1]


def test_bad_keys_are_refused_without_a_database_too(no_database: Runtime) -> None:
    for key in ("", "x\x00", "k" * 513):
        with pytest.raises(PayloadError):
            mail.enqueue(1, idempotency_key=key)
    assert sent == []


def test_keys_untouched_past_the_retention_are_forgotten_as_keys_are_taken() -> None:
    now = [datetime(2030, 1, 1, tzinfo=UTC)]
    keys = LocalKeys(lambda: now[0], retention_seconds=3600)
    keys.begin_key("old", "j", None, "d")
    keys.complete_key("old", "j", 1, None, "d")
    now[0] += timedelta(hours=2)
    for n in range(PURGE_EVERY - 2):
        keys.begin_key(f"new-{n}", "j", None, "d")
    assert keys.key_state("old") is not None  # not yet: purged every PURGE_EVERY keys
    keys.begin_key("last", "j", None, "d")
    assert keys.key_state("old") is None
    assert keys.key_counts("j").total == PURGE_EVERY - 1
