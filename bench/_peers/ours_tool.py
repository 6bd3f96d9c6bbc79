"""queue_runtime adapter: our public API in the bench, our ``queue-runtime worker`` CLI.

The worker CLI imports this module (``queue-runtime ... worker
bench._peers.ours_tool``), which registers ``bench_noop``; decorating connects
nothing. Leasing is on (every worker needs Redis); the keys live under a
prefix unique to this bench run and are deleted at the end. Everything else is
the default ``Settings``: the job goes to the default pool, the worker serves
every configured pool, as an app that just installed the runtime would run it.
"""

from __future__ import annotations

import os
import secrets
import sys
import time
from pathlib import Path

import redis

from bench._peers.procs import WorkerSpec
from bench._peers.recorder import record_start
from bench._peers.tool import NOOP, paced_slots, stamped
from queue_runtime import Mode, Settings, configure, job, migrate

REDIS_URL = "redis://127.0.0.1:6379/0"


@job(name=NOOP)
def bench_noop(i: int, t: float) -> None:
    record_start(i, t)


class OursTool:
    name = "ours"
    bulk_api = "enqueue_many (binary COPY, ids from the sequence, one NOTIFY per pool)"
    runner = "`queue-runtime worker` CLI, leasing ON (Redis), default Settings"

    def __init__(self, worker_args: list[str] | None = None) -> None:
        self.worker_args = worker_args or []  # e.g. ["--pool", "batch"]: tuning experiments
        if self.worker_args:
            self.runner = f"{self.runner}, worker options {' '.join(self.worker_args)}"
        self.prefix = f"bench-{os.getpid()}-{secrets.token_hex(3)}"
        self.settings = Settings()
        self.remaining_sql = f'SELECT count(*) FROM "{self.settings.schema_name}".jobs'
        self._dsn: str | None = None

    def _use(self, dsn: str) -> None:
        """Configure the runtime for this database (once: configure() closes the previous one)."""
        if dsn != self._dsn:
            runtime = configure(
                database_url=dsn, redis_url=REDIS_URL, redis_prefix=self.prefix, mode=Mode.QUEUE
            )
            self.settings, self._dsn = runtime.settings, dsn

    def install(self, dsn: str) -> None:
        self._use(dsn)
        migrate(self.settings)

    def enqueue_single(self, dsn: str, jobs: list[dict[str, float]]) -> None:
        self._use(dsn)
        for args in jobs:  # each enqueue is one autocommitted statement
            bench_noop.enqueue(**args)

    def enqueue_bulk(self, dsn: str, jobs: list[dict[str, float]], batch: int) -> None:
        self._use(dsn)
        for offset in range(0, len(jobs), batch):
            bench_noop.enqueue_many([((), args) for args in jobs[offset : offset + batch]])

    def enqueue_paced(self, dsn: str, first_seq: int, count: int, rate: float) -> list[float]:
        self._use(dsn)
        durations = []
        for index, due in paced_slots(count, rate):
            time.sleep(max(0.0, due - time.monotonic()))
            args = stamped(first_seq + index)
            bench_noop.enqueue(**args)
            durations.append(time.time() - args["t"])
        return durations

    def worker(self, dsn: str) -> WorkerSpec:
        argv = [
            str(Path(sys.executable).with_name("queue-runtime")),
            f"--database-url={dsn}",
            f"--redis-url={REDIS_URL}",
            f"--redis-prefix={self.prefix}",
            "--log-level=WARNING",
            "worker",
            "bench._peers.ours_tool",
            *self.worker_args,
        ]
        return WorkerSpec(argv)

    def cleanup(self) -> None:
        """Delete this run's keys (only ours, by prefix: the Redis is shared)."""
        configure(mode=Mode.INLINE)  # closes the runtime's pool and Redis client
        client = redis.Redis.from_url(REDIS_URL)
        try:
            keys = list(client.scan_iter(match=f"{self.prefix}:*", count=1000))
            if keys:
                client.delete(*keys)
        finally:
            client.close()
