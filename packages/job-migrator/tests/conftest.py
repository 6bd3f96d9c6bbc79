"""Root test configuration of this distribution's tests: the real servers' fixtures.

They live in ``queue_runtime.testing.server_fixtures`` (one copy for both
distributions' suites): ``require_pg``, ``require_redis``, ``wait_until`` and the
``pg`` / ``redis`` marker hook (skip locally, fail when MIGRATOR_REQUIRE_SERVICES is set).
Which tests are slow, and left out of the default run (``tests.suites``, in the runtime's
tests folder): everything under ``e2e/``, the real apps and the load tests each a suite.
"""

from pathlib import Path

import pytest

from queue_runtime.testing.server_fixtures import (
    pytest_runtest_setup,
    require_pg,
    require_redis,
    wait_until_fixture,
)
from tests import suites

SUITE_OF_FILES = {
    "e2e/test_realapp_*": "realapps",
    "e2e/*loadtest*": "loadtest",
    "e2e/*": "e2e",
}

__all__ = ["pytest_runtest_setup", "require_pg", "require_redis", "wait_until_fixture"]


def pytest_configure(config: pytest.Config) -> None:
    suites.register(config, Path(__file__).parent, SUITE_OF_FILES)
