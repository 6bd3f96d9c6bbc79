"""Enqueue: validate, then store (queue mode) or run at once (inline mode).

Validation happens first in both modes, so a call that would be refused in
production is refused in tests and during an inline rollout too: the
arguments (:mod:`queue_runtime.payload`) and the options (the key, ``run_at``,
``priority``: :mod:`queue_runtime._limits`), each a ``PayloadError`` before
anything is stored or run.

A keyed run that goes inline passes through the execution guard in every
mode: inline mode (the rollback) included, where the guard's keys are
PostgreSQL's, or the process's without a database. A key an enqueue already
took answers for the same call with its job, and refuses another call.

In queue mode each enqueue asks the gate (:func:`queue_runtime.gate.gate_decision`):
the job's rollout mode and, for a gated job, its certification decide whether
this run is stored for workers or runs inline, as before the migration.

An inline run keeps the site's old shape (``options.inline``): the arguments
are encoded and validated first, then a thread, executor or task site runs the
job in the background as it did before the migration, a direct call in the
caller. The queued path does not look at the shape at all.

Two safety nets for moved call sites: an argument no codec covers
(:class:`~queue_runtime.errors.Unencodable`) makes the call run as the site ran
it, with the caller's objects (:mod:`queue_runtime.fallbacks` counts it); a
queued enqueue inside the app's transaction is stored at its commit and
dropped on rollback (:mod:`queue_runtime._after_commit`).

``aenqueue_one`` is ``enqueue_one`` for a coroutine: the same decisions
(``_route``: encode or fall back, inline mode or a closed gate runs inline;
the keyed guard; the deferral to the app's commit), written once for both; the
store write is awaited on the running loop's own connection pool, no thread.
What has no async twin goes through a worker thread (``asyncio.to_thread``):
running the job inline (inline mode, a closed gate, an unencodable call's
fallback), the gate's refresh of its cached tables when one is due (once per
``rollout_refresh`` seconds), the keyed guard's read, and an enqueue into the
caller's (sync) transaction, ``conn=``.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

from queue_runtime._after_commit import after_commit, after_commit_many
from queue_runtime._inline import (
    CALL,
    InlineRun,
    InlineShape,
    KeyGuard,
    run_inline,
    run_original,
    shadow_probe,
)
from queue_runtime._limits import absolute_run_at, checked_key, checked_priority, checked_tenant
from queue_runtime.config import Mode, RolloutMode
from queue_runtime.definition import JobDefinition
from queue_runtime.errors import PayloadError, Unencodable
from queue_runtime.fallbacks import record
from queue_runtime.gate._decide import gate_decision
from queue_runtime.gate._guard import checked_call, refuse_guard_key_of_another_call
from queue_runtime.handle import JobHandle
from queue_runtime.pg.bulk import JobBatch
from queue_runtime.runtime import Runtime, current
from queue_runtime.store import NewJob, batch_digests


@dataclass(frozen=True, slots=True)
class EnqueueOptions:
    idempotency_key: str | None = None
    run_at: datetime | timedelta | None = None
    tenant: str | None = None
    conn: Any = None  # a psycopg connection: enqueue inside the caller's transaction
    priority: int | None = None
    inline: InlineShape = InlineShape.CALL  # how the site ran the job before: how it runs inline
    executor: Executor | None = None  # InlineShape.EXECUTOR's executor (None: the loop's default)
    # False: store at once even inside the app's transaction (Django's task API promises an id
    # at enqueue and leaves on_commit to the caller).
    after_commit: bool = True


NO_OPTIONS = EnqueueOptions()  # shared: most enqueues give none, and the record is frozen


Run = Callable[[], JobHandle]


def enqueue_one(
    job: JobDefinition,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    options: EnqueueOptions,
) -> JobHandle:
    runtime = current()
    route = _route(runtime, job, args, kwargs, options)
    if not isinstance(route, NewJob):
        return route()
    _guard_key(runtime, job, route)

    def store() -> JobHandle:
        job_id, created = runtime.store.enqueue_returning(route, options.conn)
        return JobHandle(job_id, runtime, created=created)

    deferred = _deferred(store, job, runtime, options)
    return store() if deferred is None else deferred


async def aenqueue_one(
    job: JobDefinition,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    options: EnqueueOptions,
) -> JobHandle:
    """``enqueue_one`` awaited: the store write on the running loop's pool (see the module)."""
    if options.conn is not None:  # the caller's transaction is a sync connection
        return await asyncio.to_thread(enqueue_one, job, args, kwargs, options)
    runtime = current()
    if runtime.mode is not Mode.INLINE and runtime.gate_cache.due:
        await asyncio.to_thread(runtime.gate_cache.refresh_if_due)
    route = _route(runtime, job, args, kwargs, options)
    if not isinstance(route, NewJob):
        return await asyncio.to_thread(route)
    if route.idempotency_key is not None:
        await asyncio.to_thread(_guard_key, runtime, job, route)

    def store() -> JobHandle:  # at the commit of the app's transaction, in its thread
        job_id, created = runtime.store.enqueue_returning(route)
        return JobHandle(job_id, runtime, created=created)

    deferred = _deferred(store, job, runtime, options)
    if deferred is not None:
        return deferred
    job_id, created = await runtime.store.aenqueue_returning(route)
    return JobHandle(job_id, runtime, created=created)


