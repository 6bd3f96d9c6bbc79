"""Bulk enqueue: one transaction, ids allocated up front, a binary COPY, one NOTIFY per pool.

COPY returns nothing, so the ids come from the jobs sequence first (with the
database clock for ``run_at``). Idempotency keys of the batch are reserved
before the COPY; a job whose key is already known is not inserted and answers
with the existing job's id.

A batch without keys (what ``enqueue_many`` sends) takes four round trips:
``BEGIN`` and the id allocation, which also queues the NOTIFY of every pool of
the batch for the commit, are pipelined (one); the COPY (two); ``COMMIT``
(one). Its rows are written straight into the binary COPY format from the
JSON text the payload codec already made (no per-row adapter objects).
"""

from __future__ import annotations

import struct
from datetime import UTC, datetime
from typing import Any, Protocol

import psycopg
from psycopg.pq import TransactionStatus

from queue_runtime.payload import dumps
from queue_runtime.pg.queries import COPY_TYPES
from queue_runtime.pg.rows import args_jsonb
from queue_runtime.store import NewJob

Conn = psycopg.Connection[Any]


class Rendered(Protocol):
    ALLOCATE_IDS: str
    ALLOCATE_IDS_NOTIFY: str
    CLAIM_KEYS: str
    EXISTING_KEYS: str
    COPY_JOBS: str
    NOTIFY_POOLS: str


def copy_jobs(
    conn: Conn, sql: Rendered, sequence: str, channel: str, jobs: list[NewJob]
) -> list[int]:
    idle = conn.info.transaction_status is TransactionStatus.IDLE
    if idle and all(_plain(job) for job in jobs):
        return _copy_unkeyed(conn, sql, sequence, channel, jobs)
    return _copy_keyed(conn, sql, sequence, channel, jobs)


def _plain(job: NewJob) -> bool:
    """No key, an aware run_at (or none), numbers in their column's range: the direct COPY."""
    run_at = job.run_at
    return (
        job.idempotency_key is None
        and (run_at is None or (isinstance(run_at, datetime) and run_at.utcoffset() is not None))
        and type(job.priority) is int
        and -(2**15) <= job.priority < 2**15
        and type(job.max_attempts) is int
        and -(2**31) <= job.max_attempts < 2**31
    )


def _copy_unkeyed(
    conn: Conn, sql: Rendered, sequence: str, channel: str, jobs: list[NewJob]
) -> list[int]:
    """Every job is inserted: BEGIN + ids + NOTIFY in one round trip, the COPY, COMMIT."""
    pools = sorted({job.pool for job in jobs})
    try:
        with conn.pipeline():
            conn.execute("BEGIN", prepare=False)
            cur = conn.execute(sql.ALLOCATE_IDS_NOTIFY, (sequence, len(jobs), channel, pools))
        row = cur.fetchone()
        assert row is not None, "SELECT now(), array(...) returns one row"
        now, ids, _ = row
        data = binary_copy(ids, jobs, now)
        with conn.cursor().copy(sql.COPY_JOBS) as copy:
            copy.write(data)
        conn.execute("COMMIT", prepare=False)
    except BaseException:
        if conn.info.transaction_status is not TransactionStatus.IDLE and not conn.closed:
            conn.rollback()
        raise
    return list(ids)


# -- the binary COPY format (https://www.postgresql.org/docs/current/sql-copy.html) --

_SIGNATURE = b"PGCOPY\n\xff\r\n\x00" + struct.pack("!ii", 0, 0)  # flags, header extension
_TRAILER = struct.pack("!h", -1)
_NULL = struct.pack("!i", -1)
_ROW_START = struct.Struct("!hiq").pack  # 9 columns; id: int8
_JSONB_HEAD = struct.Struct("!ib").pack  # length, jsonb format version 1
_PG_EPOCH = datetime(2000, 1, 1, tzinfo=UTC)


def binary_copy(ids: list[int], jobs: list[NewJob], now: datetime) -> bytes:
    """The COPY_JOBS data (columns in COPY_TYPES order) for jobs without idempotency keys."""
    heads: dict[tuple[str, str, int], bytes] = {}
    tails: dict[tuple[int, datetime, str | None], bytes] = {}
    out = [_SIGNATURE]
    append = out.append
    for job_id, job in zip(ids, jobs, strict=True):
        head_key = (job.name, job.pool, job.priority)
        head = heads.get(head_key)
        if head is None:
            head = heads[head_key] = (
                _text(job.name) + _text(job.pool) + struct.pack("!ih", 2, job.priority)
            )
        tail_key = (job.max_attempts, job.run_at or now, job.tenant)
        tail = tails.get(tail_key)
        if tail is None:
            tail = tails[tail_key] = (
                struct.pack("!ii", 4, job.max_attempts)
                + struct.pack("!iq", 8, _microseconds(tail_key[1]))
                + (_NULL if job.tenant is None else _text(job.tenant))
                + _NULL  # idempotency_key
            )
        text = getattr(job.args, "json", None)
        args = (dumps(job.args, job.name) if text is None else text).encode()
        append(_ROW_START(9, 8, job_id))
        append(head)
        append(_JSONB_HEAD(len(args) + 1, 1))
        append(args)
        append(tail)
    append(_TRAILER)
    return b"".join(out)


def _text(value: str) -> bytes:
    data = value.encode()
    return struct.pack("!i", len(data)) + data


def _microseconds(at: datetime) -> int:
    """timestamptz on the wire: microseconds since 2000-01-01 UTC."""
    delta = at - _PG_EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def _copy_keyed(
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
