"""procrastinate adapter: psycopg 3 async connector, its own ``procrastinate worker`` CLI.

``app`` is what ``procrastinate --app=bench._peers.procrastinate_tool.app worker``
loads in each worker process; the connector only connects when opened, so
reading the DSN from the environment here connects to nothing at import.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from procrastinate import App, PsycopgConnector

from bench._peers.procs import WorkerSpec
from bench._peers.recorder import record_start
from bench._peers.tool import NOOP, paced_slots, stamped

DSN_ENV = "BENCH_PROCRASTINATE_DSN"
# procrastinate's default concurrency is 1 job at a time per worker; pgqueuer fetches 10
# per batch and runs them concurrently, so we give procrastinate 10 concurrent slots too.
CONCURRENCY = 10

app = App(connector=PsycopgConnector(conninfo=os.environ.get(DSN_ENV, "")))


@app.task(name=NOOP)
async def bench_noop(i: int, t: float) -> None:
    record_start(i, t)


class ProcrastinateTool:
    name = "procrastinate"
    bulk_api = "JobDeferrer.batch_defer_async (one multi-row INSERT per batch)"
    runner = f"`procrastinate worker` CLI (psycopg async), concurrency {CONCURRENCY}"
    remaining_sql = "SELECT count(*) FROM procrastinate_jobs WHERE status IN ('todo', 'doing')"

    def install(self, dsn: str) -> None:
        asyncio.run(_with_app(dsn, lambda a: a.schema_manager.apply_schema_async()))

    def enqueue_single(self, dsn: str, jobs: list[dict[str, float]]) -> None:
        async def run(client: App) -> None:
            deferrer = client.configure_task(NOOP)
            for job in jobs:  # each defer is its own statement, autocommitted
                await deferrer.defer_async(**job)

        asyncio.run(_with_app(dsn, run))

    def enqueue_bulk(self, dsn: str, jobs: list[dict[str, float]], batch: int) -> None:
        async def run(client: App) -> None:
            deferrer = client.configure_task(NOOP)
            for offset in range(0, len(jobs), batch):
                await deferrer.batch_defer_async(*jobs[offset : offset + batch])

        asyncio.run(_with_app(dsn, run))

    def enqueue_paced(self, dsn: str, first_seq: int, count: int, rate: float) -> list[float]:
        durations: list[float] = []

        async def run(client: App) -> None:
            deferrer = client.configure_task(NOOP)
            for index, due in paced_slots(count, rate):
                await asyncio.sleep(max(0.0, due - time.monotonic()))
                args = stamped(first_seq + index)
                await deferrer.defer_async(**args)
                durations.append(time.time() - args["t"])

        asyncio.run(_with_app(dsn, run))
        return durations

    def worker(self, dsn: str) -> WorkerSpec:
        cli = str(Path(sys.executable).with_name("procrastinate"))
        argv = [
            cli,
            "--app=bench._peers.procrastinate_tool.app",
            "worker",
            f"--concurrency={CONCURRENCY}",
        ]
        return WorkerSpec(argv, {DSN_ENV: dsn})

    def cleanup(self) -> None:
        return None


async def _with_app(dsn: str, action: Callable[[App], Awaitable[object]]) -> None:
    client = App(connector=PsycopgConnector(conninfo=dsn, min_size=1, max_size=2))
    async with client.open_async():
        await action(client)
