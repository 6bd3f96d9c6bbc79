"""The load test's execution ledger and its chaos probes, on PostgreSQL.

``<schema>.loadtest_ledger``: one row per run of a job body (run id, job id,
attempt, idempotency key, worker pid, start, end, whether it raised), written
by the load test's worker app around the real function and read by the load
test. :class:`Probe` asks the questions chaos needs to kill a worker at the
right moment (joined with the runtime's ``jobs`` and ``job_keys``), and
ends backends by application name. Here, next to the runtime's other SQL,
so that a column rename breaks a runtime test, not only the load test.
"""

from __future__ import annotations

import contextlib
import threading
import time
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import psycopg
from psycopg import sql
from psycopg.rows import TupleRow

from queue_runtime.pg.errors import translated

TABLE = "loadtest_ledger"

DDL = """
CREATE TABLE IF NOT EXISTS {t} (
    id bigserial PRIMARY KEY,
    run_id text NOT NULL,
    job_id bigint NOT NULL,
    attempt integer NOT NULL,
    idempotency_key text,
    pid integer NOT NULL,
    started_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    finished_at timestamptz,
    failed boolean NOT NULL DEFAULT false
);
CREATE INDEX IF NOT EXISTS {i} ON {t} (run_id, job_id);
"""
START = (
    "INSERT INTO {t} (run_id, job_id, attempt, idempotency_key, pid)"
    " VALUES (%s, %s, %s, %s, %s) RETURNING id"
)
FINISH = "UPDATE {t} SET finished_at = clock_timestamp(), failed = %s WHERE id = %s RETURNING id"
READ = (
    "SELECT job_id, attempt, pid, started_at, finished_at, failed, idempotency_key"
    " FROM {t} WHERE run_id = %s ORDER BY id"
)


@dataclass(frozen=True, slots=True)
class LedgerRow:
    job_id: int
    attempt: int
    pid: int
    started_at: datetime
    finished_at: datetime | None
    failed: bool
    idempotency_key: str | None


def table(schema: str) -> sql.Composed:
    return sql.SQL("{}.{}").format(sql.Identifier(schema), sql.Identifier(TABLE))


def _render(text: str, schema: str) -> sql.Composed:
    return sql.SQL(text).format(t=table(schema), s=sql.Identifier(schema))


def create(dsn: str, schema: str) -> None:
    index = sql.Identifier(f"{TABLE}_run_idx")
    with translated(schema), psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(sql.SQL(DDL).format(t=table(schema), i=index))


def delete_run(dsn: str, schema: str, run_id: str) -> None:
    with translated(schema), psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(_render("DELETE FROM {t} WHERE run_id = %s", schema), (run_id,))


def read(dsn: str, schema: str, run_id: str) -> list[LedgerRow]:
    """Every ledger row of the run, in insertion order."""
    with translated(schema), psycopg.connect(dsn) as conn:
        rows = conn.execute(_render(READ, schema), (run_id,)).fetchall()
    return [LedgerRow(*row) for row in rows]


class LedgerWriter:
    """Writes ledger rows from a worker: one connection per thread, reconnected on failure."""

    def __init__(self, dsn: str, schema: str, run_id: str) -> None:
        self._dsn = dsn
        self._schema = schema
        self._run_id = run_id
        self._local = threading.local()

    def start(self, job_id: int, attempt: int, key: str | None, pid: int) -> int:
        return self._execute(START, (self._run_id, job_id, attempt, key, pid))

    def finish(self, entry: int, failed: bool) -> None:
        self._execute(FINISH, (failed, entry))

    def _execute(self, text: str, params: tuple[Any, ...]) -> int:
        query = _render(text, self._schema)
        for attempt in range(20):  # the ledger must not lose a row to a transient failure
            conn = self._connection()
            try:
                row: TupleRow | None = conn.execute(query, params).fetchone()
                assert row is not None
                return int(row[0])
            except psycopg.OperationalError:
                self._local.conn = None
                with contextlib.suppress(psycopg.Error):
                    conn.close()
                time.sleep(min(0.5, 0.01 * 2**attempt))
        raise RuntimeError("the load-test ledger is unreachable")

    def _connection(self) -> psycopg.Connection[Any]:
        conn: psycopg.Connection[Any] | None = getattr(self._local, "conn", None)
        if conn is None or conn.closed:
            conn = psycopg.connect(self._dsn, autocommit=True)
            self._local.conn = conn
        return conn


