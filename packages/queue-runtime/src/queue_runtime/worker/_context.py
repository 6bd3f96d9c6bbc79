"""The attempt the current thread or task is running, for jobs that want their id."""

from __future__ import annotations

from contextvars import ContextVar

from queue_runtime.store import ClaimedJob

_current: ContextVar[ClaimedJob | None] = ContextVar("queue_runtime_current_job", default=None)


def current_job() -> ClaimedJob | None:
    """The claimed job (id, attempt, tenant, ...) being run here; None outside a worker."""
    return _current.get()


def set_current(job: ClaimedJob | None) -> None:
    _current.set(job)
