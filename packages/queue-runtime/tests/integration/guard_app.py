"""A keyed job whose effect is a row in ``<schema>.charges``, for the execution guard tests.

A worker subprocess imports this module (``queue-runtime worker
tests.integration.guard_app``); it configures the runtime from
``QR_TEST_SETTINGS`` when that is set.
"""

from __future__ import annotations

import os
import time

import psycopg
from psycopg import sql

from queue_runtime import Settings, configure, current, job
from queue_runtime.gate import complete_in
from queue_runtime.worker import current_job

if os.environ.get("QR_TEST_SETTINGS"):
    configure(Settings.model_validate_json(os.environ["QR_TEST_SETTINGS"]))


def create_tables(dsn: str, schema: str) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(
            sql.SQL(
                "CREATE TABLE IF NOT EXISTS {}.charges (id bigserial PRIMARY KEY, order_id int,"
                " pid int, at timestamptz NOT NULL DEFAULT clock_timestamp())"
            ).format(sql.Identifier(schema))
        )


def charges(dsn: str, schema: str) -> list[tuple[int, int]]:
    query = sql.SQL("SELECT order_id, pid FROM {}.charges ORDER BY id").format(
        sql.Identifier(schema)
    )
    with psycopg.connect(dsn) as conn:
        return [(row[0], row[1]) for row in conn.execute(query).fetchall()]


@job(pool="batch", name="tests.guard.charge", idempotency="needs_key")
def charge(order: int, atomic: bool = False, linger: float = 0.0) -> dict[str, int]:
    """INSERT the charge (the non-idempotent effect), then linger on the first attempt (killed there).

    ``atomic``: the key is completed in the charge's own transaction (complete_in).
    """
    settings = current().settings
    insert = sql.SQL("INSERT INTO {}.charges (order_id, pid) VALUES (%s, %s)").format(
        sql.Identifier(settings.schema_name)
    )
    result = {"charged": order}
    with psycopg.connect(settings.database_url or "") as conn, conn.transaction():
        conn.execute(insert, (order, os.getpid()))
        if atomic:
            complete_in(conn, result)
    running = current_job()
    if running is None or running.attempt == 1:
        time.sleep(linger)
    return result
