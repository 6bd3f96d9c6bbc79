"""What the running attempt sees of itself: its job (id, attempt, ...) and its cancel request.

``current_job()`` is the claimed job; ``current_context()`` adds the
cooperative cancel: ``cancel_requested`` turns true once an operator asked to
cancel the running job (``queue-runtime cancel ID``, ``handle.cancel()``) and
the worker's control poll saw it (every ``CONTROL_INTERVAL``, 0.5 s). Reading it
is a set lookup in memory, cheap enough for a tight loop. Both are context
variables: task-local for async jobs, thread-local for sync ones.
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import Protocol

from queue_runtime.errors import JobCancelled
from queue_runtime.store import ClaimedJob


class CancelSource(Protocol):
    def requested(self, job_id: int) -> bool: ...


_current: ContextVar[ClaimedJob | None] = ContextVar("queue_runtime_current_job", default=None)
_cancels: ContextVar[CancelSource | None] = ContextVar("queue_runtime_cancels", default=None)
_worker: ContextVar[str | None] = ContextVar("queue_runtime_worker_id", default=None)


class JobContext:
    """The running attempt's view of itself; outside a worker, no job and never cancelled."""

    __slots__ = ("_cancels", "job", "worker_id")

    def __init__(
        self,
        job: ClaimedJob | None,
        cancels: CancelSource | None = None,
        worker_id: str | None = None,
    ) -> None:
        self.job = job
        self._cancels = cancels
        self.worker_id = worker_id  # the worker running this attempt (None outside a worker)

    def __repr__(self) -> str:
        token = self.job.token if self.job else None
        return f"JobContext(job={token}, cancel_requested={self.cancel_requested})"

    @property
    def cancel_requested(self) -> bool:
        """True once a cancel of this running job was requested (seen within about 0.5 s)."""
        job, cancels = self.job, self._cancels
        return job is not None and cancels is not None and cancels.requested(job.id)

    def raise_if_cancelled(self) -> None:
        """Raise :class:`JobCancelled` when a cancel was requested: the attempt ends cancelled."""
        if self.cancel_requested:
            assert self.job is not None
            raise JobCancelled(f"job {self.job.id} stopped on its cancel request")


def current_job() -> ClaimedJob | None:
    """The claimed job (id, attempt, tenant, ...) being run here; None outside a worker."""
    return _current.get()


def current_context() -> JobContext:
    """The running attempt's context: ``.job``, ``.worker_id``, ``.cancel_requested``,
    ``.raise_if_cancelled()``."""
    return JobContext(_current.get(), _cancels.get(), _worker.get())


def set_current(
    job: ClaimedJob | None, cancels: CancelSource | None = None, worker_id: str | None = None
) -> None:
    _current.set(job)
    if cancels is not None:
        _cancels.set(cancels)
    if worker_id is not None:
        _worker.set(worker_id)
