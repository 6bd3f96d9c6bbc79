"""Worker subprocesses and the execution log, for the worker and fault tests."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import psycopg
from psycopg import sql

from queue_runtime import Settings
from queue_runtime.testing import WorkerSpawner

ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Execution:
    job_id: int
    attempt: int
    pid: int
    started_at: datetime
    finished_at: datetime | None


def executions(settings: Settings) -> list[Execution]:
    query = sql.SQL(
        "SELECT job_id, attempt, pid, started_at, finished_at FROM {}.executions ORDER BY id"
    ).format(sql.Identifier(settings.schema_name))
    with psycopg.connect(settings.database_url or "") as conn:
        return [Execution(*row) for row in conn.execute(query).fetchall()]


def db_now(settings: Settings) -> datetime:
    with psycopg.connect(settings.database_url or "") as conn:
        row = conn.execute("SELECT clock_timestamp()").fetchone()
    assert row is not None
    now: datetime = row[0]
    return now


class Spawner(WorkerSpawner):
    """:class:`queue_runtime.testing.WorkerSpawner` of ``fault_app`` (by default), run from the
    runtime's package root so ``tests.integration.*`` apps import."""

    def __init__(self, logdir: Path, app: str = "tests.integration.fault_app") -> None:
        super().__init__(logdir, app, cwd=ROOT)


def spawning(tmp_path: Path) -> Iterator[Spawner]:
    """Body of the ``spawner`` fixture of the test modules: stops every worker it started."""
    spawned = Spawner(tmp_path)
    try:
        yield spawned
    finally:
        spawned.stop_all()
