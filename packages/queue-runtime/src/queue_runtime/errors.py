"""Errors raised by queue_runtime: one root, small subclasses.

The docstring of each class is its message; ``detail`` adds the specifics
(``PayloadError("size: expected int")``). Errors from psycopg / redis /
pydantic are translated at the edge with ``raise ... from exc``.
"""

from __future__ import annotations


class QueueError(Exception):
    """The job queue failed."""

    def __init__(self, detail: str = "") -> None:
        self.detail = detail
        message = (self.__doc__ or type(self).__name__).strip().rstrip(".")
        super().__init__(f"{message}: {detail}" if detail else message)


class NotConfigured(QueueError):
    """The queue needs a database URL (configure(database_url=...) or QUEUE_RUNTIME_DATABASE_URL)."""


class ConfigError(QueueError):
    """The queue configuration is invalid."""


class BadDatabaseUrl(ConfigError):
    """The database URL is malformed (expected postgresql://user@host:port/dbname)."""


class BadRedisUrl(ConfigError):
    """The Redis URL is malformed."""


class AppNotImportable(ConfigError):
    """The app module could not be imported."""


class AppImportFailed(AppNotImportable):
    """The app module raised an exception while it was imported."""


class PortInUse(ConfigError):
    """The port cannot be bound (another process listens on it, or it needs privileges)."""


class PayloadError(QueueError):
    """The call's arguments or enqueue options are refused (the job's signature, the queue's limits)."""


class PayloadTooLarge(PayloadError):
    """The job arguments are larger than max_payload_bytes once stored as JSON."""


class PoolMismatchError(QueueError):
    """The job is not configured for this pool."""


class UnknownJob(QueueError):
    """No job is registered under this name."""


class DuplicateJob(QueueError):
    """Another function is already registered under this job name."""


class JobNotFound(QueueError):
    """No job with this id exists (or it was purged)."""


class JobFailed(QueueError):
    """The job failed."""


class JobTimeout(QueueError):
    """The job did not finish in time."""


class Permanent(QueueError):
    """The job failed permanently and must not be retried."""


class KeyReused(Permanent):
    """The idempotency key was already used for another call (other arguments or another job); a key names one call, give each distinct call its own"""


class StoreError(QueueError):
    """The job store (PostgreSQL) failed."""


class StoreUnavailable(StoreError):
    """The job store (PostgreSQL) cannot be reached right now (connection lost, refused, pool timeout)."""


class DatabaseMissing(StoreUnavailable):
    """The database named in the URL does not exist on that server."""


class LeasesUnavailable(QueueError):
    """Redis (leases, tenant tokens) cannot be reached right now."""


class RedisDatabaseOutOfRange(BadRedisUrl, LeasesUnavailable):
    """The Redis server has no database of the number the URL names (16 by default: 0 to 15)."""

    # A configuration error (the CLI exits 2), and a LeasesUnavailable too: a running
    # worker that meets it pauses claiming as for any Redis failure instead of crashing.


class SchemaNotMigrated(StoreError):
    """The queue schema is missing or out of date: run `queue-runtime migrate` (queue_runtime.migrate)."""


class JobCancelled(QueueError):
    """The job was cancelled."""

    # Raised in a job by ``current_context().raise_if_cancelled()`` (or by the job itself):
    # the attempt ends cancelled, neither retried nor dead-lettered.


class Unencodable(PayloadError):
    """An argument cannot be stored: no codec covers its value"""

    def __init__(self, detail: str = "", type_name: str = "", reason: str = "") -> None:
        super().__init__(detail)
        self.type_name = type_name  # the value's type, ``module.Qualname``
        self.reason = reason  # why no codec took it (unsaved instance, unknown type, ...)
        self.param = ""  # the job parameter it was passed as (set by the payload codec)


class ReferenceGone(QueueError):
    """A model instance passed to the job by reference no longer exists"""

    # Raised in the worker while reading the arguments again: retried with the job's
    # backoff (the row may be committed a moment later), dead-lettered after the last attempt.
