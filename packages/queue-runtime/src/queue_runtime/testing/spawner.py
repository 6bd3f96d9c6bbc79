"""Worker subprocesses for tests: ``queue-runtime worker APP`` started, stopped and killed by PID.

The worker learns its Settings from the environment variable :data:`SETTINGS_ENV`
(a Settings JSON) which the app module reads at import, via
:func:`settings_from_env`, so a test can hand a worker any tuned Settings
(short lease TTLs, a private Redis) without a config file. Only processes
started here are ever signalled.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from queue_runtime.config import Settings

SETTINGS_ENV = "QR_TEST_SETTINGS"


def settings_from_env() -> Settings | None:
    """The Settings a spawned worker was started with, or None outside one."""
    text = os.environ.get(SETTINGS_ENV)
    return Settings.model_validate_json(text) if text else None


class WorkerSpawner:
    """Starts ``python -m queue_runtime.cli worker APP`` processes in ``cwd``, logs in ``logdir``.

    ``python``: the interpreter (default: this one); an app's own venv runs its workers.
    """

    def __init__(
        self,
        logdir: Path,
        app: str,
        *,
        cwd: Path | None = None,
        env: Mapping[str, str] | None = None,
        python: str | None = None,
    ) -> None:
        self.logdir, self.app = logdir, app
        self.cwd = cwd or Path.cwd()
        self.env = env  # None: the environment as it is when each worker starts
        self.python = python or sys.executable  # another venv's: an app's own interpreter
        self.procs: list[subprocess.Popen[bytes]] = []

    def start(self, settings: Settings, *args: str) -> subprocess.Popen[bytes]:
        """One worker for ``settings``; ``args`` are worker options (``--pool``, ...)."""
        env = {
            **(os.environ if self.env is None else self.env),
            SETTINGS_ENV: settings.model_dump_json(by_alias=True),
        }
        command = [self.python, "-m", "queue_runtime.cli", "worker", self.app, *args]
        log = self.logdir / f"worker-{len(self.procs)}.log"
        with log.open("ab") as out:
            proc = subprocess.Popen(command, cwd=self.cwd, env=env, stdout=out, stderr=out)
        self.procs.append(proc)
        return proc

    def logs(self) -> str:
        """Everything the workers printed, worker by worker."""
        return "\n".join(p.read_text() for p in sorted(self.logdir.glob("worker-*.log")))

    def kill(self, proc: subprocess.Popen[bytes], sig: signal.Signals = signal.SIGKILL) -> None:
        """Signal one of our workers (SIGKILL by default: a crash) and reap it."""
        if proc not in self.procs:
            raise ValueError(f"pid {proc.pid} was not started by this spawner")
        proc.send_signal(sig)
        proc.wait(timeout=15)

    def stop_all(self, grace: float = 15.0) -> None:
        """SIGTERM every live worker, SIGKILL those still running after ``grace`` seconds."""
        for proc in self.procs:
            if proc.poll() is None:
                proc.send_signal(signal.SIGCONT)  # a test may have left it frozen (SIGSTOP)
                proc.terminate()
        for proc in self.procs:
            try:
                proc.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=5)


@contextmanager
def spawned_workers(
    logdir: Path, app: str, *, cwd: Path | None = None, env: Mapping[str, str] | None = None
) -> Iterator[WorkerSpawner]:
    """A :class:`WorkerSpawner` whose workers are all stopped on the way out."""
    spawner = WorkerSpawner(logdir, app, cwd=cwd, env=env)
    try:
        yield spawner
    finally:
        spawner.stop_all()
