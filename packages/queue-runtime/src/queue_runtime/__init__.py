"""queue_runtime: the PostgreSQL + Redis job queue migrated apps import.

from queue_runtime import job, configure

@job(pool="batch")
def make_thumbnail(image_id: int, size: int = 256) -> str: ...

configure(database_url="postgresql://...")   # or [tool.queue_runtime] / env
handle = make_thumbnail.enqueue(42, size=128)
handle.result(timeout=5)
"""

from queue_runtime._inline import InlineShape
from queue_runtime.config import Mode, PoolConfig, RetryPolicy, Settings
from queue_runtime.errors import (
    JobCancelled,
    JobFailed,
    JobTimeout,
    KeyReused,
    PayloadError,
    PayloadTooLarge,
    Permanent,
    PoolMismatchError,
    QueueError,
    StoreError,
    StoreUnavailable,
)
from queue_runtime.gate._model import CertificationRefused, ClassificationConflict, GateClosed
from queue_runtime.handle import JobHandle
from queue_runtime.jobs import JobFunction, job
from queue_runtime.migrations import downgrade, migrate
from queue_runtime.runtime import Runtime, configure, current
from queue_runtime.store import Cancellation, JobStatus


def get_job(job_id: int) -> JobHandle:
    """A handle on a stored job, by id (uses the configured Runtime)."""
    return JobHandle(job_id, current())


__all__ = [
    "Cancellation",
    "CertificationRefused",
    "ClassificationConflict",
    "GateClosed",
    "InlineShape",
    "JobCancelled",
    "JobFailed",
    "JobFunction",
    "JobHandle",
    "JobStatus",
    "JobTimeout",
    "KeyReused",
    "Mode",
    "PayloadError",
    "PayloadTooLarge",
    "Permanent",
    "PoolConfig",
    "PoolMismatchError",
    "QueueError",
    "RetryPolicy",
    "Runtime",
    "Settings",
    "StoreError",
    "StoreUnavailable",
    "configure",
    "current",
    "downgrade",
    "get_job",
    "job",
    "migrate",
]
