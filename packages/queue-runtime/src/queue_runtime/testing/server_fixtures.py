"""pytest fixtures and the marker hook for tests against the real servers.

A conftest imports them (``from queue_runtime.testing.server_fixtures import *``):
tests that need PostgreSQL or Redis ask for the ``require_pg`` / ``require_redis``
fixtures, or carry the ``pg`` / ``redis`` markers. When a server is unreachable the
test SKIPS with the reason, unless ``MIGRATOR_REQUIRE_SERVICES`` is set (CI): then it
FAILS, so a missing server can never turn a red build green.

This module imports pytest; ``queue_runtime.testing`` itself does not (pytest is not
a dependency of the runtime).
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from queue_runtime.testing.services import pg_problem, redis_problem, require, wait_until

__all__ = ["pytest_runtest_setup", "require_pg", "require_redis", "wait_until_fixture"]


@pytest.fixture(scope="session")
def require_pg() -> None:
    require(pg_problem())


@pytest.fixture(scope="session")
def require_redis() -> None:
    require(redis_problem())


def pytest_runtest_setup(item: pytest.Item) -> None:
    if item.get_closest_marker("pg"):
        require(pg_problem())
    if item.get_closest_marker("redis"):
        require(redis_problem())


@pytest.fixture(name="wait_until")
def wait_until_fixture() -> Callable[..., object]:
    """``wait_until(predicate, timeout=10, interval=0.02, message=...)`` as a fixture."""
    return wait_until
