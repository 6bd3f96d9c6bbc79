"""Enqueue after commit: inside the app's transaction, the job is stored when it commits.

A queued enqueue made inside a Django ``transaction.atomic`` block waits for
``transaction.on_commit``; inside an SQLAlchemy session transaction that has
written something (the session registered with
:func:`queue_runtime.codecs.sqlalchemy_session`) it waits for the session's
``after_commit`` event. On rollback it is dropped. So a worker never runs
before the rows it reads exist, and never for a request that failed.

The caller gets a :class:`DeferredHandle` at once: ``status()`` is ``QUEUED``
while the commit is awaited, ``CANCELLED`` once the enqueue was dropped, and
the stored job's status after the commit (``id`` is 0 until then).
``cancel()`` before the commit means the job is never stored. ``enqueue_many``
without keys defers its whole batch the same way (one write at the commit).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from queue_runtime import _refs
from queue_runtime.errors import JobFailed, JobTimeout
from queue_runtime.handle import JobHandle
from queue_runtime.runtime import Runtime
from queue_runtime.store import Cancellation, JobRecord, JobStatus

Write = Callable[[], JobHandle]
WriteMany = Callable[[list[int]], list[JobHandle]]  # indexes of the calls to store -> handles
POLL = 0.05  # seconds between looks at a Django transaction (no rollback event to wait on)


class DeferredHandle(JobHandle):
    """A job whose store write waits for the caller's transaction to commit."""

    deferred = True

    def __init__(self, name: str, runtime: Runtime) -> None:
        super().__init__(0, runtime)
        self.name = name
        self._stored: JobHandle | None = None
        self._settled = threading.Event()
        self._waiting: Callable[[], bool] = lambda: not self._settled.is_set()

    def __repr__(self) -> str:
        return f"DeferredHandle(name={self.name!r}, id={self.id})"

    def stored(self, handle: JobHandle) -> None:
        self._stored, self.id, self.created = handle, handle.id, handle.created
        self._settled.set()

    def dropped(self) -> None:
        self._settled.set()

    def status(self) -> JobStatus:
        if self._stored is not None:
            return self._stored.status()
        if self._settled.is_set() or not self._waiting():
            return JobStatus.CANCELLED  # rolled back: never stored, never runs
        return JobStatus.QUEUED

    def record(self) -> JobRecord:
        if self._stored is not None:
            return self._stored.record()
        return JobRecord(0, self.name, "deferred", self.status(), {}, 0, 0)

    def cancel(self, by: str | None = None) -> Cancellation:
        """Before the commit: the job will not be stored (CANCELLED); after: as any handle."""
        if self._stored is not None:
            return self._stored.cancel(by)
        if self._settled.is_set():
            return Cancellation.FINISHED  # rolled back or cancelled already
        self.dropped()
        return Cancellation.CANCELLED

    def wait(
        self, timeout: float | None = None, sleep: Callable[[float], None] = time.sleep
    ) -> JobStatus:
        deadline = None if timeout is None else time.monotonic() + timeout
        while not self._settled.wait(POLL):
            if not self._waiting():  # Django rolled back: no event says so, the hook is gone
                self.dropped()
            elif deadline is not None and time.monotonic() >= deadline:
                raise JobTimeout(f"{self.name}: its transaction has not committed after {timeout}s")
        if self._stored is None:
            return JobStatus.CANCELLED
        left = None if deadline is None else max(0.0, deadline - time.monotonic())
        return self._stored.wait(left, sleep)

    def result(self, timeout: float | None = None) -> Any:
        if self.wait(timeout) is JobStatus.CANCELLED and self._stored is None:
            raise JobFailed(f"{self.name}: enqueued in a transaction that rolled back")
        assert self._stored is not None
        return self._stored.result(timeout)


def after_commit(write: Write, name: str, runtime: Runtime) -> DeferredHandle | None:
    """A handle whose ``write`` runs at the commit of the caller's transaction; None: none open."""
    deferred = after_commit_many(lambda keep: [write()] if keep else [], 1, name, runtime)
    return None if deferred is None else deferred[0]


def after_commit_many(
    write: WriteMany, count: int, name: str, runtime: Runtime
) -> list[DeferredHandle] | None:
    """``count`` handles whose jobs ``write(indexes not cancelled)`` stores at the commit of the
    caller's transaction, in one go; None: no transaction is open (the caller writes now)."""
    connection = _refs.django_atomic()
    session = _refs.sqlalchemy_writing() if connection is None else None
    if connection is None and session is None:
        return None  # the common case: checked before any handle is built
    handles = [DeferredHandle(name, runtime) for _ in range(count)]

    def store() -> None:
        keep = [i for i, handle in enumerate(handles) if not handle._settled.is_set()]
        for i, written in zip(keep, write(keep), strict=True):
            handles[i].stored(written)

    def drop() -> None:
        for handle in handles:
            handle.dropped()

    if connection is not None:
        waiting = _refs.django_on_commit(connection, store)
        for handle in handles:
            handle._waiting = waiting
    else:
        _refs.sqlalchemy_on_commit(session, store, drop)
    return handles
