"""Helpers shared by the test suites (importable as ``tests.support``).

Service discovery for the real servers, the skip-or-fail rule, polling with a
deadline, free ports. The fixtures wrapping them live in the conftest files.
"""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Callable
from functools import cache
from urllib.parse import urlsplit

import pytest

DEFAULT_PG_ADMIN_URL = "postgresql://postgres@127.0.0.1:5432/postgres"
DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/0"


def pg_admin_url() -> str:
    return os.environ.get("QUEUE_RUNTIME_TEST_DATABASE_URL") or DEFAULT_PG_ADMIN_URL


def redis_test_url() -> str:
    return os.environ.get("QUEUE_RUNTIME_TEST_REDIS_URL") or DEFAULT_REDIS_URL


def services_required() -> bool:
    return bool(os.environ.get("MIGRATOR_REQUIRE_SERVICES"))


@cache
def pg_problem() -> str | None:
    """Why PostgreSQL cannot be used, or None when it answers a query."""
    try:
        import psycopg

        with psycopg.connect(pg_admin_url(), connect_timeout=3) as conn:
            conn.execute("SELECT 1")
    except Exception as exc:  # any failure means "unavailable"; the reason is reported
        return f"PostgreSQL unreachable at {_redact(pg_admin_url())}: {exc}"
    return None


@cache
def redis_problem() -> str | None:
    """Why Redis cannot be used, or None when it answers PING."""
    try:
        import redis

        client = redis.Redis.from_url(redis_test_url(), socket_connect_timeout=3)
        client.ping()
        client.close()
    except Exception as exc:  # any failure means "unavailable"; the reason is reported
        return f"Redis unreachable at {_redact(redis_test_url())}: {exc}"
    return None


def _redact(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.hostname}:{parts.port}"


def require(problem: str | None) -> None:
    """Skip (locally) or fail (MIGRATOR_REQUIRE_SERVICES set) when a server is missing."""
    if problem is None:
        return
    if services_required():
        pytest.fail(f"{problem} (MIGRATOR_REQUIRE_SERVICES is set: servers are mandatory)")
    pytest.skip(f"{problem} (set MIGRATOR_REQUIRE_SERVICES=1 to make this a failure)")


def wait_until(
    predicate: Callable[[], object],
    timeout: float = 10.0,
    interval: float = 0.02,
    message: str = "condition",
) -> object:
    """Poll ``predicate`` until it returns something truthy; fail at the deadline."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {message}")
        time.sleep(min(interval, max(0.0, deadline - time.monotonic())))


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
