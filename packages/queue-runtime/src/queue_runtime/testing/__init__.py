"""Test helpers for queue_runtime and the apps that use it.

- In-memory stores (as procrastinate's InMemoryConnector, dramatiq's
  StubBroker): :class:`MemoryJobStore`, :class:`MemoryLeaseStore`,
  :class:`MemoryGateStore`, :class:`MemoryInspector`, on an injectable
  :class:`Clock` (:class:`ManualClock` pins time).
- The real servers: where they are and the skip-or-fail rule
  (:func:`require`, :func:`pg_problem`, :func:`redis_problem`), an isolated
  database / schema / Redis prefix (:func:`fresh_database`,
  :func:`isolated_settings`), a private redis-server (:class:`PrivateRedis`),
  worker subprocesses (:class:`WorkerSpawner`), and :func:`wait_until`.
- :func:`memory_runtime`: a Runtime on the in-memory stores.

Importing this package connects to nothing, and needs no pytest: only
:func:`require` imports it, when it has to skip or fail.
"""

from queue_runtime.testing.clock import Clock, ManualClock, SystemClock
from queue_runtime.testing.isolation import (
    delete_redis_prefix,
    fresh_database,
    isolated_settings,
    unique_name,
)
from queue_runtime.testing.memory_gate import MemoryGateStore, MemoryInspector
from queue_runtime.testing.memory_jobs import MemoryJobStore, NoTransactions
from queue_runtime.testing.memory_leases import MemoryLeaseStore
from queue_runtime.testing.private_redis import PrivateRedis, RedisServerMissing
from queue_runtime.testing.runtime import memory_runtime, memory_stores
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
    "ManualClock",
    "MemoryGateStore",
    "MemoryInspector",
    "MemoryJobStore",
    "MemoryLeaseStore",
    "NoTransactions",
    "PrivateRedis",
    "RedisServerMissing",
    "SystemClock",
    "WorkerSpawner",
    "delete_redis_prefix",
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
