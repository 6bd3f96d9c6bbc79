"""An app's event loop ends even when it forgets ``await store.aclose()``.

``asyncio.run`` cancels the tasks left when ``main()`` returns, once, and waits
for them. psycopg_pool's async maintenance worker catches ``CancelledError``
around the task it runs, so a worker busy at that moment (opening a connection
for a slow server, say) went back to its queue and ``asyncio.run`` never
returned: CI3's 300 s hang. The runtime's loop pools run their maintenance in a
worker that ends when cancelled, and still survives an ordinary task error.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import textwrap

from psycopg_pool.pool_async import AsyncConnectionPool, MaintenanceTask

from queue_runtime.config import Settings
from queue_runtime.pg.loop_pools import LoopPools

# The loop ends while one of the pool's workers runs a maintenance task that has not finished.
# ``Stuck`` stands for it (a real one is a connection attempt to a server that is slow to answer).
_APP = textwrap.dedent(
    """
    import asyncio, os, sys
    from psycopg_pool.pool_async import MaintenanceTask
    from queue_runtime.config import Settings
    from queue_runtime.pg.loop_pools import LoopPools

    class Stuck(MaintenanceTask):
        async def _run(self, pool):
            running.set()
            await asyncio.Event().wait()

    async def main():
        global running
        running = asyncio.Event()
        pools = LoopPools(Settings(database_url=os.environ["QR_TEST_DSN"]))
        pool = await pools.get()
        async with pool.connection() as conn:
            await conn.execute("SELECT 1")
        pool.run_task(Stuck(pool))
        await asyncio.wait_for(running.wait(), 30)
        print("worker busy", flush=True)
        # main() returns without pools.aclose(): asyncio.run cancels what is left

    asyncio.run(main())
    print("loop ended", flush=True)
    """
)


def test_a_loop_ends_while_a_pool_worker_is_busy_and_nobody_closed_the_pool(pg_dsn: str) -> None:
    try:
        done = subprocess.run(
            [sys.executable, "-c", _APP],
            env={**os.environ, "QR_TEST_DSN": pg_dsn},
            capture_output=True,
            text=True,
            timeout=60,  # the child is killed past it; a correct run takes about a second
        )
    except subprocess.TimeoutExpired as exc:
        raise AssertionError(
            f"asyncio.run never returned after the loop's tasks were cancelled; printed: {exc.stdout!r}"
        ) from None
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["worker busy", "loop ended"]


def test_a_pool_worker_survives_a_task_that_fails_and_runs_the_next(pg_dsn: str) -> None:
    class Fails(MaintenanceTask):
        async def _run(self, pool: AsyncConnectionPool) -> None:
            raise RuntimeError("boom")

    class Marks(MaintenanceTask):
        def __init__(self, pool: AsyncConnectionPool, ran: asyncio.Event) -> None:
            super().__init__(pool)
            self.ran = ran

        async def _run(self, pool: AsyncConnectionPool) -> None:
            self.ran.set()

    async def scenario() -> int:
        pools = LoopPools(Settings(database_url=pg_dsn), max_size=2)
        pool = await pools.get()
        try:
            ran = asyncio.Event()
            for _ in range(pool.num_workers):  # every worker meets a failing task first
                pool.run_task(Fails(pool))
            pool.run_task(Marks(pool, ran))
            await asyncio.wait_for(ran.wait(), 30)
            async with pool.connection() as conn:  # and the pool still serves
                cur = await conn.execute("SELECT 41 + 1")
                row = await cur.fetchone()
            assert row is not None
            return int(row[0])
        finally:
            await pools.aclose()

    assert asyncio.run(scenario()) == 42
