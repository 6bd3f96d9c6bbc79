"""The job under test: it records a payment, one row per execution (non-idempotent).

The row is written in its own transaction with ``complete_in``: when the job
runs under an idempotency key (the execution guard), the key is marked
completed in the same commit as the effect; without a key that call does
nothing and a redelivery writes the row again.
"""

from __future__ import annotations

import os
import time

import psycopg
from psycopg import sql

from queue_runtime import current, job
from queue_runtime.gate import complete_in
from queue_runtime.worker import current_job

EFFECT_APP_NAME = "loadtest-app-effects"  # not a worker connection: pg-terminate spares it
JOB_SECONDS = 0.2


def create_tables(dsn: str, schema: str) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(
            sql.SQL(
                "CREATE TABLE IF NOT EXISTS {}.payments (id bigserial PRIMARY KEY,"
                " n integer NOT NULL, job_id bigint, pid integer)"
            ).format(sql.Identifier(schema))
        )


@job(pool="batch", idempotency="non_idempotent")
def record_payment(n: int) -> int:
    time.sleep(JOB_SECONDS)
    settings = current().settings
    running = current_job()
    with psycopg.connect(settings.database_url or "", application_name=EFFECT_APP_NAME) as conn:
        conn.execute(
            sql.SQL("INSERT INTO {}.payments (n, job_id, pid) VALUES (%s, %s, %s)").format(
                sql.Identifier(settings.schema_name)
            ),
            (n, running.id if running else None, os.getpid()),
        )
        complete_in(conn, n)  # the key commits with the payment (no-op without a key)
    return n
