"""A redis-server of the caller's own, on a free port: safe to FLUSHALL, stop and restart.

Tests of flushes and restarts, and the load test's redis-restart chaos, must
never touch the shared Redis. The process is started here and signalled by its
PID only.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import redis

from queue_runtime.errors import QueueError
from queue_runtime.testing.services import free_port, wait_until


class RedisServerMissing(QueueError):
    """No redis-server binary on PATH: a private Redis cannot be started."""


class PrivateRedis:
    """``redis-server`` on 127.0.0.1 and a free port, no persistence, working dir ``workdir``."""

    def __init__(self, workdir: Path, start_timeout: float = 30.0) -> None:
        if shutil.which("redis-server") is None:
            raise RedisServerMissing()
        self.workdir = workdir
        self.port = free_port()
        self.start_timeout = start_timeout
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process else None

    def client(self) -> redis.Redis:
        """A new client of this server (the caller closes it)."""
        return redis.Redis.from_url(self.url)

    def start(self) -> None:
        """Start it (same port as before on a restart) and wait until it answers PING."""
        args = ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1"]
        args += ["--save", "", "--appendonly", "no", "--dir", str(self.workdir)]
        self.process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_until(self._answers, self.start_timeout, 0.05, f"redis-server on port {self.port}")

    def stop(self) -> None:
        """SIGTERM, then SIGKILL after 10 s; a no-op when not running."""
        if self.process is None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=10)
        self.process = None

    def restart(self) -> None:
        self.stop()
        self.start()

    def _answers(self) -> bool:
        try:
            with redis.Redis.from_url(self.url, socket_connect_timeout=0.5) as client:
                return bool(client.ping())
        except redis.ConnectionError:
            return False