def _route(
    runtime: Runtime,
    job: JobDefinition,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    options: EnqueueOptions,
) -> NewJob | Run:
    """What an enqueue does with this call: the job to store, or the run that answers it
    in-process (an unencodable call's fallback, inline mode, a closed gate, a keyed run)."""
    if options is not NO_OPTIONS:
        _check_options(job, options)
    try:
        payload = job.codec.encode(args, kwargs, runtime.settings.max_payload_bytes)
    except Unencodable as exc:  # a moved call never breaks: it runs as the site ran it
        record(job.name, exc)
        _count_fallback(runtime, job, exc)
        return functools.partial(run_original, job, args, kwargs, _shaped(options))
    if (
        runtime.mode is Mode.INLINE
        or not gate_decision(runtime, job, options.idempotency_key).run_async
    ):
        return functools.partial(_inline, runtime, job, payload, options)
    return _new_job(job, runtime, payload, options)


def _guard_key(runtime: Runtime, job: JobDefinition, new: NewJob) -> None:
    """KeyReused when the call's key already names another call in the execution guard."""
    if new.idempotency_key is not None:
        refuse_guard_key_of_another_call(runtime, job, new.idempotency_key, new.args)


def _deferred(
    store: Run, job: JobDefinition, runtime: Runtime, options: EnqueueOptions
) -> JobHandle | None:
    """The handle of a write deferred to the commit of the app's transaction; None: write now."""
    if options.conn is None and options.after_commit:  # conn=: the caller's transaction has it
        return after_commit(store, job.name, runtime)
    return None


def enqueue_batch(
    job: JobDefinition,
    calls: list[tuple[tuple[Any, ...], dict[str, Any]]],
    options: EnqueueOptions,
    keys: Sequence[str | None] | None = None,
) -> list[JobHandle]:
    runtime = current()
    _check_options(job, options)
    checked = None if keys is None else _checked_keys(job, keys, calls)
    limit = runtime.settings.max_payload_bytes
    try:
        payloads = job.codec.encode_many(calls, limit)
    except Unencodable:  # one call each: the encodable ones queue, the others fall back
        return [
            enqueue_one(job, *call, _keyed(options, checked, i)) for i, call in enumerate(calls)
        ]
    if checked is not None:
        return _enqueue_keyed_batch(runtime, job, payloads, options, checked)
    if runtime.mode is Mode.INLINE:
        probed = _probed(runtime, job, CALL)
        return [run_inline(job, payload, probed) for payload in payloads]
    routes = _routes(runtime, job, [None] * len(payloads))
    queued = [p for p, run_async in zip(payloads, routes, strict=True) if run_async]

    def store(keep: list[int]) -> list[JobHandle]:
        jobs = _new_jobs(job, runtime, [queued[i] for i in keep], options)
        return [JobHandle(job_id, runtime) for job_id in runtime.store.enqueue_many(jobs)]

    deferred = after_commit_many(store, len(queued), job.name, runtime) if queued else None
    stored = iter(store(list(range(len(queued)))) if deferred is None else deferred)
    probed = _probed(runtime, job, CALL) if not all(routes) else CALL
    handles: list[JobHandle] = []
    for payload, run_async in zip(payloads, routes, strict=True):
        handles.append(next(stored) if run_async else run_inline(job, payload, probed))
    return handles


def _keyed(options: EnqueueOptions, keys: list[str | None] | None, i: int) -> EnqueueOptions:
    return options if keys is None else replace(options, idempotency_key=keys[i])


def _checked_keys(
    job: JobDefinition, keys: Sequence[str | None], calls: list[Any]
) -> list[str | None]:
    if isinstance(keys, str) or len(keys) != len(calls):
        raise PayloadError(
            f"{job.name}: idempotency_keys= needs one key (or None) per call: "
            f"{len(calls)} call(s), {1 if isinstance(keys, str) else len(keys)} key(s)"
        )
    return [None if key is None else checked_key(key, job.name) for key in keys]


def _check_options(job: JobDefinition, options: EnqueueOptions) -> None:
    """PayloadError for a key, tenant, ``run_at`` or ``priority`` the store would refuse."""
    if options.idempotency_key is not None:
        checked_key(options.idempotency_key, job.name)
    checked_tenant(options.tenant, job.name)
    absolute_run_at(options.run_at, job.name)
    checked_priority(options.priority, job.name)


