"""The execution guard: a keyed job's completion is recorded, and a redelivery returns it.

A job enqueued with an idempotency key runs through :func:`run_guarded`
(the worker wraps the function it resolves with :func:`wrap`; inline runs do
the same). Before the function runs, ``job_keys`` gets the key
``in_progress`` (a previous attempt that died leaves it so; the next attempt
takes it over). After it returns, the key is ``completed`` with the JSON
result. When a key is already ``completed``, the stored result is returned and
the function does not run again.

A key names one call: it is stored with the digest of the job's name and
arguments (:func:`queue_runtime.store.args_digest`), and a run of the same key
for another call raises :class:`~queue_runtime.errors.KeyReused` (a
``Permanent`` error: a worker dead-letters the job at once) instead of being
answered with the other call's result. An inline run (inline mode, or the
gate keeps the job inline) checks before it runs (:func:`checked_call`), so the
enqueue itself raises; it also looks at the keys enqueues took
(``idempotency_keys``): a key a queued job holds for another call raises
KeyReused, and for this very call answers with that job (it runs once, on a
worker). Without a database the keys are the process's
(:class:`~queue_runtime.local_keys.LocalKeys`).

Completion in the job's own transaction: a job whose effect is written to
the same PostgreSQL can call :func:`complete_in(conn, result)` inside the
transaction that writes the effect; the key then commits with the effect, and
a crash can no longer separate them.

The remaining window (documented, not hidden): without ``complete_in``, the
effect and the key's completion are two commits. A process killed after the
job's effect committed and before the key's completion committed leaves the
key ``in_progress``; the redelivery runs the function again, and a
non-idempotent effect happens twice. Two attempts running at once (a worker
that lost its lease but keeps running) both pass the guard; fencing stops
the stale one from completing the job row, not from running the body.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from queue_runtime.definition import Defined, JobDefinition
from queue_runtime.errors import KeyReused
from queue_runtime.store import KeyState, args_digest

if TYPE_CHECKING:
    from queue_runtime.runtime import Runtime
    from queue_runtime.store import ClaimedJob

__all__ = [
    "CheckedCall",
    "KeyState",
    "checked_call",
    "complete_in",
    "guarded_callable",
    "key_state",
    "run_guarded",
    "wrap",
]


@dataclass(slots=True)
class _Guarded:
    runtime: Runtime
    job: str
    key: str
    job_id: int | None
    digest: str | None
    completed_in_transaction: bool = False


_current: contextvars.ContextVar[_Guarded | None] = contextvars.ContextVar(
    "queue_runtime_guarded_key", default=None
)


class _Completed(Exception):
    def __init__(self, result: Any) -> None:
        self.result = result


def wrap(runtime: Runtime, job: ClaimedJob, function: Defined) -> Callable[..., Any] | None:
    """The worker's hook: ``function.fn`` guarded by the job's idempotency key (None without one)."""
    if job.idempotency_key is None:
        return None
    digest = args_digest(job.name, job.args)
    return guarded_callable(runtime, function, job.idempotency_key, job.id, digest)


@dataclass(frozen=True, slots=True)
class CheckedCall:
    """What an inline run of a keyed call does: run under ``digest``, or answer with ``job_id``."""

    digest: str
    job_id: int | None = None  # a queued job took the key for this very call: its handle


def checked_call(runtime: Runtime, job: Defined, key: str, payload: dict[str, Any]) -> CheckedCall:
    """This call's digest, or the job an enqueue took ``key`` for with these arguments;
    KeyReused if ``key`` already names another call (enqueued, or in the guard's keys).

    An inline run asks before it runs, so the caller of ``enqueue`` gets the
    error (a run's own failures become the handle's outcome instead).
    """
    digest = args_digest(job.definition.name, payload)
    if runtime.has_store:  # without a store nothing was ever enqueued
        held = runtime.store.enqueued_key(key)
        if held is not None and held.names_other_call(digest):
            raise KeyReused(f"{key!r} names another call (job {held.job_id}, enqueued)")
        if held is not None:
            return CheckedCall(digest, held.job_id)
    stored = runtime.keys.key_state(key)
    if stored is not None and stored.names_other_call(digest):
        raise _reused(key, stored)
    return CheckedCall(digest)


def refuse_guard_key_of_another_call(
    runtime: Runtime, job: Defined, key: str, payload: dict[str, Any]
) -> None:
    """KeyReused if an inline run (the guard's keys) holds ``key`` for another call.

    A queued enqueue checks this before storing: else the worker's guard would find the key
    completed by the other call and hand back its result, and this call would never run.
    """
    stored = runtime.keys.key_state(key)
    if stored is not None and stored.names_other_call(args_digest(job.definition.name, payload)):
        raise _reused(key, stored)


def guarded_callable(
    runtime: Runtime, job: Defined, key: str, job_id: int | None, digest: str | None = None
) -> Callable[..., Any]:
    """``function.fn`` that runs at most once to completion per key (sync or async alike).

    ``digest`` names the call (:func:`queue_runtime.store.args_digest`); None matches any.
    """
    function = job.definition
    fn = function.fn
    if function.is_async:

        @functools.wraps(fn)
        async def run_async(*args: Any, **kwargs: Any) -> Any:
            guarded = _Guarded(runtime, function.name, key, job_id, digest)
            try:
                await asyncio.to_thread(_begin, guarded)
            except _Completed as done:
                return _decode_result(function, done.result)
            token = _current.set(guarded)
            try:
                value = await fn(*args, **kwargs)
            finally:
                _current.reset(token)
            await asyncio.to_thread(_complete, guarded, function, value)
            return value

        return run_async

    @functools.wraps(fn)
    def run_sync(*args: Any, **kwargs: Any) -> Any:
        return run_guarded(runtime, function, key, job_id, lambda: fn(*args, **kwargs), digest)

    return run_sync


def run_guarded(
    runtime: Runtime,
    job: Defined,
    key: str,
    job_id: int | None,
    call: Callable[[], Any],
    digest: str | None = None,
) -> Any:
    """Run ``call`` under the key: the stored result if the key completed, else run and record.

    KeyReused when the key names another call than ``digest``.
    """
    function = job.definition
    guarded = _Guarded(runtime, function.name, key, job_id, digest)
    try:
        _begin(guarded)
    except _Completed as done:
        return _decode_result(function, done.result)
    token = _current.set(guarded)
    try:
        value = call()
    finally:
        _current.reset(token)
    _complete(guarded, function, value)
    return value


def complete_in(conn: Any, result: Any = None) -> bool:
    """Mark the running job's key completed inside the caller's transaction on ``conn``.

    Call it in the transaction that writes the job's effect (same PostgreSQL
    database as the queue): the key and the effect then commit together. The
    result stored is ``result`` (JSON-ready); the job's return value is still
    what the handle gets on this run. False when no guarded job runs here.
    """
    guarded = _current.get()
    if guarded is None:
        return False
    store = guarded.runtime.keys
    store.complete_key_in(conn, guarded.key, guarded.job, result, guarded.job_id, guarded.digest)
    guarded.completed_in_transaction = True
    return True


def key_state(runtime: Runtime, key: str) -> KeyState | None:
    """The stored state of an idempotency key, or None."""
    return runtime.keys.key_state(key)


def _begin(guarded: _Guarded) -> None:
    """Take the key (in_progress); raise _Completed with the stored result if it completed,
    KeyReused if another call holds it."""
    store = guarded.runtime.keys
    stored = store.begin_key(guarded.key, guarded.job, guarded.job_id, guarded.digest)
    if stored is None:
        return
    if stored.names_other_call(guarded.digest):
        raise _reused(guarded.key, stored)
    raise _Completed(stored.result)


def _reused(key: str, stored: KeyState) -> KeyReused:
    holder = f"job {stored.job_id}" if stored.job_id is not None else "an inline run"
    return KeyReused(f"{key!r} names another call of {stored.job} ({holder}, {stored.state})")


def _complete(guarded: _Guarded, function: JobDefinition, value: Any) -> None:
    if guarded.completed_in_transaction:
        return
    result = function.codec.encode_result(value)
    store = guarded.runtime.keys
    store.complete_key(guarded.key, guarded.job, result, guarded.job_id, guarded.digest)


def _decode_result(function: JobDefinition, stored: Any) -> Any:
    """The stored JSON result back as the value the function returned (typed when annotated)."""
    return function.codec.decode_result(stored)
