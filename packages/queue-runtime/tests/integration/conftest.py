"""Fixtures for tests against the real PostgreSQL and Redis servers.

Isolation: one fresh database per test session (dropped at the end), one fresh
schema and one unique Redis key prefix per test (dropped / deleted after it,
with SCAN, never FLUSHALL: other engineers share the Redis on 6379). Tests
that must kill or flush Redis use ``private_redis``: a redis-server of their
own on a free port, stopped by PID at teardown. The helpers behind them are
public, in :mod:`queue_runtime.testing`.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from queue_runtime.config import Settings
from queue_runtime.runtime import Runtime
from queue_runtime.testing import (
    PrivateRedis,
    fresh_database,
    isolated_settings,
    redis_test_url,
    require,
)
from queue_runtime.testing import (
    unique_name as make_unique_name,
)

__all__ = ["PrivateRedis"]  # test modules import it from here


@pytest.fixture(scope="session")
def pg_dsn(require_pg: None) -> Iterator[str]:
    """A database of our own for this test session: ``qr_test_<pid>_<rand>``."""
    with fresh_database() as dsn:
        yield dsn


@pytest.fixture
def unique_name() -> str:
    """A short random identifier, usable as a schema name or key prefix."""
    return make_unique_name()


@pytest.fixture
def bare_settings(pg_dsn: str, unique_name: str) -> Iterator[Settings]:
    """Queue-mode Settings on a fresh, NOT migrated schema (dropped afterwards)."""
    with isolated_settings(pg_dsn, unique_name, migrated=False) as settings:
        yield settings


@pytest.fixture
def settings(bare_settings: Settings) -> Settings:
    """Queue-mode Settings on a fresh schema, migrated to head."""
    from queue_runtime import migrate

    migrate(bare_settings)
    return bare_settings


@pytest.fixture
def runtime(settings: Settings) -> Iterator[Runtime]:
    """The configured (current) Runtime for ``settings``; closed and unset afterwards."""
    from queue_runtime import configure

    rt = configure(settings)
    try:
        yield rt
    finally:
        rt.close()


@pytest.fixture
def redis_client(require_redis: None) -> Iterator[redis.Redis]:
    client = redis.Redis.from_url(redis_test_url())
    try:
        yield client
    finally:
        client.close()


@pytest.fixture
def private_redis(tmp_path: Path) -> Iterator[PrivateRedis]:
    if shutil.which("redis-server") is None:
        require("redis-server binary not found on PATH")
    server = PrivateRedis(tmp_path)
    server.start()
    try:
        yield server
    finally:
        server.stop()