def _enqueue_keyed_batch(
    runtime: Runtime,
    job: JobDefinition,
    payloads: list[Any],
    options: EnqueueOptions,
    keys: list[str | None],
) -> list[JobHandle]:
    """A batch with a key per call: keys as in ``enqueue``, all refusals before anything runs.

    A key given twice for different calls, or already naming another call (queued
    or in the inline guard), raises KeyReused before any job is stored or run.
    In inline mode every call runs inline, each through the guard.
    """
    calls = zip(payloads, keys, strict=True)
    batch_digests([NewJob(job.name, "", p, idempotency_key=k) for p, k in calls])
    inline_mode = runtime.mode is Mode.INLINE
    routes = [False] * len(keys) if inline_mode else _routes(runtime, job, keys)
    inline = {
        i: _guarded(runtime, job, payloads[i], EnqueueOptions(idempotency_key=keys[i]))
        for i, run_async in enumerate(routes)
        if not run_async
    }
    queued = [i for i, run_async in enumerate(routes) if run_async]
    for i in queued:
        if keys[i] is not None:
            refuse_guard_key_of_another_call(runtime, job, str(keys[i]), payloads[i])
    batch = JobBatch(
        _new_job(job, runtime, payloads[queued[0]], options) if queued else NO_JOB,
        [payloads[i] for i in queued],
        [keys[i] for i in queued],
    )
    stored = iter(runtime.store.enqueue_many_returning(batch) if queued else [])
    handles: list[JobHandle] = []
    for i, payload in enumerate(payloads):
        if i in inline:
            run = inline[i]
            if not isinstance(run, JobHandle):
                run = run_inline(job, payload, _probed(runtime, job, run))
            handles.append(run)
        else:
            job_id, created = next(stored)
            handles.append(JobHandle(job_id, runtime, created=created))
    return handles


NO_JOB = NewJob("", "", {})  # the template of an empty batch (never stored)


def _routes(runtime: Runtime, job: JobDefinition, keys: Sequence[str | None]) -> list[bool]:
    """``gate_decision(...).run_async`` of each call of a batch. Unless a percentage rollout
    splits the batch (by key where there is one), the first call's async decision holds for
    all (the same cached state)."""
    if not keys:
        return []
    first = gate_decision(runtime, job, keys[0]).run_async
    rollout = runtime.gate_cache.rollout(job.name)
    mode = rollout.mode if rollout else runtime.settings.default_rollout
    if first and mode is not RolloutMode.PERCENT:
        return [True] * len(keys)
    return [first] + [gate_decision(runtime, job, key).run_async for key in keys[1:]]


def _probed(runtime: Runtime, job: JobDefinition, run: InlineRun) -> InlineRun:
    """``run``, counting its arguments' round trip as shadow evidence (:mod:`queue_runtime.shadow`)."""
    probe = shadow_probe(runtime, job)
    return run if probe is None else replace(run, shadow=probe)


def _count_fallback(runtime: Runtime, job: JobDefinition, error: Unencodable) -> None:
    probe = shadow_probe(runtime, job)
    if probe is not None:
        probe.fallback(job, error)


def _shaped(options: EnqueueOptions) -> InlineRun:
    """The inline run of a call without a key: the site's shape, no guard."""
    if options.inline is InlineShape.CALL:
        return CALL
    return InlineRun(options.inline, options.executor)


def _inline(
    runtime: Runtime, job: JobDefinition, payload: dict[str, Any], options: EnqueueOptions
) -> JobHandle:
    """Run the call in-process (guarded when keyed), or answer with the job its key names."""
    run = _guarded(runtime, job, payload, options)
    if isinstance(run, JobHandle):
        return run
    return run_inline(job, payload, _probed(runtime, job, run))


def _guarded(
    runtime: Runtime, job: JobDefinition, payload: dict[str, Any], options: EnqueueOptions
) -> InlineRun | JobHandle:
    """Inline, as before the migration; a keyed run goes through the execution guard.

    A key that already names another call raises KeyReused here, at enqueue; a
    key a queued job took for this very call answers with that job's handle.
    """
    key = options.idempotency_key
    if key is None:
        return _shaped(options)
    checked = checked_call(runtime, job, key, payload)
    if checked.job_id is not None:
        return JobHandle(checked.job_id, runtime, created=False)
    guard = KeyGuard(runtime, key, checked.digest)
    return InlineRun(options.inline, options.executor, guard)


def _new_job(
    job: JobDefinition, runtime: Runtime, payload: dict[str, Any], options: EnqueueOptions
) -> NewJob:
    spec = runtime.spec(job)
    return NewJob(
        name=job.name,
        pool=spec.pool,
        args=payload,
        priority=spec.priority if options.priority is None else options.priority,
        run_at=absolute_run_at(options.run_at, job.name),
        idempotency_key=options.idempotency_key,
        tenant=options.tenant,
        max_attempts=spec.retry.max_attempts,
    )


def _new_jobs(
    job: JobDefinition, runtime: Runtime, payloads: list[Any], options: EnqueueOptions
) -> Sequence[NewJob]:
    """``_new_job`` of each payload; the spec and ``run_at`` are worked out once for the batch."""
    if not payloads:
        return []
    return JobBatch(_new_job(job, runtime, payloads[0], options), payloads)
