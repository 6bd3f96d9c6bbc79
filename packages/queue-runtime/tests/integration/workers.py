"""Worker subprocesses and the execution log, for the worker and fault tests."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import psycopg
from psycopg import sql

from queue_runtime import Settings

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
    return row[0]


class Spawner:
    """Starts ``queue-runtime worker APP`` processes (fault_app by default); kills leftovers."""

    def __init__(self, logdir: Path, app: str = "tests.integration.fault_app") -> None:
        self.logdir, self.app = logdir, app
        self.procs: list[subprocess.Popen[bytes]] = []

    def start(self, settings: Settings, *args: str) -> subprocess.Popen[bytes]:
        env = {**os.environ, "QR_TEST_SETTINGS": settings.model_dump_json(by_alias=True)}
        command = [
            sys.executable,
            "-m",
            "queue_runtime.cli",
            "worker",
            self.app,
        ]
        log = self.logdir / f"worker-{len(self.procs)}.log"
        with log.open("ab") as out:
            proc = subprocess.Popen([*command, *args], cwd=ROOT, env=env, stdout=out, stderr=out)
        self.procs.append(proc)
        return proc

    def logs(self) -> str:
        return "\n".join(p.read_text() for p in sorted(self.logdir.glob("worker-*.log")))

    def stop_all(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                proc.terminate()
        for proc in self.procs:
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=5)


def spawning(tmp_path: Path) -> Iterator[Spawner]:
    """Body of the ``spawner`` fixture of the test modules: stops every worker it started."""
    spawned = Spawner(tmp_path)
    try:
        yield spawned
    finally:
        spawned.stop_all()
