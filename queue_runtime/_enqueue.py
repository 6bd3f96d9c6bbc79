"""Enqueue: validate, then store (queue mode) or run at once (inline mode).

Validation happens first in both modes, so a call that would be refused in
production is refused in tests and during an inline rollout too.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from queue_runtime._inline import run_inline
from queue_runtime.config import Mode
from queue_runtime.errors import PayloadError
from queue_runtime.handle import JobHandle
from queue_runtime.pg.connect import public_errors
from queue_runtime.runtime import Runtime, current
from queue_runtime.store import NewJob

if TYPE_CHECKING:
    from queue_runtime.registry import JobFunction


@dataclass(frozen=True, slots=True)
class EnqueueOptions:
    idempotency_key: str | None = None
    run_at: datetime | timedelta | None = None
    tenant: str | None = None
    conn: Any = None  # a psycopg connection: enqueue inside the caller's transaction
    priority: int | None = None


def enqueue_one(
    jf: JobFunction[..., Any],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    options: EnqueueOptions,
) -> JobHandle:
    runtime = current()
    payload = jf.codec.encode(args, kwargs, runtime.settings.max_payload_bytes)
    if runtime.mode is Mode.INLINE:
        return run_inline(jf, payload)
    new = _new_job(jf, runtime, payload, options)
    with public_errors():
        job_id, created = runtime.store.enqueue_returning(new, options.conn)
    return JobHandle(job_id, runtime, created=created)


def enqueue_batch(
    jf: JobFunction[..., Any],
    calls: list[tuple[tuple[Any, ...], dict[str, Any]]],
    options: EnqueueOptions,
) -> list[JobHandle]:
    runtime = current()
    limit = runtime.settings.max_payload_bytes
    payloads = [jf.codec.encode(tuple(args), dict(kwargs), limit) for args, kwargs in calls]
    if runtime.mode is Mode.INLINE:
        return [run_inline(jf, payload) for payload in payloads]
    jobs = [_new_job(jf, runtime, payload, options) for payload in payloads]
    with public_errors():
        ids = runtime.store.enqueue_many(jobs)
    return [JobHandle(job_id, runtime) for job_id in ids]


def _new_job(
    jf: JobFunction[..., Any], runtime: Runtime, payload: dict[str, Any], options: EnqueueOptions
) -> NewJob:
    spec = jf.spec(runtime.settings)
    return NewJob(
        name=jf.name,
        pool=spec.pool,
        args=payload,
        priority=spec.priority if options.priority is None else options.priority,
        run_at=_absolute(options.run_at),
        idempotency_key=options.idempotency_key,
        tenant=options.tenant,
        max_attempts=spec.retry.max_attempts,
    )


def _absolute(run_at: datetime | timedelta | None) -> datetime | None:
    if run_at is None:
        return None
    if isinstance(run_at, timedelta):
        return datetime.now(UTC) + run_at
    if run_at.tzinfo is None:
        raise PayloadError(f"run_at={run_at.isoformat()} has no timezone; pass an aware datetime")
    return run_at
