"""Root test configuration of this distribution's tests: the real servers' fixtures.

They live in ``queue_runtime.testing.server_fixtures`` (one copy for both
distributions' suites): ``require_pg``, ``require_redis``, ``wait_until`` and the
``pg`` / ``redis`` marker hook (skip locally, fail when MIGRATOR_REQUIRE_SERVICES is set).
"""

from queue_runtime.testing.server_fixtures import (
    pytest_runtest_setup,
    require_pg,
    require_redis,
    wait_until_fixture,
)

__all__ = ["pytest_runtest_setup", "require_pg", "require_redis", "wait_until_fixture"]
