"""The load test's execution ledger and chaos probe on PostgreSQL (:class:`PgLedger`).

``<schema>.loadtest_ledger``: one row per run of a job body (run id, job id,
attempt, idempotency key, worker pid, start, end, whether it raised), in the
queue's schema. The probe joins it with the runtime's ``jobs`` and
``job_keys``, and ends backends by application name (``pg_terminate_backend``):
a session is a PostgreSQL backend here. The same contract suite runs this and
:class:`~queue_runtime.testing.MemoryLedger`, so a column rename of
``jobs`` or ``job_keys`` breaks a runtime test, not only the load test.
"""

from __future__ import annotations

import contextlib
import threading
import time
from typing import Any

import psycopg
from psycopg import sql
from psycopg.rows import TupleRow

from queue_runtime.pg._errors import translated
from queue_runtime.testing._ledger import ExecutionProbe, LedgerRow, LedgerWriter

__all__ = ["TABLE", "PgLedger"]

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
DELETE_RUN = "DELETE FROM {t} WHERE run_id = %s"
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


def _table(schema: str) -> sql.Composed:
    return sql.SQL("{}.{}").format(sql.Identifier(schema), sql.Identifier(TABLE))


def _render(text: str, schema: str) -> sql.Composed:
    return sql.SQL(text).format(t=_table(schema), s=sql.Identifier(schema))


class PgLedger:
    """The ledger in ``schema`` of the database at ``dsn`` (each call on a connection of its own)."""

    def __init__(self, dsn: str, schema: str) -> None:
        self.dsn, self.schema = dsn, schema

    def create(self) -> None:
        index = sql.Identifier(f"{TABLE}_run_idx")
        with translated(self.schema), psycopg.connect(self.dsn, autocommit=True) as conn:
            conn.execute(sql.SQL(DDL).format(t=_table(self.schema), i=index))

    def writer(self, run_id: str, application_name: str) -> LedgerWriter:
        return _PgWriter(self, run_id, application_name)

    def read(self, run_id: str) -> list[LedgerRow]:
        with translated(self.schema), psycopg.connect(self.dsn) as conn:
            rows = conn.execute(_render(READ, self.schema), (run_id,)).fetchall()
        return [LedgerRow(*row) for row in rows]

    def delete_run(self, run_id: str) -> None:
        with translated(self.schema), psycopg.connect(self.dsn, autocommit=True) as conn:
            conn.execute(_render(DELETE_RUN, self.schema), (run_id,))

    def probe(self, run_id: str, application_name: str) -> ExecutionProbe:
        return _PgProbe(self, run_id, application_name)

    def backends(self, application_name: str) -> int:
        with translated(), psycopg.connect(self.dsn, autocommit=True) as conn:
            row: TupleRow | None = conn.execute(BACKENDS, (application_name,)).fetchone()
        return int(row[0]) if row else 0


class _PgWriter:
    """One connection per thread under the writer's application name, reconnected on failure."""

    def __init__(self, ledger: PgLedger, run_id: str, application_name: str) -> None:
        self._ledger, self._run_id, self._name = ledger, run_id, application_name
        self._local = threading.local()
        self._lock = threading.Lock()
        self._opened: list[psycopg.Connection[Any]] = []

    def start(self, job_id: int, attempt: int, key: str | None, pid: int) -> int:
        return self._execute(START, (self._run_id, job_id, attempt, key, pid))

    def finish(self, entry: int, failed: bool) -> None:
        self._execute(FINISH, (failed, entry))

    def close(self) -> None:
        with self._lock:
            opened, self._opened = self._opened, []
        for conn in opened:
            conn.close()

    def _execute(self, text: str, params: tuple[Any, ...]) -> int:
        query = _render(text, self._ledger.schema)
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
            conn = psycopg.connect(self._ledger.dsn, autocommit=True, application_name=self._name)
            self._local.conn = conn
            with self._lock:
                self._opened = [c for c in self._opened if not c.closed] + [conn]
        return conn


class _PgProbe:
    """One control connection under ``application_name``."""

    def __init__(self, ledger: PgLedger, run_id: str, application_name: str) -> None:
        self._schema, self._run_id = ledger.schema, run_id
        self._conn = psycopg.connect(ledger.dsn, autocommit=True, application_name=application_name)
        self._guarded = self._count(HAS_TABLE, (f'"{ledger.schema}"."job_keys"',)) > 0

    def __enter__(self) -> _PgProbe:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._conn.close()

    def _count(self, text: str, params: tuple[Any, ...]) -> int:
        with translated(self._schema):
            row: TupleRow | None = self._conn.execute(
                _render(text, self._schema), params
            ).fetchone()
        return int(row[0] or 0) if row else 0

    def returned(self, pid: int) -> int:
        settled = _KEY_SETTLED if self._guarded else ""
        return self._count(f"SELECT l.job_id{_UNACKED}{settled} LIMIT 1", (self._run_id, pid))

    def running(self, pid: int) -> int:
        return self._count(RUNNING, (self._run_id, pid))

    def exposed(self, pid: int) -> int:
        if not self._guarded:
            return 0
        return self._count(f"SELECT count(*){_UNACKED}{_KEY_OPEN}", (self._run_id, pid))

    def active(self, application_name: str) -> bool:
        return self._count(ACTIVE, (application_name,)) > 0

    def terminate(self, prefix: str) -> int:
        with translated(self._schema):
            rows = self._conn.execute(TERMINATE, (prefix,)).fetchall()
        return sum(1 for (ok,) in rows if ok)
