"""Fixtures for tests against the real PostgreSQL and Redis servers.

Isolation: one fresh database per test session (dropped at the end), one fresh
schema and one unique Redis key prefix per test (dropped / deleted after it,
with SCAN, never FLUSHALL: other engineers share the Redis on 6379). Tests
that must kill or flush Redis use ``private_redis``: a redis-server of their
own on a free port, stopped by PID at teardown.
"""

from __future__ import annotations

import os
import secrets
import shutil
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import psycopg
import pytest
import redis
from psycopg import sql

from migrator.loadtest.fleet import PrivateRedis as LoadTestRedis
from queue_runtime.config import Mode, Settings
from queue_runtime.runtime import Runtime
from tests.support import (
    pg_admin_url,
    redis_problem,
    redis_test_url,
    require,
)


def _with_database(url: str, dbname: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, f"/{dbname}", parts.query, parts.fragment))


@pytest.fixture(scope="session")
def pg_dsn(require_pg: None) -> Iterator[str]:
    """A database of our own for this test session: ``qr_test_<pid>_<rand>``."""
    dbname = f"qr_test_{os.getpid()}_{secrets.token_hex(3)}"
    admin = pg_admin_url()
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(dbname)))
    try:
        yield _with_database(admin, dbname)
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(dbname))
            )


@pytest.fixture
def unique_name() -> str:
    """A short random identifier, usable as a schema name or key prefix."""
    return f"t{secrets.token_hex(5)}"


@pytest.fixture
def bare_settings(pg_dsn: str, unique_name: str) -> Iterator[Settings]:
    """Queue-mode Settings on a fresh, NOT migrated schema (dropped afterwards)."""
    settings = Settings(
        mode=Mode.QUEUE,
        database_url=pg_dsn,
        redis_url=redis_test_url(),
        schema=f"qr_{unique_name}",
        redis_prefix=f"qrtest:{unique_name}",
        poll_interval=0.2,
    )
    try:
        yield settings
    finally:
        _drop_schema(pg_dsn, settings.schema_name)
        _delete_redis_prefix(settings)


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


def _drop_schema(dsn: str, schema: str) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))


def _delete_redis_prefix(settings: Settings) -> None:
    if redis_problem() is not None or settings.redis_url is None:
        return
    client = redis.Redis.from_url(settings.redis_url)
    try:
        batch = list(client.scan_iter(match=f"{settings.redis_prefix}:*", count=500))
        for start in range(0, len(batch), 500):
            client.delete(*batch[start : start + 500])
    finally:
        client.close()


class PrivateRedis(LoadTestRedis):
    """A redis-server this test owns: safe to FLUSHALL, stop, restart (by its PID only)."""

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process else None

    def client(self) -> redis.Redis:
        return redis.Redis.from_url(self.url)


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
