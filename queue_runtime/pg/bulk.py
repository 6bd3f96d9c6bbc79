"""Bulk enqueue: one transaction, ids allocated up front, a binary COPY, one NOTIFY per pool.

COPY returns nothing, so the ids come from the jobs sequence first (one round
trip, with the database clock for ``run_at``). Idempotency keys of the batch
are reserved before the COPY; a job whose key is already known is not
inserted and answers with the existing job's id.
"""

from __future__ import annotations

from typing import Any, Protocol

import psycopg

from queue_runtime.pg.queries import COPY_TYPES
from queue_runtime.pg.rows import args_jsonb
from queue_runtime.store import NewJob

Conn = psycopg.Connection[Any]


class Rendered(Protocol):
    ALLOCATE_IDS: str
    CLAIM_KEYS: str
    EXISTING_KEYS: str
    COPY_JOBS: str
    NOTIFY_POOLS: str


def copy_jobs(
    conn: Conn, sql: Rendered, sequence: str, channel: str, jobs: list[NewJob]
) -> list[int]:
    with conn.transaction():
        row = conn.execute(sql.ALLOCATE_IDS, (sequence, len(jobs))).fetchone()
        assert row is not None, "SELECT now(), array(...) returns one row"
        now, ids = row
        ids, fresh = _reserve_keys(conn, sql, jobs, list(ids))
        with conn.cursor().copy(sql.COPY_JOBS) as copy:
            copy.set_types(COPY_TYPES)
            for job_id, job, new in zip(ids, jobs, fresh, strict=True):
                if new:
                    copy.write_row(_copy_row(job_id, job, now))
        pools = sorted({job.pool for job, new in zip(jobs, fresh, strict=True) if new})
        if pools:
            conn.execute(sql.NOTIFY_POOLS, (channel, pools))
    return ids


def _copy_row(job_id: int, job: NewJob, now: Any) -> tuple[Any, ...]:
    run_at = job.run_at or now
    return (
        job_id,
        job.name,
        job.pool,
        job.priority,
        args_jsonb(job.args),
        job.max_attempts,
        run_at,
        job.tenant,
        job.idempotency_key,
    )


def _reserve_keys(
    conn: Conn, sql: Rendered, jobs: list[NewJob], ids: list[int]
) -> tuple[list[int], list[bool]]:
    """Final ids and which jobs to insert; a known (or repeated) key reuses its job's id."""
    keyed = [(i, job.idempotency_key) for i, job in enumerate(jobs) if job.idempotency_key]
    fresh = [True] * len(jobs)
    if not keyed:
        return ids, fresh
    first: dict[str, int] = {}
    for i, key in keyed:
        first.setdefault(key, i)
    new_keys = _insert_keys(conn, sql, [(key, ids[i]) for key, i in first.items()])
    owners = _owners(conn, sql, [key for key in first if key not in new_keys])
    for i, key in keyed:
        if key in new_keys and first[key] == i:
            continue
        fresh[i] = False
        ids[i] = ids[first[key]] if key in new_keys else owners[key]
    return ids, fresh


def _insert_keys(conn: Conn, sql: Rendered, pairs: list[tuple[str, int]]) -> set[str]:
    keys = [key for key, _ in pairs]
    found = conn.execute(sql.CLAIM_KEYS, (keys, [job_id for _, job_id in pairs])).fetchall()
    return {row[0] for row in found}


def _owners(conn: Conn, sql: Rendered, keys: list[str]) -> dict[str, int]:
    if not keys:
        return {}
    return dict(conn.execute(sql.EXISTING_KEYS, (keys,)).fetchall())
