"""The execution guard: a keyed job's completion is recorded; a redelivery does not run it again.

With real worker subprocesses and SIGKILL: when the job's effect and its key
completed together (``complete_in`` in the effect's transaction) before the
kill, the redelivery returns the stored result and the effect happened once.
The window that remains is shown too: a kill between an effect committed on
its own and the key's completion leaves the key in progress, and the
redelivery runs the body again (the effect happens twice).
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from queue_runtime import JobStatus, Permanent, Settings, configure, job
from queue_runtime.errors import KeyReused
from queue_runtime.gate import key_state, set_rollout
from queue_runtime.gate._guard import guarded_callable, wrap
from queue_runtime.handle import InlineHandle
from queue_runtime.registry import Registry
from queue_runtime.runtime import Runtime
from queue_runtime.store import ClaimedJob
from tests.integration import guard_app
from tests.integration.workers import Spawner
from tests.support import wait_until

pytestmark = [pytest.mark.pg]

jobs = Registry()
calls: list[int] = []


@job(name="tests.guard.once", idempotency="needs_key", registry=jobs)
def once(n: int) -> dict[str, int]:
    calls.append(n)
    return {"n": n, "call": len(calls)}


@job(name="tests.guard.once_async", idempotency="needs_key", registry=jobs)
async def once_async(n: int) -> int:
    await asyncio.sleep(0)
    calls.append(n)
    return n * 2


def _claimed(
    job_id: int, name: str, key: str | None, args: dict[str, int] | None = None
) -> ClaimedJob:
    return ClaimedJob(job_id, name, "batch", args or {}, 1, 5, None, key, datetime.now(UTC))


def test_a_completed_keys_redelivery_returns_the_stored_result(runtime: Runtime) -> None:
    calls.clear()
    first = wrap(runtime, _claimed(1, once.name, "order-1"), once)
    assert first is not None
    assert first(5) == {"n": 5, "call": 1}
    state = key_state(runtime, "order-1")
    assert state is not None
    assert (state.state, state.result, state.job_id) == ("completed", {"n": 5, "call": 1}, 1)

    redelivery = wrap(runtime, _claimed(1, once.name, "order-1"), once)
    assert redelivery is not None
    assert redelivery(5) == {"n": 5, "call": 1}  # the stored result
    assert calls == [5]  # the function did not run again


def test_no_key_no_guard(runtime: Runtime) -> None:
    assert wrap(runtime, _claimed(1, once.name, None), once) is None


def test_an_async_job_is_guarded_too(runtime: Runtime) -> None:
    calls.clear()
    guarded = guarded_callable(runtime, once_async, "async-1", 7)
    assert asyncio.run(guarded(4)) == 8
    assert asyncio.run(guarded(4)) == 8
    assert calls == [4]


def test_a_failed_attempt_leaves_the_key_to_the_next_one(runtime: Runtime) -> None:
    attempts: list[int] = []

    @job(name="tests.guard.flaky", registry=Registry())
    def flaky(n: int) -> int:
        attempts.append(n)
        if len(attempts) == 1:
            raise RuntimeError("first attempt fails")
        return n

    guarded = guarded_callable(runtime, flaky, "flaky-1", 3)
    with pytest.raises(RuntimeError):
        guarded(1)
    assert key_state(runtime, "flaky-1").state == "in_progress"  # type: ignore[union-attr]
    assert guarded(1) == 1
    assert guarded(1) == 1
    assert attempts == [1, 1]


def test_inline_runs_with_a_key_are_guarded(runtime: Runtime) -> None:
    calls.clear()
    set_rollout(runtime, once.name, "inline", who="test")
    first = once.enqueue(9, idempotency_key="inline-9")
    again = once.enqueue(9, idempotency_key="inline-9")
    assert isinstance(first, InlineHandle) and isinstance(again, InlineHandle)
    assert first.result() == again.result() == {"n": 9, "call": 1}
    assert calls == [9]


def test_an_inline_run_of_a_key_reused_with_other_arguments_is_refused_at_enqueue(
    runtime: Runtime,
) -> None:
    calls.clear()
    set_rollout(runtime, once.name, "inline", who="test")
    first = once.enqueue(1, idempotency_key="inline-k")
    with pytest.raises(KeyReused, match="'inline-k' names another call of " + once.name):
        once.enqueue(3, idempotency_key="inline-k")  # never answered with the first's result
    assert once.enqueue(1, idempotency_key="inline-k").result() == first.result()
    assert calls == [1]


def test_a_worker_run_of_a_key_another_call_completed_fails_permanently(
    runtime: Runtime,
) -> None:
    calls.clear()
    done = wrap(runtime, _claimed(1, once.name, "order-7", {"n": 1}), once)
    assert done is not None and done(1) == {"n": 1, "call": 1}
    other = wrap(runtime, _claimed(2, once.name, "order-7", {"n": 2}), once)
    assert other is not None
    with pytest.raises(KeyReused) as refused:
        other(2)
    assert isinstance(refused.value, Permanent)  # dead-lettered at once, never retried
    assert calls == [1]


# -- real workers, SIGKILL ----------------------------------------------------


@pytest.fixture
def workers(tmp_path: Path) -> Iterator[Spawner]:
    spawned = Spawner(tmp_path, app="tests.integration.guard_app")
    try:
        yield spawned
    finally:
        spawned.stop_all()


def _kill_mid_run_then_redeliver(
    settings: Settings, workers: Spawner, atomic: bool
) -> tuple[Runtime, int, list[tuple[int, int]], int]:
    tuned = settings.model_copy(update={"lease_ttl": 2.0, "poll_interval": 0.1})
    guard_app.create_tables(tuned.database_url or "", tuned.schema_name)
    rt = configure(tuned)
    dsn, schema = tuned.database_url or "", tuned.schema_name
    handle = guard_app.charge.enqueue(42, atomic=atomic, linger=60.0, idempotency_key="order-42")
    victim = workers.start(tuned, "--pool", "batch", "--concurrency", "1")
    wait_until(lambda: guard_app.charges(dsn, schema), timeout=30, message="the charge")
    victim.send_signal(signal.SIGKILL)  # lingering after the effect: the job is not acked
    victim.wait(timeout=10)
    workers.start(tuned, "--pool", "batch", "--concurrency", "1")
    wait_until(
        lambda: rt.store.get(handle.id).status is JobStatus.SUCCEEDED,  # type: ignore[union-attr]
        timeout=60,
        message="the redelivered job to succeed",
    )
    return rt, handle.id, guard_app.charges(dsn, schema), victim.pid


@pytest.mark.redis
@pytest.mark.slow
def test_sigkill_after_the_key_completed_the_redelivery_does_not_charge_again(
    settings: Settings, workers: Spawner
) -> None:
    rt, job_id, charged, victim = _kill_mid_run_then_redeliver(settings, workers, atomic=True)
    try:
        assert charged == [(42, victim)]  # once, by the killed worker
        assert rt.store.get(job_id).result == {"charged": 42}  # type: ignore[union-attr]
        state = key_state(rt, "order-42")
        assert state is not None and state.state == "completed"
    finally:
        rt.close()


@pytest.mark.redis
@pytest.mark.slow
def test_the_window_a_kill_between_effect_and_key_completion_charges_twice(
    settings: Settings, workers: Spawner
) -> None:
    """Documented, not hidden: the effect committed alone, the key still in progress."""
    rt, _, charged, victim = _kill_mid_run_then_redeliver(settings, workers, atomic=False)
    try:
        assert [order for order, _ in charged] == [42, 42]
        assert charged[0][1] == victim and charged[1][1] != victim
        state = key_state(rt, "order-42")
        assert state is not None and state.state == "completed"
    finally:
        rt.close()
