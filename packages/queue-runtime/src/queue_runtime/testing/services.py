"""Where the test servers are, and the skip-or-fail rule when one is missing.

``QUEUE_RUNTIME_TEST_DATABASE_URL`` / ``QUEUE_RUNTIME_TEST_REDIS_URL`` point at
the servers (default: PostgreSQL and Redis on 127.0.0.1). When a server cannot
be reached a test SKIPS with the reason, unless ``MIGRATOR_REQUIRE_SERVICES``
is set (CI): then it FAILS, so a missing server never turns a red build green.
pytest is imported only by :func:`require`: the runtime does not depend on it.
"""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Callable
from functools import cache
from typing import TypeVar
from urllib.parse import urlsplit

import redis

from queue_runtime.pg import admin

DEFAULT_PG_ADMIN_URL = "postgresql://postgres@127.0.0.1:5432/postgres"
DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/0"

T = TypeVar("T")


def pg_admin_url() -> str:
    return os.environ.get("QUEUE_RUNTIME_TEST_DATABASE_URL") or DEFAULT_PG_ADMIN_URL


def redis_test_url() -> str:
    return os.environ.get("QUEUE_RUNTIME_TEST_REDIS_URL") or DEFAULT_REDIS_URL


def services_required() -> bool:
    return bool(os.environ.get("MIGRATOR_REQUIRE_SERVICES"))


@cache
def pg_problem() -> str | None:
    """Why PostgreSQL cannot be used, or None when it answers a query."""
    problem = admin.probe(pg_admin_url())
    if problem is None:
        return None
    return f"PostgreSQL unreachable at {_redact(pg_admin_url())}: {problem}"


@cache
def redis_problem() -> str | None:
    """Why Redis cannot be used, or None when it answers PING."""
    try:
        client = redis.Redis.from_url(redis_test_url(), socket_connect_timeout=3)
        try:
            client.ping()
        finally:
            client.close()
    except (redis.RedisError, OSError, ValueError) as exc:  # ValueError: a malformed URL
        return f"Redis unreachable at {_redact(redis_test_url())}: {exc}"
    return None


def _redact(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.hostname}:{parts.port}"


def require(problem: str | None) -> None:
    """Skip (locally) or fail (MIGRATOR_REQUIRE_SERVICES set) when a server is missing."""
    if problem is None:
        return
    import pytest  # here, not at the top: apps import queue_runtime.testing without pytest

    if services_required():
        pytest.fail(f"{problem} (MIGRATOR_REQUIRE_SERVICES is set: servers are mandatory)")
    pytest.skip(f"{problem} (set MIGRATOR_REQUIRE_SERVICES=1 to make this a failure)")


def wait_until(
    predicate: Callable[[], T],
    timeout: float = 10.0,
    interval: float = 0.02,
    message: str = "condition",
) -> T:
    """Poll ``predicate`` until it returns something truthy (and return it); fail at the deadline."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {message}")
        time.sleep(min(interval, max(0.0, deadline - time.monotonic())))


def free_port() -> int:
    """A TCP port nobody listens on right now (for a private server, or a dead address)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
