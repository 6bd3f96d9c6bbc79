"""Test helpers for queue_runtime and the apps that use it.

- In-memory stores (as procrastinate's InMemoryConnector, dramatiq's
  StubBroker): :class:`MemoryJobStore`, :class:`MemoryLeaseStore`,
  :class:`MemoryGateStore`, :class:`MemoryInspector`, :class:`MemoryDashboard`
  (what the web dashboard reads), on an injectable
  :class:`Clock` (:class:`ManualClock` pins time).
- The real servers: where they are and the skip-or-fail rule
  (:func:`require`, :func:`pg_problem`, :func:`redis_problem`), an isolated
  database / schema / Redis prefix (:func:`fresh_database`,
  :func:`isolated_settings`), a private redis-server (:class:`PrivateRedis`),
  worker subprocesses (:class:`WorkerSpawner`), and :func:`wait_until`.
- :func:`memory_runtime`: a Runtime on the in-memory stores.
- The load test's execution ledger and chaos probe (:class:`ExecutionLedger`,
  :class:`LedgerWriter`, :class:`ExecutionProbe`): one row per run of a job
  body, and the questions chaos asks to kill a worker at the worst moment or
  end its backends; on PostgreSQL (:class:`PgLedger`) or in memory
  (:class:`MemoryLedger`).
- The manual testing mode's helpers (:func:`enqueued_jobs`,
  :func:`assert_enqueued`, :func:`drain`), used with the pytest plugin
  :mod:`queue_runtime.testing.pytest_plugin` (loaded by pytest itself, through
  the ``pytest11`` entry point).

Importing this package connects to nothing, and needs no pytest: only
:func:`require` imports it, when it has to skip or fail. (PYTEST_DONT_REWRITE:
pytest rewrites the asserts of every module of a distribution that ships a
``pytest11`` plugin; this namespace stays exactly ``__all__``.)
"""

from queue_runtime.testing._clock import Clock, ManualClock, SystemClock
from queue_runtime.testing._dashboard import MemoryDashboard
from queue_runtime.testing._isolation import (
    delete_redis_prefix,
    fresh_database,
    isolated_settings,
    unique_name,
)
from queue_runtime.testing._ledger import (
    ExecutionLedger,
    ExecutionProbe,
    LedgerRow,
    LedgerWriter,
    MemoryLedger,
)
from queue_runtime.testing._manual import (
    Drained,
    EnqueuedJob,
    NotManual,
    assert_enqueued,
    drain,
    enqueued_jobs,
)
from queue_runtime.testing._memory_gate import MemoryGateStore, MemoryInspector
from queue_runtime.testing._memory_jobs import MemoryJobStore, NoTransactions
from queue_runtime.testing._memory_leases import MemoryLeaseStore
from queue_runtime.testing._pg_ledger import PgLedger
from queue_runtime.testing._private_redis import PrivateRedis, RedisServerMissing
from queue_runtime.testing._runtime import memory_runtime, memory_stores
from queue_runtime.testing.services import (
    free_port,
    pg_admin_url,
    pg_problem,
    redis_problem,
    redis_test_url,
    require,
    services_required,
    wait_until,
)
from queue_runtime.testing.spawner import (
    SETTINGS_ENV,
    WorkerSpawner,
    settings_from_env,
    spawned_workers,
)

__all__ = [
    "SETTINGS_ENV",
    "Clock",
    "Drained",
    "EnqueuedJob",
    "ExecutionLedger",
    "ExecutionProbe",
    "LedgerRow",
    "LedgerWriter",
    "ManualClock",
    "MemoryDashboard",
    "MemoryGateStore",
    "MemoryInspector",
    "MemoryJobStore",
    "MemoryLeaseStore",
    "MemoryLedger",
    "NoTransactions",
    "NotManual",
    "PgLedger",
    "PrivateRedis",
    "RedisServerMissing",
    "SystemClock",
    "WorkerSpawner",
    "assert_enqueued",
    "delete_redis_prefix",
    "drain",
    "enqueued_jobs",
    "free_port",
    "fresh_database",
    "isolated_settings",
    "memory_runtime",
    "memory_stores",
    "pg_admin_url",
    "pg_problem",
    "redis_problem",
    "redis_test_url",
    "require",
    "services_required",
    "settings_from_env",
    "spawned_workers",
    "unique_name",
    "wait_until",
]