# -- chaos: the moment to kill a worker, and backends by application name ------------

_UNACKED = (
    " FROM {t} l JOIN {s}.jobs j"
    " ON j.id = l.job_id AND j.attempt = l.attempt AND j.state = 'running'"
    " WHERE l.run_id = %s AND l.pid = %s AND l.finished_at IS NOT NULL AND NOT l.failed"
)
_KEY_SETTLED = (
    " AND (l.idempotency_key IS NULL OR NOT EXISTS"
    " (SELECT 1 FROM {s}.job_keys k WHERE k.key = l.idempotency_key)"
    " OR EXISTS (SELECT 1 FROM {s}.job_keys k WHERE k.key = l.idempotency_key"
    " AND k.state = 'completed'))"
)
_KEY_OPEN = (
    " AND EXISTS (SELECT 1 FROM {s}.job_keys k"
    " WHERE k.key = l.idempotency_key AND k.state = 'in_progress')"
)
RUNNING = "SELECT count(*) FROM {t} WHERE run_id = %s AND pid = %s AND finished_at IS NULL"
ACTIVE = "SELECT count(*) FROM pg_stat_activity WHERE application_name = %s AND state = 'active'"
BACKENDS = "SELECT count(*) FROM pg_stat_activity WHERE application_name = %s"
TERMINATE = (
    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
    " WHERE starts_with(application_name, %s) AND pid <> pg_backend_pid()"
)
HAS_TABLE = "SELECT to_regclass(%s) IS NOT NULL"


class Probe:
    """One control connection (``application_name``) asking about one run's executions."""

    def __init__(self, dsn: str, schema: str, run_id: str, application_name: str) -> None:
        self._schema, self._run_id = schema, run_id
        self._conn = psycopg.connect(dsn, autocommit=True, application_name=application_name)
        self._guarded = self._count(HAS_TABLE, (f'"{schema}"."job_keys"',)) > 0

    def __enter__(self) -> Probe:
        return self

    def __exit__(self, *exc: object) -> None:
        self._conn.close()

    def _count(self, text: str, params: tuple[Any, ...]) -> int:
        with translated(self._schema):
            row: TupleRow | None = self._conn.execute(
                _render(text, self._schema), params
            ).fetchone()
        return int(row[0] or 0) if row else 0

    def returned(self, pid: int) -> int:
        """A job id of ``pid`` whose body returned, not yet acknowledged (its key, if the guard
        holds one, recorded completed); 0 when there is none."""
        settled = _KEY_SETTLED if self._guarded else ""
        text = f"SELECT l.job_id{_UNACKED}{settled} LIMIT 1"
        return self._count(text, (self._run_id, pid))

    def running(self, pid: int) -> int:
        """How many executions of ``pid`` are running."""
        return self._count(RUNNING, (self._run_id, pid))

    def exposed(self, pid: int) -> int:
        """Executions of ``pid`` between their return and the guard's record of their key."""
        if not self._guarded:
            return 0
        return self._count(f"SELECT count(*){_UNACKED}{_KEY_OPEN}", (self._run_id, pid))

    def active(self, application_name: str) -> bool:
        """Whether a backend of ``application_name`` is running a statement now."""
        return self._count(ACTIVE, (application_name,)) > 0

    def terminate(self, prefix: str) -> int:
        """``pg_terminate_backend`` every backend whose application name starts with ``prefix``."""
        with translated(self._schema):
            rows = self._conn.execute(TERMINATE, (prefix,)).fetchall()
        return sum(1 for (ok,) in rows if ok)


def backends(dsn: str, application_name: str) -> int:
    """How many backends are connected under ``application_name``."""
    with translated(), psycopg.connect(dsn, autocommit=True) as conn:
        row: TupleRow | None = conn.execute(BACKENDS, (application_name,)).fetchone()
    return int(row[0]) if row else 0
