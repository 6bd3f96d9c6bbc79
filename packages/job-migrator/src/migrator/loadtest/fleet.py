"""The processes a load test starts: worker subprocesses and, for redis-restart, a private Redis.

Every process here is started by the load test and stopped by its PID; no
other process is ever signalled. Each worker connects to PostgreSQL under its
own application name ``mlt-<run>-w<n>`` so ``pg-terminate`` chaos can end
exactly the workers' backends. Workers set up the sandbox's framework (Django,
Flask) with the same flags a production worker takes.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from migrator.loadtest.ledger import ledger_in, with_application_name
from queue_runtime import Settings
from queue_runtime.bootstrap import FrameworkSpec
from queue_runtime.testing import PrivateRedis

__all__ = ["Fleet", "FleetError", "PrivateRedis", "WorkerProcess", "env_for_workers", "wait_for"]

APP_MODULE = "migrator.loadtest._ledger_app"


class FleetError(RuntimeError):
    """A load-test process did not start."""


def wait_for(
    predicate: Callable[[], bool], timeout: float, what: str, interval: float = 0.05
) -> None:
    deadline = time.monotonic() + timeout
    while True:
        if predicate():
            return
        if time.monotonic() > deadline:
            raise FleetError(f"timed out after {timeout:g}s waiting for {what}")
        time.sleep(interval)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class WorkerProcess:
    index: int
    app_name: str
    process: subprocess.Popen[bytes]

    @property
    def pid(self) -> int:
        return self.process.pid

    def alive(self) -> bool:
        return self.process.poll() is None


class Fleet:
    """``queue-runtime worker migrator.loadtest._ledger_app`` subprocesses of one run."""

    def __init__(
        self,
        run_id: str,
        settings: Settings,
        env: dict[str, str],
        logdir: Path,
        concurrency: int | None,
        cwd: Path,
    ) -> None:
        self.run_id = run_id
        self.settings = settings
        self.env = env
        self.logdir = logdir
        self.concurrency = concurrency
        self.cwd = cwd
        self.workers: list[WorkerProcess] = []
        self.redis_url = settings.redis_url
        self._started = 0

    @property
    def app_prefix(self) -> str:
        return f"mlt-{self.run_id}-w"

    def live(self) -> list[WorkerProcess]:
        return [w for w in self.workers if w.alive()]

    def start(self) -> WorkerProcess:
        index = self._started
        self._started += 1
        app_name = f"{self.app_prefix}{index}"
        dsn = with_application_name(self.settings.database_url or "", app_name)
        command = [sys.executable, "-m", "queue_runtime.cli", "--database-url", dsn]
        command += ["--schema", self.settings.schema_name]
        command += ["--redis-prefix", self.settings.redis_prefix, "--log-level", "WARNING"]
        if self.redis_url:
            command += ["--redis-url", self.redis_url]
        command += ["worker", APP_MODULE, *FrameworkSpec.of(self.settings).worker_flags()]
        if self.concurrency:
            command += ["--concurrency", str(self.concurrency)]
        log = self.logdir / f"worker-{index}.log"
        with log.open("ab") as out:
            process = subprocess.Popen(command, cwd=self.cwd, env=self.env, stdout=out, stderr=out)
        worker = WorkerProcess(index, app_name, process)
        self.workers.append(worker)
        return worker

    def wait_connected(self, worker: WorkerProcess, timeout: float = 30.0) -> None:
        def connected() -> bool:
            if not worker.alive():
                raise FleetError(f"worker {worker.index} exited at start:\n{self.log_tail(worker)}")
            return self.backends(worker.app_name) > 0

        wait_for(connected, timeout, f"worker {worker.index} to connect to PostgreSQL", 0.1)

    def backends(self, app_name: str) -> int:
        return ledger_in(self.settings.database_url or "", self.settings.schema_name).backends(
            app_name
        )

    def log_tail(self, worker: WorkerProcess, lines: int = 30) -> str:
        path = self.logdir / f"worker-{worker.index}.log"
        try:
            return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    def stop_all(self, grace: float = 20.0) -> None:
        for worker in self.workers:
            if worker.alive():
                worker.process.send_signal(signal.SIGCONT)  # in case chaos left it frozen
                worker.process.terminate()
        deadline = time.monotonic() + grace
        for worker in self.workers:
            try:
                worker.process.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                worker.process.kill()
                worker.process.wait(timeout=10)


def env_for_workers(extra: dict[str, str], cwd: Path) -> dict[str, str]:
    """The parent's environment, the cwd importable, the load test's variables."""
    env = dict(os.environ)
    paths = [str(cwd), *[p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]]
    env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(paths))
    env.pop("QUEUE_RUNTIME_MODE", None)  # the sandbox decides; never forced inline
    env.update(extra)
    return env
