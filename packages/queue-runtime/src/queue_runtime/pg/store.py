"""PgJobStore: the JobStore seam on PostgreSQL.

Hot-path costs: enqueue is one prepared statement (autocommit unless the
caller passes its own connection); enqueue_many is one transaction with a
binary COPY; claim is the single SKIP LOCKED statement; complete_many is one
statement per batch. Transient errors (deadlock, serialization failure, lost
connection) are retried with jitter on a fresh pooled connection; never when
the caller passed ``conn=`` (its transaction is its own to retry).

The async twins (``aenqueue_returning``, ``aget``) run the very same statements
on an asyncio connection of the running loop's pool
(:mod:`queue_runtime.pg.loop_pools`): each operation is written once as a
*plan*, a generator that yields ``(statement, params)`` and is sent the row
fetched, and a sync or an async driver runs it; errors are retried and
translated as the sync ones.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any, TypeVar

import psycopg
from psycopg import sql

from queue_runtime.config import Settings
from queue_runtime.errors import KeyReused, SchemaNotMigrated
from queue_runtime.pg import _queries as q
from queue_runtime.pg import _rows as rows
from queue_runtime.pg._errors import translate
from queue_runtime.pg.bulk import copy_jobs
from queue_runtime.pg.connect import Connections, channel
from queue_runtime.pg.loop_pools import AsyncConn, LoopPools
from queue_runtime.pg.retry import TransientRetry
from queue_runtime.store import (
    Cancellation,
    ClaimedJob,
    Completion,
    Control,
    EnqueuedKey,
    Failure,
    JobRecord,
    JobStatus,
    NewJob,
    PoolStats,
    args_digest,
    clip_traceback,
)

T = TypeVar("T")
Conn = psycopg.Connection[Any]
# An operation's statements: yields (statement, params), is sent each one's first row (or None).
Plan = Generator[tuple[str, Any], Any, T]


def _drive(conn: Conn, plan: Plan[T]) -> T:
    try:
        step = next(plan)
        while True:
            step = plan.send(conn.execute(*step).fetchone())
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]  # StopIteration.value is Any


async def _adrive(conn: AsyncConn, plan: Plan[T]) -> T:
    try:
        step = next(plan)
        while True:
            step = plan.send(await (await conn.execute(*step)).fetchone())
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]


class _Sql:
    """The named queries rendered once for one schema (plain strings: cheap to prepare)."""

    def __init__(self, schema: str) -> None:
        ident = sql.Identifier(schema)
        self.render: Callable[[str], str] = lambda text: (
            sql.SQL(text).format(s=ident).as_string(None)
        )
        self.schema = ident.as_string(None)
        self.jobs_table = sql.SQL("{}.jobs").format(ident).as_string(None)

    def __getattr__(self, name: str) -> str:
        text = self.render(getattr(q, name))
        setattr(self, name, text)  # rendered once, then a plain attribute
        return text


class PgJobStore:
    """Every operation raises the runtime's errors (``StoreUnavailable``, ``StoreError``),
    psycopg's own as the ``__cause__``, after the transient ones were retried in place."""

    def __init__(
        self,
        pool: Connections,
        settings: Settings,
        retry: TransientRetry | None = None,
        apools: LoopPools | None = None,
    ) -> None:
        self._pool = pool
        self._apools = apools or LoopPools(settings)  # opened by the first async operation
        self._schema = settings.schema_name
        self._sql = _Sql(settings.schema_name)
        self._channel = channel(settings)
        self._pools = list(settings.pools)
        self._retry = retry or TransientRetry()
        self._sequence: str | None = None

    def close(self) -> None:
        """The sync pool, and each loop's async pool (the rule: :mod:`~queue_runtime.pg.loop_pools`)."""
        self._pool.close()
        self._apools.close()

    async def aclose(self) -> None:
        """Close the running loop's async pool, from inside the loop."""
        await self._apools.aclose()

    # -- plumbing -----------------------------------------------------------

    def _run(self, fn: Callable[[Conn], T], conn: Conn | None = None) -> T:
        # try/except rather than a context manager: nothing is allocated per call.
        try:
            if conn is not None:
                self._ensure_schema(conn)
                return fn(conn)
            return self._retry(lambda: self._with_pooled(fn))
        except psycopg.Error as exc:
            raise translate(exc, self._schema) from exc

    def _with_pooled(self, fn: Callable[[Conn], T]) -> T:
        with self._pool.connection() as conn:
            self._ensure_schema(conn)
            return fn(conn)

    def _ensure_schema(self, conn: Conn) -> None:
        if self._sequence is None:
            _drive(conn, self._schema_plan())

    def _schema_plan(self) -> Plan[None]:
        names = {"schema": self._sql.schema, "table": self._sql.jobs_table}
        row = yield q.SCHEMA_READY, names
        if not row or not row[0]:
            raise SchemaNotMigrated(f"no table {names['table']}")
        self._sequence = row[0]

    async def _arun(self, plan: Callable[[], Plan[T]]) -> T:
        """``_run`` on the running loop's async pool: retried and translated the same way."""
        try:
            return await self._retry.run_async(lambda: self._awith_pooled(plan))
        except psycopg.Error as exc:
            raise translate(exc, self._schema) from exc

    async def _awith_pooled(self, plan: Callable[[], Plan[T]]) -> T:
        pool = await self._apools.get()
        async with pool.connection() as conn:
            if self._sequence is None:
                await _adrive(conn, self._schema_plan())
            return await _adrive(conn, plan())

    @property
    def sequence(self) -> str:
        assert self._sequence is not None, "_ensure_schema runs first"
        return self._sequence

    # -- enqueue ------------------------------------------------------------

    def enqueue(self, job: NewJob, conn: Conn | None = None) -> int:
        return self.enqueue_returning(job, conn)[0]

    def enqueue_returning(self, job: NewJob, conn: Conn | None = None) -> tuple[int, bool]:
        """``(job id, created)``: created is False when the idempotency key was known."""
        plan = self._enqueue_plan
        return self._run(lambda c: _drive(c, plan(job)), conn)

    async def aenqueue_returning(self, job: NewJob) -> tuple[int, bool]:
        """``enqueue_returning`` on the running loop's async pool (no caller's ``conn=``)."""
        return await self._arun(lambda: self._enqueue_plan(job))

    def _enqueue_plan(self, job: NewJob) -> Plan[tuple[int, bool]]:
        if job.idempotency_key is None:
            return self._insert(job)
        return self._insert_keyed(job)

    def _insert(self, job: NewJob) -> Plan[tuple[int, bool]]:
        row = yield self._sql.ENQUEUE, rows.enqueue_params(job, self._channel)
        assert row is not None, "INSERT ... RETURNING returns the row"
        return row[0], True

    def _insert_keyed(self, job: NewJob) -> Plan[tuple[int, bool]]:
        digest = args_digest(job.name, job.args)
        params = {**rows.keyed_params(job, self._channel, self.sequence), "digest": digest}
        # No row: the key was committed by a concurrent enqueue after our
        # snapshot was taken; the next statement's snapshot sees it.
        for _ in range(5):
            row = yield self._sql.ENQUEUE_KEYED, params
            if row is not None:
                return _answer(job, digest, row)
        raise psycopg.errors.SerializationFailure("idempotency key kept changing under us")

    def enqueue_many(self, jobs: Sequence[NewJob]) -> list[int]:
        if not jobs:
            return []
        return self._copy(jobs)[0]

    def enqueue_many_returning(self, jobs: Sequence[NewJob]) -> list[tuple[int, bool]]:
        """``(job id, created)`` per job: created is False for a known key's job."""
        if not jobs:
            return []
        ids, created = self._copy(jobs)
        return list(zip(ids, created or [True] * len(ids), strict=True))

    def enqueued_key(self, key: str) -> EnqueuedKey | None:
        found = self._run(lambda c: c.execute(self._sql.ENQUEUED_KEY, (key,)).fetchone())
        return None if found is None else EnqueuedKey(key, found[0], found[1])

    def _copy(self, jobs: Sequence[NewJob]) -> tuple[list[int], list[bool] | None]:
        return self._run(lambda c: copy_jobs(c, self._sql, self.sequence, self._channel, jobs))

    # -- claim and finish ---------------------------------------------------

    def claim(self, pool: str, limit: int, worker_id: str) -> list[ClaimedJob]:
        found = self._run(lambda c: c.execute(self._sql.CLAIM, (pool, limit, worker_id)).fetchall())
        return [rows.claimed(row) for row in sorted(found, key=rows.claim_order)]

    def complete_many(self, done: list[Completion]) -> int:
        if not done:
            return 0
        params = (
            [d.id for d in done],
            [d.attempt for d in done],
            [rows.jsonb_or_null(d.result) for d in done],
        )
        return self._run(lambda c: c.execute(self._sql.COMPLETE_MANY, params).rowcount)

    def fail(self, failure: Failure) -> JobStatus:
        """RETRYING or DEAD when recorded; with a stale token, the job's current status."""
        traceback = clip_traceback(failure.traceback)
        if failure.retry_at is not None:
            params: Any = (failure.retry_at, failure.error, traceback, failure.id, failure.attempt)
            outcome, query = JobStatus.RETRYING, self._sql.FAIL_RETRY
        else:
            params = {"id": failure.id, "attempt": failure.attempt, "error": failure.error}
            params["traceback"] = traceback
            outcome, query = JobStatus.DEAD, self._sql.FAIL_DEAD
        if self._run(lambda c: c.execute(query, params).fetchone()) is not None:
            return outcome
        current = self.get(failure.id)
        return current.status if current else JobStatus.CANCELLED

    def defer(self, job_id: int, attempt: int, run_at: datetime, unknown: bool = False) -> bool:
        params = (run_at, unknown, job_id, attempt)
        return self._run(lambda c: c.execute(self._sql.DEFER, params).fetchone()) is not None

    def rescue(self, tokens: list[tuple[int, int]]) -> int:
        if not tokens:
            return 0
        params = {
            "ids": [t[0] for t in tokens],
            "attempts": [t[1] for t in tokens],
            "channel": self._channel,
        }
        row = self._run(lambda c: c.execute(self._sql.RESCUE, params).fetchone())
        return int(row[0]) if row else 0

    def running_tokens(self, older_than_seconds: float) -> list[tuple[int, int]]:
        found = self._run(
            lambda c: c.execute(self._sql.RUNNING_TOKENS, (older_than_seconds,)).fetchall()
        )
        return [(row[0], row[1]) for row in found]

    def cancel(self, job_id: int) -> bool:
        """Cancel a job that is not running yet; False when it already started or finished."""
        return self._run(lambda c: c.execute(self._sql.CANCEL, (job_id,)).fetchone()) is not None

    # -- cancel, pause -------------------------------------------------------

    def cancel_job(self, job_id: int, by: str | None = None) -> Cancellation:
        """Queued, scheduled, retrying: cancelled now; running: a cancel request is recorded."""
        return self._run(lambda c: self._cancel_job(c, job_id, by, hops=5))

    def _cancel_job(self, conn: Conn, job_id: int, by: str | None, hops: int) -> Cancellation:
        for _ in range(5):  # 'raced': claimed between our snapshot and our delete
            row = conn.execute(self._sql.CANCEL_JOB, {"id": job_id, "by": by}).fetchone()
            answer = row[0] if row else None
            if answer != "raced":
                break
        else:
            raise psycopg.errors.SerializationFailure("the job kept changing state under us")
        if answer is not None:
            return Cancellation(answer)
        moved = conn.execute(self._sql.REPLAYED_AS, (job_id,)).fetchone()
        if moved is None or hops == 0:
            return Cancellation.UNKNOWN
        return self._cancel_job(conn, moved[0], by, hops - 1)  # a replayed dead job: its replay

    def cancel_attempt(self, job_id: int, attempt: int, reason: str) -> bool:
        params = {"id": job_id, "attempt": attempt, "reason": reason}
        found = self._run(lambda c: c.execute(self._sql.CANCEL_ATTEMPT, params).fetchone())
        return found is not None

    def pause(self, pool: str, by: str | None = None) -> bool:
        return self._run(lambda c: c.execute(self._sql.PAUSE, (pool, by)).fetchone()) is not None

    def resume(self, pool: str) -> bool:
        return self._run(lambda c: c.execute(self._sql.RESUME, (pool,)).fetchone()) is not None

    def switch_periodic(self, job: str, enabled: bool, by: str | None, reason: str) -> bool:
        params = {"job": job, "enabled": enabled, "by": by, "reason": reason}
        found = self._run(lambda c: c.execute(self._sql.SWITCH_PERIODIC, params).fetchone())
        return found is not None

    def disabled_periodic(self) -> frozenset[str]:
        found = self._run(lambda c: c.execute(self._sql.DISABLED_PERIODIC).fetchall())
        return frozenset(row[0] for row in found)

    def control(self, job_ids: list[int]) -> Control:
        row = self._run(lambda c: c.execute(self._sql.CONTROL, (job_ids,)).fetchone())
        paused, requested = (row[0], row[1]) if row else ([], [])
        return Control(frozenset(paused), frozenset(requested))

    # -- inspection, DLQ ----------------------------------------------------

    def get(self, job_id: int) -> JobRecord | None:
        """The job, wherever it is; a replayed dead job answers as its replay."""
        return self._run(lambda c: _drive(c, self._get(job_id, hops=5)))

    async def aget(self, job_id: int) -> JobRecord | None:
        """``get`` on the running loop's async pool."""
        return await self._arun(lambda: self._get(job_id, hops=5))

    def _get(self, job_id: int, hops: int) -> Plan[JobRecord | None]:
        row = yield self._sql.GET, {"id": job_id}
        if row is not None:
            return rows.record(row)
        moved = yield self._sql.REPLAYED_AS, (job_id,)
        if moved is None or hops == 0:
            return None
        return (yield from self._get(moved[0], hops - 1))

    def dead_letters(self, limit: int = 50, name: str | None = None) -> list[JobRecord]:
        params = {"limit": limit, "name": name}
        found = self._run(lambda c: c.execute(self._sql.DEAD_LETTERS, params).fetchall())
        return [rows.record(row) for row in found]

    def replay(self, job_ids: list[int]) -> list[int]:
        """Dead jobs back to the queue as new jobs; returns the new ids (order of ``job_ids``)."""

        def move(conn: Conn) -> list[Any]:
            params = {"ids": job_ids, "seq": self.sequence, "channel": self._channel}
            return conn.execute(self._sql.REPLAY, params).fetchall()

        new_by_old = {row[0]: row[1] for row in self._run(move)}
        return [new_by_old[i] for i in job_ids if i in new_by_old]

    def purge_dead(self, job_ids: list[int] | None = None) -> int:
        row = self._run(lambda c: c.execute(self._sql.PURGE_DEAD, {"ids": job_ids}).fetchone())
        return int(row[0]) if row else 0

    def purge_finished(self, older_than_seconds: float, batch: int = 10_000) -> int:
        """Retention: drop succeeded and cancelled history older than this (never dead jobs)."""
        return self._purge_batched(self._sql.PURGE_FINISHED, older_than_seconds, batch)

    def purge_keys(self, older_than_seconds: float, batch: int = 10_000) -> int:
        """Key retention: forget enqueue keys older than this, except those of live or dead jobs."""
        return self._purge_batched(self._sql.PURGE_KEYS, older_than_seconds, batch)

    def _purge_batched(self, statement: str, older_than_seconds: float, batch: int) -> int:
        """Run a ``DELETE ... LIMIT batch`` statement until a round deletes less than a batch."""
        params = (older_than_seconds, batch)
        total = 0
        while True:
            row = self._run(lambda c: c.execute(statement, params).fetchone())
            purged = int(row[0]) if row else 0
            total += purged
            if purged < batch:
                return total

    def stats(self) -> list[PoolStats]:
        def read(conn: Conn) -> tuple[list[Any], list[Any], list[Any]]:
            hot = conn.execute(self._sql.STATS_HOT).fetchall()
            history = conn.execute(self._sql.STATS_HISTORY).fetchall()
            return hot, history, conn.execute(self._sql.PAUSED_POOLS).fetchall()

        hot, history, paused = self._run(read)
        return _mark_paused(rows.pool_stats(self._pools, hot, history), {r[0] for r in paused})


def _mark_paused(stats: list[PoolStats], paused: set[str]) -> list[PoolStats]:
    """Paused pools say so; a paused pool with no jobs (or no longer configured) still shows."""
    marked = [replace(s, paused=True) if s.pool in paused else s for s in stats]
    listed = {s.pool for s in stats}
    extra = [PoolStats(p, 0, 0, 0, 0.0, 0, 0, paused=True) for p in sorted(paused - listed)]
    return marked + extra


def _answer(job: NewJob, digest: str, row: Any) -> tuple[int, bool]:
    """``(id, created)`` of an ENQUEUE_KEYED row; a key taken for another call is refused."""
    job_id, created, _, stored = row
    if not created and stored is not None and stored != digest:
        raise KeyReused(f"{job.idempotency_key!r} names job {job_id}, another call")
    return job_id, created
