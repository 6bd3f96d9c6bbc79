"""pgqueuer adapter: asyncpg; workers run pgqueuer's own supervisor, as ``pgq run`` does.

``pgq run`` itself cannot start in pgqueuer 1.6.0 with typer 0.29: its
``--log-level`` default reaches ``setup_fancy_logger`` as a str and it fails
with ``AttributeError: 'str' object has no attribute 'name'``. So each worker
process runs ``python -m bench._peers.pgqueuer_tool``, which calls what the
CLI calls after parsing: ``pgqueuer.run(factory)`` (same defaults: batch size
10, continuous mode) on the CLI's event loop (``uvloop`` when installed).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

import asyncpg
import pgqueuer
from pgqueuer import PgQueuer, Queries
from pgqueuer.adapters.cli.cli import asyncio_run
from pgqueuer.models import Job

from bench._peers.procs import WorkerSpec
from bench._peers.recorder import record_start
from bench._peers.tool import NOOP, paced_slots, stamped

DSN_ENV = "BENCH_PGQUEUER_DSN"


@asynccontextmanager
async def create_pgqueuer() -> AsyncIterator[PgQueuer]:
    """The factory ``pgq run`` calls in each worker process."""
    connection = await asyncpg.connect(os.environ[DSN_ENV])
    pgq = PgQueuer.from_asyncpg_connection(connection)

    @pgq.entrypoint(NOOP)
    async def bench_noop(job: Job) -> None:
        args = json.loads(job.payload or b"{}")
        record_start(int(args["i"]), float(args["t"]))

    try:
        yield pgq
    finally:
        await connection.close()


def _encode(job: dict[str, float]) -> bytes:
    return json.dumps(job).encode()


class PgqueuerTool:
    name = "pgqueuer"
    bulk_api = "Queries.enqueue(lists) (one INSERT ... unnest per batch)"
    runner = "pgqueuer.run(factory) = `pgq run` minus its arg parsing (CLI broken), batch 10"
    remaining_sql = "SELECT count(*) FROM pgqueuer"

    def install(self, dsn: str) -> None:
        asyncio.run(self._with_queries(dsn, lambda q: q.install()))

    def enqueue_single(self, dsn: str, jobs: list[dict[str, float]]) -> None:
        async def run(queries: Queries) -> None:
            for job in jobs:  # autocommit: each enqueue is its own transaction
                await queries.enqueue(NOOP, _encode(job))

        asyncio.run(self._with_queries(dsn, run))

    def enqueue_bulk(self, dsn: str, jobs: list[dict[str, float]], batch: int) -> None:
        async def run(queries: Queries) -> None:
            for offset in range(0, len(jobs), batch):
                chunk = jobs[offset : offset + batch]
                await queries.enqueue(
                    [NOOP] * len(chunk), [_encode(j) for j in chunk], [0] * len(chunk)
                )

        asyncio.run(self._with_queries(dsn, run))

    def enqueue_paced(self, dsn: str, first_seq: int, count: int, rate: float) -> list[float]:
        durations: list[float] = []

        async def run(queries: Queries) -> None:
            for index, due in paced_slots(count, rate):
                await asyncio.sleep(max(0.0, due - time.monotonic()))
                args = stamped(first_seq + index)
                await queries.enqueue(NOOP, _encode(args))
                durations.append(time.time() - args["t"])

        asyncio.run(self._with_queries(dsn, run))
        return durations

    def worker(self, dsn: str) -> WorkerSpec:
        return WorkerSpec([sys.executable, "-m", "bench._peers.pgqueuer_tool"], {DSN_ENV: dsn})

    def cleanup(self) -> None:
        return None

    @staticmethod
    async def _with_queries(dsn: str, action: Callable[[Queries], Awaitable[None]]) -> None:
        connection = await asyncpg.connect(dsn)
        try:
            await action(Queries.from_asyncpg_connection(connection))
        finally:
            await connection.close()


if __name__ == "__main__":
    asyncio_run(pgqueuer.run(create_pgqueuer))
