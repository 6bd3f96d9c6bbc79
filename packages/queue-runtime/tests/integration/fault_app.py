"""Jobs for the worker and fault tests; every execution is recorded in PostgreSQL.

A worker subprocess imports this module (``queue-runtime worker
tests.integration.fault_app``); it configures the runtime from
``QR_TEST_SETTINGS`` (a Settings JSON) when that is set. Each execution writes
a row in ``<schema>.executions`` in its own transaction when it starts and
stamps ``finished_at`` when it ends, so tests can compare what ran with what
the queue says completed.
"""

from __future__ import annotations

import asyncio
import os
import time
from dataclasses import dataclass

import psycopg
from psycopg import sql

from queue_runtime import Permanent, Settings, configure, current, job
from queue_runtime.worker import current_job

RECORDER_APP_NAME = "qr-test-recorder"  # not a worker connection: pg_terminate spares it

if os.environ.get("QR_TEST_SETTINGS"):
    configure(Settings.model_validate_json(os.environ["QR_TEST_SETTINGS"]))


def create_tables(dsn: str, schema: str) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(
            sql.SQL(
                "CREATE TABLE IF NOT EXISTS {}.executions (id bigserial PRIMARY KEY, job_id bigint,"
                " attempt int, pid int, started_at timestamptz NOT NULL DEFAULT clock_timestamp(),"
                " finished_at timestamptz)"
            ).format(sql.Identifier(schema))
        )


def _record(statement: str, *params: object) -> list[tuple[object, ...]]:
    settings = current().settings
    query = sql.SQL(statement).format(sql.Identifier(settings.schema_name))
    with psycopg.connect(
        settings.database_url or "", autocommit=True, application_name=RECORDER_APP_NAME
    ) as conn:
        return conn.execute(query, params).fetchall()


def _start() -> int:
    running = current_job()
    job_id, attempt = (running.id, running.attempt) if running else (None, None)
    rows = _record(
        "INSERT INTO {}.executions (job_id, attempt, pid) VALUES (%s, %s, %s) RETURNING id",
        job_id,
        attempt,
        os.getpid(),
    )
    return int(rows[0][0])  # type: ignore[call-overload]


def _finish(execution: int) -> None:
    _record(
        "UPDATE {}.executions SET finished_at = clock_timestamp() WHERE id = %s RETURNING id",
        execution,
    )


@job(pool="batch")
def work(n: int, seconds: float = 0.0) -> int:
    execution = _start()
    time.sleep(seconds)
    _finish(execution)
    return n * 2


@dataclass
class Shelf:
    """A method job's instance: it crosses as tagged JSON, and the worker calls the method on it."""

    shelf_id: int
    label: str

    @job(pool="batch")
    def restock(self, count: int) -> str:
        _finish(_start())
        return f"{self.label}#{self.shelf_id}+{count}"


class Warehouse:
    """A classmethod job: the class it is read from crosses by its import path."""

    region = "any"

    @job(pool="batch")
    @classmethod
    def recount(cls, count: int) -> str:
        _finish(_start())
        return f"{cls.__name__}/{cls.region}+{count}"


class NorthWarehouse(Warehouse):
    region = "north"


class Ledger:
    """Not a Warehouse: a payload naming it for ``Warehouse.recount`` is refused."""

    region = "ledger"


@job(pool="transactional")
def urgent(n: int) -> int:
    _finish(_start())
    return n + 1000


@job(pool="batch")
def poison(n: int) -> int:
    _start()
    raise ValueError(f"poison {n}")


@job(pool="batch")
def refuse(n: int) -> int:
    _start()
    raise Permanent(f"bad input {n}")


@job(pool="batch", timeout=0.3)
def too_slow(seconds: float) -> str:
    execution = _start()
    time.sleep(seconds)
    _finish(execution)
    return "late"


@job(pool="batch")
async def async_work(n: int, seconds: float = 0.0) -> dict[str, int]:
    await asyncio.sleep(seconds)
    running = current_job()  # task-local, even with many tasks on one loop
    return {"value": n * 3, "job_id": running.id if running else -1}


@job(pool="batch", timeout=0.2)
async def async_too_slow(seconds: float) -> str:
    await asyncio.sleep(seconds)
    return "late"
