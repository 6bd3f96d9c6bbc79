"""PgInspector: the Inspector seam on PostgreSQL (what the tools read).

Job listings read the hot table and the history by primary key, newest first,
keyset-paginated (``id < after``): no COUNT, no OFFSET. Live workers are not in
PostgreSQL (heartbeats never write rows): ``workers()`` reads the presence
records of the lease store (Redis) the Runtime hands in.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from psycopg import sql
from psycopg.rows import TupleRow

from queue_runtime.config import Settings
from queue_runtime.errors import NotConfigured
from queue_runtime.pg import _inspect_sql as inspect_sql
from queue_runtime.pg._errors import translated
from queue_runtime.pg.connect import Conn, Connections, Direct
from queue_runtime.pg.gate import PgGateStore
from queue_runtime.store import (
    GateStore,
    HistoryEntry,
    Inspector,
    JobDetail,
    JobHealth,
    JobPage,
    JobQuery,
    JobStatus,
    JobSummary,
    LeaseStore,
    WorkerInfo,
    attempt_errors,
)

T = TypeVar("T")

HISTORY = (
    "SELECT id, status::text, attempt, enqueued_at, finished_at, errors"
    " FROM {s}.job_history WHERE id = ANY(%s)"
)
FINISHED_COUNT = "SELECT count(*) FROM {s}.job_history WHERE id = ANY(%s)"
UNFINISHED = "SELECT id FROM {s}.jobs WHERE id = ANY(%s)"
DEAD_COUNT = "SELECT count(*) FROM {s}.job_history WHERE status = 'dead'"
# One job over a window: finished runs, failed attempts (every element of an attempt
# history, the hot table's retrying jobs included), dead letters, and the lag now.
JOB_HEALTH = """
WITH since AS (SELECT now() - make_interval(secs => %(window)s) AS t),
recent AS (
    SELECT status, errors FROM {s}.job_history
    WHERE name = %(job)s AND finished_at >= (SELECT t FROM since)
),
attempts AS (
    SELECT errors FROM recent WHERE errors IS NOT NULL
    UNION ALL SELECT errors FROM {s}.jobs WHERE name = %(job)s AND errors IS NOT NULL
)
SELECT
    (SELECT count(*) FROM recent WHERE status = 'succeeded'),
    (SELECT count(*) FROM attempts, jsonb_array_elements(attempts.errors) AS e
     WHERE (e->>'at')::timestamptz >= (SELECT t FROM since)),
    (SELECT count(*) FROM recent WHERE status = 'dead'),
    coalesce((SELECT extract(epoch FROM now() - min(run_at)) FROM {s}.jobs
              WHERE name = %(job)s AND state = 'pending' AND run_at <= now()), 0)
