"""Async connections to PostgreSQL: one ``AsyncConnectionPool`` per event loop, created lazily.

An asyncio pool belongs to the loop it was opened in (its locks, its workers,
its sockets' callbacks), so the async store operations (``aenqueue_returning``,
``aget``) find the pool of the *running* loop and open one on the first use in
a loop: same URL, connection parameters (autocommit, prepared statements),
size and timeouts as the sync pool (:func:`queue_runtime.pg.connect.open_pool`).
Building it never connects.

Closing (``close()``, which ``Runtime.close()`` reaches through the store) is
synchronous, for each loop's pool:

- the loop is closed: the pool cannot run any more; its connections are shut
  at the socket (libpq's ``finish``, no round trip) and the pool is dropped;
- the loop runs in another thread: the pool is closed on that loop (waited
  for, up to the pool's timeout);
- the loop is the one running ``close()`` (``Runtime.close()`` called from a
  coroutine): the close is scheduled on it as a task;
- the loop is idle (created, not running, not closed): it runs the close.

``aclose()`` closes the running loop's pool from inside it, which is what an
app that ends its loop itself (``asyncio.run(main())``) should await last.

An app that forgets it still ends. ``asyncio.run`` cancels every task left,
the pool's maintenance workers among them, once, and waits for them.
psycopg_pool's own worker (3.3) catches ``CancelledError`` around the task it
runs (opening a connection, returning one) and goes back to waiting for the
next task: a worker busy at that moment never ends, and neither does
``asyncio.run``. The pool here (:class:`_Pool`) runs its maintenance tasks in
a worker that ends when it is cancelled; any other error is logged and the
worker goes on, as psycopg_pool's does.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import weakref
from dataclasses import dataclass, field
from typing import Any

import psycopg
from psycopg_pool import AsyncConnectionPool, PoolTimeout
from psycopg_pool.pool_async import MaintenanceTask, StopWorker

from queue_runtime.config import Settings
from queue_runtime.errors import NotConfigured
from queue_runtime.pg.connect import CONNECTION_KWARGS, POOL_TIMEOUT, checked_url

AsyncConn = psycopg.AsyncConnection[Any]

log = logging.getLogger("queue_runtime.pg.loop_pools")


class _Pool(AsyncConnectionPool):
    """An ``AsyncConnectionPool`` whose maintenance workers end when cancelled (see the module)."""

    @classmethod
    async def worker(cls, q: asyncio.Queue[MaintenanceTask]) -> None:
        while not isinstance(task := await q.get(), StopWorker):
            try:
                await task.run()
            except Exception as exc:  # not CancelledError: a cancelled worker ends
                log.warning("pool task %s failed: %s: %s", task, type(exc).__name__, exc)


@dataclass(slots=True)
class _LoopPool:
    pool: AsyncConnectionPool
    # Every connection the pool made, to shut them when the loop is gone.
    made: weakref.WeakSet[AsyncConn] = field(default_factory=weakref.WeakSet)
    # One opener: concurrent open(wait=True) calls of one pool never all wake up.
    opening: asyncio.Lock = field(default_factory=asyncio.Lock)
    ready: bool = False

    def drop(self) -> None:
        for conn in list(self.made):
            if not conn.closed:
                conn.pgconn.finish()


class LoopPools:
    """The async pools of one store, one per event loop (see the module's closing rule)."""

    def __init__(self, settings: Settings, max_size: int = 10, **connect: Any) -> None:
        self._settings = settings
        self._max_size = max_size
        self._connect = connect
        self._pools: dict[asyncio.AbstractEventLoop, _LoopPool] = {}
        self._lock = threading.Lock()
        self._closing: set[asyncio.Task[None]] = set()  # closes scheduled on a running loop

    def __len__(self) -> int:
        """How many loops have a pool (opened or opening)."""
        return len(self._pools)

    async def get(self) -> AsyncConnectionPool:
        """The running loop's pool, opened (raises NotConfigured, BadDatabaseUrl, PoolTimeout)."""
        loop = asyncio.get_running_loop()
        entry = self._pools.get(loop)
        if entry is None:
            entry = self._entry(loop)
        if not entry.ready:
            async with entry.opening:
                if not entry.ready:
                    await self._open(loop, entry)
        return entry.pool

    async def _open(self, loop: asyncio.AbstractEventLoop, entry: _LoopPool) -> None:
        try:
            await entry.pool.open(wait=True, timeout=POOL_TIMEOUT)
        except PoolTimeout:
            self._forget(loop, entry)
            await entry.pool.close()  # stop its reconnecting; the next use tries again
            raise
        entry.ready = True

    async def aclose(self) -> None:
        """Close the running loop's pool (from inside the loop, before it ends)."""
        loop = asyncio.get_running_loop()
        with self._lock:
            entry = self._pools.pop(loop, None)
        if entry is not None:
            await entry.pool.close()

    def close(self) -> None:
        with self._lock:
            pools, self._pools = self._pools, {}
        for loop, entry in pools.items():
            self._close_on(loop, entry)

    def _entry(self, loop: asyncio.AbstractEventLoop) -> _LoopPool:
        with self._lock:
            found = self._pools.get(loop)
            if found is None:
                self._prune()
                found = self._pools[loop] = self._new_pool()
            return found

    def _prune(self) -> None:
        """Drop the pools of loops closed since (a loop per request or per test)."""
        for loop in [loop for loop in self._pools if loop.is_closed()]:
            self._pools.pop(loop).drop()

    def _forget(self, loop: asyncio.AbstractEventLoop, entry: _LoopPool) -> None:
        with self._lock:
            if self._pools.get(loop) is entry:
                del self._pools[loop]

    def _new_pool(self) -> _LoopPool:
        if not self._settings.database_url:
            raise NotConfigured()
        made: weakref.WeakSet[AsyncConn] = weakref.WeakSet()

        async def configure(conn: AsyncConn) -> None:
            made.add(conn)

        pool = _Pool(
            checked_url(self._settings.database_url),
            min_size=1,
            max_size=self._max_size,
            kwargs={**CONNECTION_KWARGS, **self._connect},
            configure=configure,
            open=False,
            timeout=POOL_TIMEOUT,
            name=f"queue_runtime.{self._settings.schema_name}.async",
        )
        return _LoopPool(pool, made)

    def _close_on(self, loop: asyncio.AbstractEventLoop, entry: _LoopPool) -> None:
        if loop.is_closed():
            entry.drop()
            return
        if _running_loop() is loop:  # close() called from a coroutine of this very loop
            task = loop.create_task(entry.pool.close())
            self._closing.add(task)
            task.add_done_callback(self._closing.discard)
            return
        if loop.is_running():
            done = asyncio.run_coroutine_threadsafe(entry.pool.close(), loop)
            try:
                done.result(timeout=POOL_TIMEOUT)
            except TimeoutError:
                entry.drop()  # the loop is stuck: its sockets go now
            return
        loop.run_until_complete(entry.pool.close())


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None
