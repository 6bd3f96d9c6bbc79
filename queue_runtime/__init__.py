"""queue_runtime: the PostgreSQL + Redis job queue migrated apps import."""

from queue_runtime.config import Mode, PoolConfig, RetryPolicy, Settings
from queue_runtime.errors import Permanent, QueueError
from queue_runtime.migrations import downgrade, migrate
from queue_runtime.store import JobStatus

__all__ = [
    "JobStatus",
    "Mode",
    "Permanent",
    "PoolConfig",
    "QueueError",
    "RetryPolicy",
    "Settings",
    "downgrade",
    "migrate",
]
