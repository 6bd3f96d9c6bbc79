"""JobHandle: what ``enqueue`` returns; follows one job to its end.

Queued handles read the job store: ``status()`` is one query, ``wait()`` polls
with a growing interval (10 ms doubling up to 0.5 s: quick jobs answer fast,
slow ones do not hammer the database). Inline handles (inline mode) carry their
outcome: the job already ran.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable
from typing import Any

from queue_runtime.errors import JobFailed, JobNotFound, JobTimeout
from queue_runtime.runtime import Runtime, current
from queue_runtime.store import Cancellation, JobRecord, JobStatus

FINAL = frozenset({JobStatus.SUCCEEDED, JobStatus.DEAD, JobStatus.CANCELLED})
_inline_ids = itertools.count(-1, -1)  # inline jobs are never stored: negative ids never clash


class JobHandle:
    """A job by id: ``status()``, ``wait(timeout)``, ``result(timeout)``, ``cancel()``."""

    def __init__(self, job_id: int, runtime: Runtime | None = None, created: bool = True) -> None:
        self.id = job_id
        self.created = created  # False: an enqueue with a known idempotency key found this job
        self._runtime = runtime

    def __repr__(self) -> str:
        return f"JobHandle(id={self.id})"

    def record(self) -> JobRecord:
        runtime = self._runtime or current()
        found = runtime.store.get(self.id)  # the store raises StoreError / StoreUnavailable
        if found is None:
            raise JobNotFound(str(self.id))
        return found

    def status(self) -> JobStatus:
        return self.record().status

    def cancel(self, by: str | None = None) -> Cancellation:
        """Cancel the job; one statement, whatever its state.

        ``CANCELLED``: it was queued, scheduled or retrying and never runs;
        ``REQUESTED``: it is running, and its context now reports the request
        (the job stops if it checks, else it finishes and its result stands);
        ``FINISHED``: it had already finished. JobNotFound when there is no such job.
        """
        runtime = self._runtime or current()
        answer = runtime.store.cancel_job(self.id, by)
        if answer is Cancellation.UNKNOWN:
            raise JobNotFound(str(self.id))
        return answer

    def wait(
        self, timeout: float | None = None, sleep: Callable[[float], None] = time.sleep
    ) -> JobStatus:
        """Block until the job is finished (succeeded, dead or cancelled); JobTimeout otherwise."""
        return self._wait_record(timeout, sleep).status

    def _wait_record(self, timeout: float | None, sleep: Callable[[float], None]) -> JobRecord:
        deadline = None if timeout is None else time.monotonic() + timeout
        interval = 0.01
        while True:
            found = self.record()
            if found.status in FINAL:
                return found
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                raise JobTimeout(f"job {self.id} is still {found.status} after {timeout}s")
            sleep(interval if left is None else min(interval, left))
            interval = min(interval * 2, 0.5)

    def result(self, timeout: float | None = None) -> Any:
        """The job's return value (as JSON); JobFailed when it died or was cancelled."""
        return _outcome(self._wait_record(timeout, time.sleep))


def _outcome(found: JobRecord) -> Any:
    if found.status is JobStatus.SUCCEEDED:
        return found.result
    raise JobFailed(
        f"job {found.id} ({found.name}) is {found.status}: {found.error or ''}".rstrip(": ")
    )


class InlineHandle(JobHandle):
    """A job that already ran in-process (inline mode): its outcome, no database."""

    def __init__(self, name: str, result: Any = None, error: BaseException | None = None) -> None:
        super().__init__(next(_inline_ids), runtime=None)
        self.name = name
        self._result = result
        self.error = error

    def __repr__(self) -> str:
        return f"InlineHandle(name={self.name!r}, status={self.status()})"

    def status(self) -> JobStatus:
        return JobStatus.DEAD if self.error is not None else JobStatus.SUCCEEDED

    def cancel(self, by: str | None = None) -> Cancellation:
        return Cancellation.FINISHED  # it ran in-process already

    def record(self) -> JobRecord:
        return JobRecord(
            id=self.id,
            name=self.name,
            pool="inline",
            status=self.status(),
            args={},
            attempt=1,
            max_attempts=1,
            result=self._result,
            error=None if self.error is None else f"{type(self.error).__name__}: {self.error}",
        )

    def wait(
        self, timeout: float | None = None, sleep: Callable[[float], None] = time.sleep
    ) -> JobStatus:
        return self.status()

    def result(self, timeout: float | None = None) -> Any:
        if self.error is not None:
            raise JobFailed(
                f"{self.name}: {type(self.error).__name__}: {self.error}"
            ) from self.error
        return self._result
