"""The execution ledger: one row per run of the job body, in the sandbox database.

``<schema>.loadtest_ledger`` (schema = the sandbox's queue schema): run id,
job id, attempt, idempotency key, worker pid, start, end, whether the body
raised. The worker app (:mod:`migrator.loadtest._ledger_app`) writes it around
the real job function on its own connection (application name
``migrator-loadtest-ledger-<pid>``, so ``pg-terminate`` chaos spares it); the load
test reads it to measure dispatch latency, duplicate deliveries and duplicate
completions.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections import defaultdict
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import psycopg
from psycopg import sql

from migrator.loadtest.report import DuplicateCompletion, Execution

TABLE = "loadtest_ledger"
LEDGER_APP_NAME = "migrator-loadtest-ledger"

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


def ledger_app_name(pid: int) -> str:
    """The application name of a worker's ledger connections (chaos waits for them to settle)."""
    return f"{LEDGER_APP_NAME}-{pid}"


def with_application_name(dsn: str, name: str) -> str:
    """``dsn`` with ``application_name=name`` (URL form; a key=value DSN gets it appended)."""
    if "://" not in dsn:
        return f"{dsn} application_name={name}"
    parts = urlsplit(dsn)
    query = "&".join(
        p for p in parts.query.split("&") if p and not p.startswith("application_name=")
    )
    query = f"{query}&application_name={name}" if query else f"application_name={name}"
    return urlunsplit((parts.scheme, parts.netloc, parts.path, query, parts.fragment))


def table(schema: str) -> sql.Composed:
    return sql.SQL("{}.{}").format(sql.Identifier(schema), sql.Identifier(TABLE))


def create(dsn: str, schema: str) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(sql.SQL(DDL).format(t=table(schema), i=sql.Identifier(f"{TABLE}_run_idx")))


def delete_run(dsn: str, schema: str, run_id: str) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(sql.SQL("DELETE FROM {} WHERE run_id = %s").format(table(schema)), (run_id,))


class LedgerWriter:
    """Writes ledger rows from a worker: one connection per thread, reconnected on failure."""

    def __init__(self, dsn: str, schema: str, run_id: str) -> None:
        self._dsn = with_application_name(dsn, ledger_app_name(os.getpid()))
        self._table = table(schema)
        self._run_id = run_id
        self._local = threading.local()

    def start(self, job_id: int, attempt: int, key: str | None, pid: int) -> int:
        query = sql.SQL(
            "INSERT INTO {} (run_id, job_id, attempt, idempotency_key, pid)"
            " VALUES (%s, %s, %s, %s, %s) RETURNING id"
        ).format(self._table)
        row = self._execute(query, (self._run_id, job_id, attempt, key, pid))
        return int(row[0])

    def finish(self, entry: int, failed: bool) -> None:
        query = sql.SQL(
            "UPDATE {} SET finished_at = clock_timestamp(), failed = %s WHERE id = %s RETURNING id"
        ).format(self._table)
        self._execute(query, (failed, entry))

    def _execute(self, query: sql.Composed, params: tuple[Any, ...]) -> tuple[Any, ...]:
        for attempt in range(20):  # the ledger must not lose a row to a transient failure
            conn = self._connection()
            try:
                row = conn.execute(query, params).fetchone()
                assert row is not None
                return tuple(row)
            except psycopg.OperationalError:
                self._local.conn = None
                with contextlib.suppress(psycopg.Error):
                    conn.close()
                time.sleep(min(0.5, 0.01 * 2**attempt))
        raise RuntimeError("the load-test ledger is unreachable")

    def _connection(self) -> psycopg.Connection[Any]:
        conn = getattr(self._local, "conn", None)
        if conn is None or conn.closed:
            conn = psycopg.connect(self._dsn, autocommit=True)
            self._local.conn = conn
        return conn


def read(dsn: str, schema: str, run_id: str) -> list[tuple[Execution, str | None]]:
    """Every ledger row of the run: (execution, idempotency key), in insertion order."""
    query = sql.SQL(
        "SELECT job_id, attempt, pid, started_at, finished_at, failed, idempotency_key"
        " FROM {} WHERE run_id = %s ORDER BY id"
    ).format(table(schema))
    with psycopg.connect(dsn) as conn:
        rows = conn.execute(query, (run_id,)).fetchall()
    return [
        (
            Execution(
                job_id=r[0], attempt=r[1], pid=r[2], started_at=r[3], finished_at=r[4], failed=r[5]
            ),
            r[6],
        )
        for r in rows
    ]


def duplicate_completions(
    rows: list[tuple[Execution, str | None]],
) -> list[DuplicateCompletion]:
    """Keys (a job without a key: its id) whose body ran to completion more than once."""
    by_key: dict[tuple[bool, str], list[Execution]] = defaultdict(list)
    for execution, key in rows:
        ident = (True, key) if key is not None else (False, str(execution.job_id))
        by_key[ident].append(execution)
    found = []
    for (keyed, key), runs in by_key.items():
        completed = [e for e in runs if e.finished_at is not None and not e.failed]
        if len(completed) > 1:
            found.append(
                DuplicateCompletion(
                    key=key, keyed=keyed, completions=len(completed), executions=runs
                )
            )
    return sorted(found, key=lambda d: d.key)


def duplicate_deliveries(rows: list[tuple[Execution, str | None]]) -> int:
    """Jobs whose body started more than once."""
    starts: dict[int, int] = defaultdict(int)
    for execution, _ in rows:
        starts[execution.job_id] += 1
    return sum(1 for n in starts.values() if n > 1)
