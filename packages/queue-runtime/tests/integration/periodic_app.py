"""A periodic job for the periodic-ticker tests; each run is recorded in ``<schema>.executions``.

Workers import it (``queue-runtime worker tests.integration.periodic_app``);
``fault_app`` configures the runtime from ``QR_TEST_SETTINGS`` and owns the table.
"""

from __future__ import annotations

import os
from datetime import timedelta

import psycopg
from psycopg import sql

from queue_runtime import current, job
from queue_runtime.worker import current_job
from tests.integration import fault_app

EVERY = timedelta(seconds=2)


@job(pool="batch", every=EVERY)
def beat() -> None:
    settings = current().settings
    running = current_job()
    query = sql.SQL(
        "INSERT INTO {}.executions (job_id, attempt, pid, finished_at)"
        " VALUES (%s, %s, %s, clock_timestamp())"
    ).format(sql.Identifier(settings.schema_name))
    params = (running.id, running.attempt, os.getpid()) if running else (None, None, os.getpid())
    with psycopg.connect(
        settings.database_url or "", autocommit=True, application_name=fault_app.RECORDER_APP_NAME
    ) as conn:
        conn.execute(query, params)
