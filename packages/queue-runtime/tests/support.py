"""``from tests.support import ...`` for the test suites of both distributions.

The helpers are public in :mod:`queue_runtime.testing` (service discovery, the
skip-or-fail rule, polling with a deadline, free ports); this module only
re-exports them under the name the tests have always used.
"""

from __future__ import annotations

from queue_runtime.testing.services import (
    DEFAULT_PG_ADMIN_URL,
    DEFAULT_REDIS_URL,
    free_port,
    pg_admin_url,
    pg_problem,
    redis_problem,
    redis_test_url,
    require,
    services_required,
    wait_until,
)

__all__ = [
    "DEFAULT_PG_ADMIN_URL",
    "DEFAULT_REDIS_URL",
    "free_port",
    "pg_admin_url",
    "pg_problem",
    "redis_problem",
    "redis_test_url",
    "require",
    "services_required",
    "wait_until",
]
