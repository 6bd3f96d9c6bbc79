"""Rows of the job store <-> the typed records of ``queue_runtime.store``."""

from __future__ import annotations

from typing import Any

from psycopg.types.json import Jsonb

from queue_runtime.store import ClaimedJob, JobRecord, JobStatus, NewJob, PoolStats


def jsonb_or_null(value: Any) -> Jsonb | None:
    """A job result as jsonb; ``None`` is stored as SQL NULL (no JSON ``null`` bytes)."""
    return None if value is None else Jsonb(value)


def args_jsonb(args: dict[str, Any]) -> Jsonb:
    """The arguments as jsonb, reusing the JSON text the payload codec already made."""
    text = getattr(args, "json", None)
    if text is None:
        return Jsonb(args)
    return Jsonb(args, dumps=lambda _: text)


def claimed(row: tuple[Any, ...]) -> ClaimedJob:
    return ClaimedJob(
        id=row[0],
        name=row[1],
        pool=row[2],
        args=row[3],
        attempt=row[4],
        max_attempts=row[5],
        tenant=row[6],
        idempotency_key=row[7],
        enqueued_at=row[8],
        due=row[11],
        unknown_for=row[12],
    )


def claim_order(row: tuple[Any, ...]) -> tuple[int, Any, int]:
    """UPDATE ... RETURNING has no order: best priority first, then oldest run_at."""
    return (-row[9], row[10], row[0])


def record(row: tuple[Any, ...]) -> JobRecord:
    return JobRecord(
        id=row[0],
        name=row[1],
        pool=row[2],
        status=JobStatus(row[3]),
        args=row[4] if row[4] is not None else {},
        attempt=row[5],
        max_attempts=row[6],
        result=row[7],
        error=row[8],
        tenant=row[9],
        idempotency_key=row[10],
        enqueued_at=row[11],
        finished_at=row[12],
        history=list(row[13] or []),
        started_at=row[14],
        worker=row[15],
    )


def enqueue_params(job: NewJob, channel: str) -> tuple[Any, ...]:
    return (
        job.name,
        job.pool,
        job.priority,
        args_jsonb(job.args),
        job.max_attempts,
        job.run_at,
        job.tenant,
        channel,
    )


def keyed_params(job: NewJob, channel: str, sequence: str) -> dict[str, Any]:
    return {
        "key": job.idempotency_key,
        "seq": sequence,
        "name": job.name,
        "pool": job.pool,
        "priority": job.priority,
        "args": args_jsonb(job.args),
        "max_attempts": job.max_attempts,
        "run_at": job.run_at,
        "tenant": job.tenant,
        "channel": channel,
    }


def pool_stats(
    pools: list[str], hot: list[tuple[Any, ...]], history: list[tuple[Any, ...]]
) -> list[PoolStats]:
    """Merge the two per-pool aggregates; configured pools appear even when idle."""
    hot_by = {row[0]: row for row in hot}
    hist_by = {row[0]: row for row in history}
    names = list(dict.fromkeys([*pools, *hot_by, *hist_by]))
    return [_one_pool(name, hot_by.get(name), hist_by.get(name)) for name in names]


def _one_pool(name: str, hot: tuple[Any, ...] | None, hist: tuple[Any, ...] | None) -> PoolStats:
    depth, scheduled, running, lag = hot[1:5] if hot else (0, 0, 0, 0.0)
    dead, succeeded = hist[1:3] if hist else (0, 0)
    return PoolStats(
        pool=name,
        depth=depth,
        scheduled=scheduled,
        running=running,
        lag_seconds=float(lag),
        dead=dead,
        succeeded_last_minute=succeeded,
    )
