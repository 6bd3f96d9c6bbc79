"""Isolation on shared servers: a database per session, a schema and a Redis prefix per test.

Everything made here is named at random and removed afterwards: the schema
dropped, the Redis keys of the prefix deleted with SCAN (never FLUSHALL: other
people share that Redis).
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import redis

from queue_runtime.config import Mode, Settings
from queue_runtime.migrations import migrate
from queue_runtime.pg import admin
from queue_runtime.testing.services import pg_admin_url, redis_problem, redis_test_url


def unique_name() -> str:
    """A short random identifier, usable as a schema name or key prefix."""
    return f"t{secrets.token_hex(5)}"


@contextmanager
def fresh_database(admin_url: str | None = None) -> Iterator[str]:
    """A database of our own, ``qr_test_<pid>_<rand>``: its URL; dropped afterwards."""
    admin_url = admin_url or pg_admin_url()
    dbname = f"qr_test_{os.getpid()}_{secrets.token_hex(3)}"
    admin.create_database(admin_url, dbname)
    try:
        yield admin.with_database(admin_url, dbname)
    finally:
        admin.drop_database(admin_url, dbname)


@contextmanager
def isolated_settings(
    database_url: str, name: str | None = None, *, migrated: bool = True, **overrides: Any
) -> Iterator[Settings]:
    """Queue-mode Settings on a fresh schema ``qr_<name>`` and prefix ``qrtest:<name>``.

    ``migrated=False`` leaves the schema absent (for tests of the unmigrated
    case); ``overrides`` are further Settings fields (short timings, ...).
    """
    name = name or unique_name()
    fields: dict[str, Any] = {"redis_url": redis_test_url(), "poll_interval": 0.2, **overrides}
    schema, prefix = f"qr_{name}", f"qrtest:{name}"
    settings = Settings(
        mode=Mode.QUEUE,
        database_url=database_url,
        schema_name=schema,
        redis_prefix=prefix,
        **fields,
    )
    try:
        if migrated:
            migrate(settings)
        yield settings
    finally:
        admin.drop_schema(database_url, settings.schema_name)
        if settings.redis_url and redis_problem() is None:
            delete_redis_prefix(settings.redis_url, settings.redis_prefix)


def delete_redis_prefix(url: str, prefix: str) -> int:
    """Delete every key ``<prefix>:*`` (SCAN in batches, never FLUSHALL); how many went."""
    client = redis.Redis.from_url(url)
    deleted = 0
    try:
        batch = list(client.scan_iter(match=f"{prefix}:*", count=500))
        for start in range(0, len(batch), 500):
            deleted += int(client.delete(*batch[start : start + 500]))
    finally:
        client.close()
    return deleted
