"""Connections to PostgreSQL: one psycopg_pool per Runtime, created lazily.

Pooled connections are autocommit: a single-statement operation (enqueue,
claim, complete_many) is its own transaction, one round trip. Multi-statement
operations open an explicit transaction. Statements are prepared by psycopg
after their first use (``prepare_threshold=1``): the hot queries run many times.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
from psycopg_pool import ConnectionPool, PoolTimeout

from queue_runtime.config import Settings
from queue_runtime.errors import NotConfigured, StoreError

CONNECTION_KWARGS: dict[str, Any] = {"autocommit": True, "prepare_threshold": 1}
# Seconds to wait for a pooled connection (and for the first one at open): an
# app enqueueing while PostgreSQL is down gets an error, not a hung request.
POOL_TIMEOUT = 10.0


def open_pool(settings: Settings, max_size: int = 10) -> ConnectionPool:
    """A started pool for ``settings.database_url`` (raises NotConfigured without one)."""
    if not settings.database_url:
        raise NotConfigured()
    pool = ConnectionPool(
        settings.database_url,
        min_size=1,
        max_size=max_size,
        kwargs=dict(CONNECTION_KWARGS),
        open=False,
        timeout=POOL_TIMEOUT,
        name=f"queue_runtime.{settings.schema_name}",
    )
    try:
        pool.open(wait=True, timeout=POOL_TIMEOUT)
    except PoolTimeout:
        pool.close()  # stop its reconnecting threads; the next use tries again
        raise
    return pool


def connect(settings: Settings, **overrides: Any) -> psycopg.Connection[Any]:
    """One dedicated connection (LISTEN, long-running workers), autocommit by default."""
    if not settings.database_url:
        raise NotConfigured()
    return psycopg.connect(settings.database_url, **{**CONNECTION_KWARGS, **overrides})


def channel(settings: Settings) -> str:
    """The NOTIFY channel workers LISTEN on; the payload is the pool name."""
    return f"{settings.schema_name}_jobs"


@contextmanager
def public_errors() -> Iterator[None]:
    """At the public API edge (enqueue, handles): database failures become StoreError."""
    try:
        yield
    except psycopg.Error as exc:
        raise StoreError(f"{type(exc).__name__}: {exc}") from exc
