"""Enqueue: validate, then store (queue mode) or run at once (inline mode).

Validation happens first in both modes, so a call that would be refused in
production is refused in tests and during an inline rollout too.

In queue mode each enqueue asks the gate (:func:`queue_runtime.gate.gate_decision`):
the job's rollout mode and, for a gated job, its certification decide whether
this run is stored for workers or runs inline, as before the migration. A
keyed run that goes inline passes through the execution guard too.

An inline run keeps the site's old shape (``options.inline``): the arguments
are encoded and validated first, then a thread, executor or task site runs the
job in the background as it did before the migration, a direct call in the
caller. The queued path does not look at the shape at all.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import Executor
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from queue_runtime._inline import CALL, InlineRun, InlineShape, KeyGuard, run_inline
from queue_runtime.config import Mode, RolloutMode
from queue_runtime.definition import JobDefinition
from queue_runtime.errors import PayloadError
from queue_runtime.gate.decide import gate_decision
from queue_runtime.gate.guard import checked_digest
from queue_runtime.handle import JobHandle
from queue_runtime.pg.bulk import JobBatch
from queue_runtime.runtime import Runtime, current
from queue_runtime.store import NewJob


@dataclass(frozen=True, slots=True)
class EnqueueOptions:
    idempotency_key: str | None = None
    run_at: datetime | timedelta | None = None
    tenant: str | None = None
    conn: Any = None  # a psycopg connection: enqueue inside the caller's transaction
    priority: int | None = None
    inline: InlineShape = InlineShape.CALL  # how the site ran the job before: how it runs inline
    executor: Executor | None = None  # InlineShape.EXECUTOR's executor (None: the loop's default)


NO_OPTIONS = EnqueueOptions()  # shared: most enqueues give none, and the record is frozen


def enqueue_one(
    job: JobDefinition,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    options: EnqueueOptions,
) -> JobHandle:
    runtime = current()
    payload = job.codec.encode(args, kwargs, runtime.settings.max_payload_bytes)
    if runtime.mode is Mode.INLINE:
        return run_inline(job, payload, _shaped(options))
    if not gate_decision(runtime, job, options.idempotency_key).run_async:
        return run_inline(job, payload, _guarded(runtime, job, payload, options))
    new = _new_job(job, runtime, payload, options)
    job_id, created = runtime.store.enqueue_returning(new, options.conn)
    return JobHandle(job_id, runtime, created=created)


def enqueue_batch(
    job: JobDefinition,
    calls: list[tuple[tuple[Any, ...], dict[str, Any]]],
    options: EnqueueOptions,
) -> list[JobHandle]:
    runtime = current()
    limit = runtime.settings.max_payload_bytes
    payloads = job.codec.encode_many(calls, limit)
    if runtime.mode is Mode.INLINE:
        return [run_inline(job, payload) for payload in payloads]
    routes = _routes(runtime, job, len(payloads))
    queued = [p for p, run_async in zip(payloads, routes, strict=True) if run_async]
    jobs = _new_jobs(job, runtime, queued, options)
    ids = iter(runtime.store.enqueue_many(jobs))
    handles: list[JobHandle] = []
    for payload, run_async in zip(payloads, routes, strict=True):
        handles.append(JobHandle(next(ids), runtime) if run_async else run_inline(job, payload))
    return handles


def _routes(runtime: Runtime, job: JobDefinition, count: int) -> list[bool]:
    """``gate_decision(...).run_async`` of each call of a batch. Unless a percentage rollout
    splits the batch, the first call's async decision holds for all (the same cached state)."""
    if count == 0:
        return []
    first = gate_decision(runtime, job).run_async
    rollout = runtime.gate_cache.rollout(job.name)
    mode = rollout.mode if rollout else runtime.settings.default_rollout
    if first and mode is not RolloutMode.PERCENT:
        return [True] * count
    return [first] + [gate_decision(runtime, job).run_async for _ in range(count - 1)]


def _shaped(options: EnqueueOptions) -> InlineRun:
    """The inline run of inline mode: the site's shape, no guard."""
    if options.inline is InlineShape.CALL:
        return CALL
    return InlineRun(options.inline, options.executor)


def _guarded(
    runtime: Runtime, job: JobDefinition, payload: dict[str, Any], options: EnqueueOptions
) -> InlineRun:
    """Inline, as before the migration; a keyed run goes through the execution guard.

    A key that already names another call raises KeyReused here, at enqueue.
    """
    key = options.idempotency_key
    if key is None:
        return _shaped(options)
    guard = KeyGuard(runtime, key, checked_digest(runtime, job, key, payload))
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
        run_at=_absolute(options.run_at),
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


def _absolute(run_at: datetime | timedelta | None) -> datetime | None:
    if run_at is None:
        return None
    if isinstance(run_at, timedelta):
        return datetime.now(UTC) + run_at
    if run_at.tzinfo is None:
        raise PayloadError(f"run_at={run_at.isoformat()} has no timezone; pass an aware datetime")
    return run_at