"""
REVISIONS = "SELECT version_num FROM {s}.alembic_version"
EXISTS = "SELECT to_regclass(format('%%I.%%I', %s::text, %s::text)) IS NOT NULL"


class PgInspector:
    def __init__(
        self,
        connections: Connections,
        schema: str,
        leases: Callable[[], LeaseStore] | None = None,
    ) -> None:
        self._connections = connections
        self._schema = schema
        self._leases = leases  # called only by workers(): building it may need Redis settings
        ident = sql.Identifier(schema)
        self._render: Callable[[str], sql.Composed] = lambda text: sql.SQL(text).format(s=ident)

    def close(self) -> None:
        self._connections.close()

    def _run(self, fn: Callable[[Conn], T]) -> T:
        with translated(self._schema), self._connections.connection() as conn:
            return fn(conn)

    def _count(self, text: str, params: Any = None) -> int:
        row: TupleRow | None = self._run(lambda c: c.execute(self._render(text), params).fetchone())
        return int(row[0]) if row else 0

    def history(self, job_ids: Sequence[int]) -> list[HistoryEntry]:
        found = self._run(lambda c: c.execute(self._render(HISTORY), (list(job_ids),)).fetchall())
        return [_history(row) for row in found]

    def finished_count(self, job_ids: Sequence[int]) -> int:
        return self._count(FINISHED_COUNT, (list(job_ids),))

    def unfinished_ids(self, job_ids: Sequence[int]) -> set[int]:
        found = self._run(
            lambda c: c.execute(self._render(UNFINISHED), (list(job_ids),)).fetchall()
        )
        return {int(job_id) for (job_id,) in found}

    def dead_count(self) -> int:
        return self._count(DEAD_COUNT)

    def job_health(self, job: str, window_seconds: float) -> JobHealth:
        params = {"job": job, "window": window_seconds}
        row = self._run(lambda c: c.execute(self._render(JOB_HEALTH), params).fetchone())
        assert row is not None, "an aggregate returns one row"
        succeeded, failed, dead, lag = row
        return JobHealth(job, int(succeeded), int(failed), int(dead), float(lag))

    def revisions(self) -> list[str] | None:
        if self.missing(["alembic_version"]):
            return None
        found = self._run(lambda c: c.execute(self._render(REVISIONS)).fetchall())
        return [str(version) for (version,) in found]

    def missing(self, names: Sequence[str]) -> list[str]:
        def absent(conn: Conn) -> list[str]:
            return [n for n in names if not _exists(conn, self._schema, n)]

        return self._run(absent)

    def list_jobs(self, query: JobQuery) -> JobPage:
        statement, params = inspect_sql.listing(query)
        rows = self._run(lambda c: c.execute(self._render(statement), params).fetchall())
        jobs = tuple(_summary(row) for row in rows[: query.limit])
        return JobPage(jobs, jobs[-1].id if len(rows) > query.limit and jobs else None)

    def job_detail(self, job_id: int) -> JobDetail | None:
        def find(conn: Conn) -> TupleRow | None:
            wanted: int | None = job_id
            for _ in range(inspect_sql.REPLAY_HOPS + 1):
                if wanted is None:
                    return None
                row: TupleRow | None = conn.execute(
                    self._render(inspect_sql.DETAIL), {"id": wanted}
                ).fetchone()
                if row is not None:
                    return row
                moved = conn.execute(self._render(inspect_sql.REPLAYED_AS), (wanted,)).fetchone()
                wanted = int(moved[0]) if moved and moved[0] is not None else None
            return None

        found = self._run(find)
        return detail_of(found) if found is not None else None

    def workers(self) -> list[WorkerInfo]:
        if self._leases is None:
            raise NotConfigured("redis_url is not set (live workers are read from Redis)")
        return self._leases().workers()


def _summary(row: TupleRow) -> JobSummary:
    job_id, name, pool, status, attempt, max_attempts, enqueued, run_at, started, finished, err = (
        row
    )
    return JobSummary(
        job_id,
        name,
        pool,
        JobStatus(status),
        attempt,
        max_attempts,
        enqueued,
        run_at,
        started,
        finished,
        err,
    )


def detail_of(row: TupleRow) -> JobDetail:
    """A row of ``inspect_sql.DETAIL`` as the record."""
    (
        job_id,
        name,
        pool,
        status,
        args,
        attempt,
        max_attempts,
        priority,
        enqueued,
        run_at,
        started,
        finished,
        worker,
        tenant,
        key,
        result,
        error,
        traceback,
        errors,
    ) = row
    return JobDetail(
        id=job_id,
        name=name,
        pool=pool,
        status=JobStatus(status),
        args=args if args is not None else {},
        attempt=attempt,
        max_attempts=max_attempts,
        priority=priority,
        enqueued_at=enqueued,
        run_at=run_at,
        started_at=started,
        finished_at=finished,
        worker=worker,
        tenant=tenant,
        idempotency_key=key,
        result=result,
        error=error,
        traceback=traceback,
        errors=attempt_errors(errors, traceback, attempt),
    )


def _exists(conn: Conn, schema: str, name: str) -> bool:
    row: TupleRow | None = conn.execute(EXISTS, (schema, name)).fetchone()
    return bool(row and row[0])


def _history(row: TupleRow) -> HistoryEntry:
    job_id, status, attempt, enqueued_at, finished_at, errors = row
    return HistoryEntry(job_id, JobStatus(status), attempt, enqueued_at, finished_at, errors)


@dataclass(frozen=True, slots=True)
class ReadOnly:
    """A gate store and an inspector on read-only connections of their own (no pool)."""

    gate: GateStore
    inspector: Inspector


def read_only(settings: Settings, timeout: float) -> ReadOnly:
    """For the tools (``migrator plan --check``): one short-lived read-only connection per query.

    Raises NotConfigured without a database URL.
    """
    if not settings.database_url:
        raise NotConfigured()
    connections = Direct(
        settings.database_url,
        connect_timeout=max(1, int(timeout)),
        options="-c default_transaction_read_only=on",
    )
    schema = settings.schema_name
    return ReadOnly(PgGateStore(connections, schema), PgInspector(connections, schema))
