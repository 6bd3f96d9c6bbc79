"""Bulk enqueue: one transaction, ids allocated up front, a binary COPY, one NOTIFY per pool.

COPY returns nothing, so the ids come from the jobs sequence first (with the
database clock for ``run_at``). Idempotency keys of the batch are reserved
before the COPY, each with the digest of its call (``args_digest``), as a
single enqueue stores it: a job whose key is already known for the same call
is not inserted and answers with the existing job's id; a key given twice in
the batch, or already known, for another call raises ``KeyReused`` and the
whole batch is rolled back (nothing inserted, nobody notified).

A batch without keys (what ``enqueue_many`` sends) takes four round trips:
``BEGIN`` and the id allocation, which also queues the NOTIFY of every pool of
the batch for the commit, are pipelined (one); the COPY (two); ``COMMIT``
(one). Its rows are written straight into the binary COPY format from the
JSON text the payload codec already made (no per-row adapter objects).
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any, Protocol, overload

import psycopg
from psycopg.errors import NumericValueOutOfRange
from psycopg.pq import TransactionStatus

from queue_runtime.errors import KeyReused
from queue_runtime.payload import dumps
from queue_runtime.pg._queries import COPY_TYPES
from queue_runtime.pg._rows import args_jsonb
from queue_runtime.store import NewJob, batch_digests

Conn = psycopg.Connection[Any]


class JobBatch(Sequence[NewJob]):
    """The jobs of one ``enqueue_many`` call: the same job but for its arguments (and keys).

    A Sequence of NewJob for any JobStore (a NewJob is made when asked for);
    the direct COPY reads ``template`` and ``payloads`` and makes none.
    ``keys``, when given, is each call's idempotency key (None: no key).
    """

    __slots__ = ("keys", "payloads", "template")

    def __init__(
        self, template: NewJob, payloads: list[Any], keys: Sequence[str | None] | None = None
    ) -> None:
        self.template = template  # its args are unused, and its key when ``keys`` is given
        self.payloads = payloads
        self.keys = None if keys is None or not any(keys) else list(keys)

    @property
    def keyed(self) -> bool:
        return self.keys is not None or self.template.idempotency_key is not None

    def __len__(self) -> int:
        return len(self.payloads)

    @overload
    def __getitem__(self, index: int) -> NewJob: ...
    @overload
    def __getitem__(self, index: slice) -> list[NewJob]: ...
    def __getitem__(self, index: int | slice) -> NewJob | list[NewJob]:
        if isinstance(index, slice):
            return [self[i] for i in range(len(self.payloads))[index]]
        if self.keys is None:
            return replace(self.template, args=self.payloads[index])
        return replace(self.template, args=self.payloads[index], idempotency_key=self.keys[index])


class Rendered(Protocol):
    ALLOCATE_IDS: str
    ALLOCATE_IDS_NOTIFY: str
    CLAIM_KEYS: str
    EXISTING_KEYS: str
    COPY_JOBS: str
    NOTIFY_POOLS: str


def copy_jobs(
    conn: Conn, sql: Rendered, sequence: str, channel: str, jobs: Sequence[NewJob]
) -> tuple[list[int], list[bool] | None]:
    """The jobs' ids, and which were inserted (None: all; False: a known key's job)."""
    if isinstance(jobs, JobBatch):
        keyed = jobs.keyed
    else:
        keyed = any(job.idempotency_key is not None for job in jobs)
    if conn.info.transaction_status is TransactionStatus.IDLE and not keyed:
        ids = _copy_unkeyed(conn, sql, sequence, channel, jobs)
        if ids is not None:
            return ids, None
    return _copy_keyed(conn, sql, sequence, channel, list(jobs))


class _NotPlain(Exception):
    """A job the direct COPY does not write (naive run_at, a number out of its column's range)."""


def _copy_unkeyed(
    conn: Conn, sql: Rendered, sequence: str, channel: str, jobs: Sequence[NewJob]
) -> list[int] | None:
    """Every job is inserted: BEGIN + ids + NOTIFY in one round trip, the COPY, COMMIT.

    None (rolled back, nothing written) when a job needs the checked COPY instead.
    """
    if isinstance(jobs, JobBatch):
        pools = [jobs.template.pool]
    else:
        pools = sorted({job.pool for job in jobs})
    try:
        with conn.pipeline():
            conn.execute("BEGIN", prepare=False)
            cur = conn.execute(sql.ALLOCATE_IDS_NOTIFY, (sequence, len(jobs), channel, pools))
        row = cur.fetchone()
        assert row is not None, "SELECT now(), array(...) returns one row"
        now, ids, _ = row
        try:
            data = binary_copy(ids, jobs, now)
        except _NotPlain:
            conn.rollback()
            return None
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
_INT2 = range(-(2**15), 2**15)
_INT4 = range(-(2**31), 2**31)


def binary_copy(ids: list[int], jobs: Sequence[NewJob], now: datetime) -> bytes:
    """The COPY_JOBS data (columns in COPY_TYPES order) for jobs without idempotency keys.

    Raises _NotPlain for a job it does not write. The columns around ``args`` are
    encoded once per distinct (name, pool, priority, max_attempts, run_at, tenant).
    """
    out = [_SIGNATURE]
    append = out.append
    if isinstance(jobs, JobBatch):
        before, after = _around_args(jobs.template, now)
        name = jobs.template.name
        for job_id, payload in zip(ids, jobs.payloads, strict=True):
            text = getattr(payload, "json", None)
            args = (dumps(payload, name) if text is None else text).encode()
            append(_ROW_START(9, 8, job_id))
            append(before)
            append(_JSONB_HEAD(len(args) + 1, 1))
            append(args)
            append(after)
        append(_TRAILER)
        return b"".join(out)
    fixed: dict[tuple[Any, ...], tuple[bytes, bytes]] = {}
    for job_id, job in zip(ids, jobs, strict=True):
        key = (job.name, job.pool, job.priority, job.max_attempts, job.run_at, job.tenant)
        around = fixed.get(key)
        if around is None:
            around = fixed[key] = _around_args(job, now)
        text = getattr(job.args, "json", None)
        args = (dumps(job.args, job.name) if text is None else text).encode()
        append(_ROW_START(9, 8, job_id))
        append(around[0])
        append(_JSONB_HEAD(len(args) + 1, 1))
        append(args)
        append(around[1])
    append(_TRAILER)
    return b"".join(out)


def _around_args(job: NewJob, now: datetime) -> tuple[bytes, bytes]:
    """The columns before ``args`` (name, pool, priority) and after it."""
    run_at = not_before(job.run_at, now)
    if (
        job.idempotency_key is not None
        or type(job.name) is not str
        or type(job.pool) is not str
        or not (job.tenant is None or type(job.tenant) is str)
        or type(job.priority) is not int
        or type(job.max_attempts) is not int
        or not isinstance(run_at, datetime)
        or run_at.utcoffset() is None
    ):
        raise _NotPlain(job.name)
    check_ranges(job)
    before = _text(job.name) + _text(job.pool) + struct.pack("!ih", 2, job.priority)
    after = (
        struct.pack("!ii", 4, job.max_attempts)
        + struct.pack("!iq", 8, _microseconds(run_at))
        + (_NULL if job.tenant is None else _text(job.tenant))
        + _NULL  # idempotency_key
    )
    return before, after


def not_before(run_at: Any, now: datetime) -> Any:
    """``run_at``, but never before ``now`` (the database's): a past run_at is now, as in
    ENQUEUE. Anything else (None, a naive datetime) is left to the checks that refuse it."""
    if run_at is None:
        return now
    if isinstance(run_at, datetime) and run_at.utcoffset() is not None:
        return max(run_at, now)
    return run_at


def check_ranges(job: NewJob) -> None:
    """What the server says of an INSERT; a binary COPY would wrap the number around silently."""
    if isinstance(job.priority, int) and job.priority not in _INT2:
        raise NumericValueOutOfRange(f"{job.name}: priority {job.priority}: smallint out of range")
    if isinstance(job.max_attempts, int) and job.max_attempts not in _INT4:
        raise NumericValueOutOfRange(
            f"{job.name}: max_attempts {job.max_attempts}: integer out of range"
        )


def _text(value: str) -> bytes:
    data = value.encode()
    return struct.pack("!i", len(data)) + data


def _microseconds(at: datetime) -> int:
    """timestamptz on the wire: microseconds since 2000-01-01 UTC."""
    delta = at - _PG_EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def _copy_keyed(
    conn: Conn, sql: Rendered, sequence: str, channel: str, jobs: list[NewJob]
) -> tuple[list[int], list[bool]]:
    digests = batch_digests(jobs)  # KeyReused before any round trip for a key the batch reuses
    with conn.transaction():
        row = conn.execute(sql.ALLOCATE_IDS, (sequence, len(jobs))).fetchone()
        assert row is not None, "SELECT now(), array(...) returns one row"
        now, ids = row
        ids, fresh = _reserve_keys(conn, sql, jobs, list(ids), digests)
        with conn.cursor().copy(sql.COPY_JOBS) as copy:
            copy.set_types(COPY_TYPES)
            for job_id, job, new in zip(ids, jobs, fresh, strict=True):
                if new:
                    copy.write_row(_copy_row(job_id, job, now))
        pools = sorted({job.pool for job, new in zip(jobs, fresh, strict=True) if new})
        if pools:
            conn.execute(sql.NOTIFY_POOLS, (channel, pools))
    return ids, fresh


def _copy_row(job_id: int, job: NewJob, now: Any) -> tuple[Any, ...]:
    check_ranges(job)
    run_at = not_before(job.run_at, now)
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
    conn: Conn, sql: Rendered, jobs: list[NewJob], ids: list[int], digests: list[str | None]
) -> tuple[list[int], list[bool]]:
    """Final ids and which jobs to insert; a known (or repeated) key of the same call reuses
    its job's id, a known key of another call raises KeyReused (the transaction rolls back)."""
    keyed = [(i, job.idempotency_key) for i, job in enumerate(jobs) if job.idempotency_key]
    fresh = [True] * len(jobs)
    if not keyed:
        return ids, fresh
    first: dict[str, int] = {}
    for i, key in keyed:
        first.setdefault(key, i)
    new_keys = _insert_keys(conn, sql, [(key, ids[i], digests[i]) for key, i in first.items()])
    owners = _owners(conn, sql, [key for key in first if key not in new_keys])
    for key, (job_id, stored) in owners.items():
        if stored is not None and stored != digests[first[key]]:
            raise KeyReused(f"{key!r} names job {job_id}, another call")
    for i, key in keyed:
        if key in new_keys and first[key] == i:
            continue
        fresh[i] = False
        ids[i] = ids[first[key]] if key in new_keys else owners[key][0]
    return ids, fresh


def _insert_keys(conn: Conn, sql: Rendered, rows: list[tuple[str, int, str | None]]) -> set[str]:
    columns = ([key for key, _, _ in rows], [i for _, i, _ in rows], [d for _, _, d in rows])
    found = conn.execute(sql.CLAIM_KEYS, columns).fetchall()
    return {row[0] for row in found}


def _owners(conn: Conn, sql: Rendered, keys: list[str]) -> dict[str, tuple[int, str | None]]:
    """key -> (its job id, the digest it was taken with; None before 0003: any call)."""
    if not keys:
        return {}
    found = conn.execute(sql.EXISTING_KEYS, (keys,)).fetchall()
    return {key: (job_id, digest) for key, job_id, digest in found}
