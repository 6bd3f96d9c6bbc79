"""A keyed job with a hook between its effect and its acknowledgement, for the chaos test.

A worker subprocess imports this module (``queue-runtime worker
tests.integration.guard_window_app``); it configures the runtime from
``QR_TEST_SETTINGS``. The job commits its effect (a row in
``<schema>.charges``), then, on its first attempt, writes ``attempt-1`` (its
pid) into the hook folder and blocks: the test knows the effect is committed
and the job not acknowledged, and SIGKILLs exactly there.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

import psycopg
from psycopg import sql

from queue_runtime import configure, current, job
from queue_runtime.gate import complete_in
from queue_runtime.testing.spawner import settings_from_env
from queue_runtime.worker import current_job

BLOCK_SECONDS = 120.0  # far past any test deadline: only the SIGKILL ends the first attempt

_settings = settings_from_env()
if _settings is not None:
    configure(_settings)


def create_table(dsn: str, schema: str) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(
            sql.SQL(
                "CREATE TABLE {}.charges (id bigserial PRIMARY KEY, order_id int, pid int,"
                " attempt int)"
            ).format(sql.Identifier(schema))
        )


def charges(dsn: str, schema: str) -> list[tuple[int, int, int]]:
    """Every charge made: (order, pid of the process that made it, its attempt)."""
    query = sql.SQL("SELECT order_id, pid, attempt FROM {}.charges ORDER BY id")
    with psycopg.connect(dsn) as conn:
        rows = conn.execute(query.format(sql.Identifier(schema))).fetchall()
    return [(row[0], row[1], row[2]) for row in rows]


@job(pool="batch", name="tests.guard_window.charge", idempotency="needs_key")
def charge(order: int, hook: str, atomic: bool = False) -> dict[str, int]:
    """Charge ``order`` (the non-idempotent effect), then, on attempt 1, signal and block.

    ``atomic``: the key is completed in the charge's own transaction (``complete_in``).
    """
    running = current_job()
    attempt = running.attempt if running is not None else 0
    settings = current().settings
    insert = sql.SQL("INSERT INTO {}.charges (order_id, pid, attempt) VALUES (%s, %s, %s)")
    result = {"charged": order, "attempt": attempt}
    with psycopg.connect(settings.database_url or "") as conn, conn.transaction():
        conn.execute(
            insert.format(sql.Identifier(settings.schema_name)), (order, os.getpid(), attempt)
        )
        if atomic:
            complete_in(conn, result)
    _signal(Path(hook), attempt)
    if attempt == 1:
        threading.Event().wait(BLOCK_SECONDS)  # effect committed, not acknowledged
    return result


def _signal(hook: Path, attempt: int) -> None:
    """``attempt-N`` holds this process's pid; renamed into place, so it is never read half-written."""
    partial = hook / f".attempt-{attempt}"
    partial.write_text(str(os.getpid()))
    partial.rename(hook / f"attempt-{attempt}")
