"""The rows the in-memory job store keeps: a hot job (queued or running) and a finished one.

They mirror the PostgreSQL tables ``jobs`` and ``job_history``, so the memory
store answers exactly as the real one does (a succeeded job keeps no
arguments; a dead or cancelled one keeps them for replay).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from queue_runtime.store import KEPT_ATTEMPTS, ClaimedJob, JobRecord, JobStatus


def json_copy(value: Any) -> Any:
    """What a JSON column gives back: a deep copy, tuples as lists, and a TypeError for the rest."""
    return None if value is None else json.loads(json.dumps(value))


def attempt_entry(
    attempt: int,
    error: str,
    at: datetime,
    worker: str | None,
    started: datetime | None = None,
    traceback: str | None = None,
) -> dict[str, Any]:
    """One element of a job's attempt history (``errors`` in the tables)."""
    return {
        "attempt": attempt,
        "error": error,
        "at": at.isoformat(),
        "started": started.isoformat() if started else None,
        "worker": worker,
        "traceback": traceback,
    }


@dataclass(slots=True)
class HotJob:
    id: int
    name: str
    pool: str
    priority: int
    args: dict[str, Any]
    max_attempts: int
    run_at: datetime
    tenant: str | None
    idempotency_key: str | None
    enqueued_at: datetime
    attempt: int = 0
    running: bool = False
    claimed_at: datetime | None = None
    worker: str | None = None
    errors: list[dict[str, Any]] | None = None
    unknown_since: datetime | None = None  # a worker without its name handed it back

    def due(self, now: datetime) -> bool:
        return not self.running and self.run_at <= now

    def holds(self, attempt: int) -> bool:
        """The fencing check: still running under this attempt."""
        return self.running and self.attempt == attempt

    def release(self, run_at: datetime) -> None:
        """Back to pending at ``run_at``, no worker."""
        self.running, self.run_at, self.worker, self.claimed_at = False, run_at, None, None

    def add_error(
        self, error: str, at: datetime, traceback: str | None = None
    ) -> list[dict[str, Any]]:
        """Append this attempt's failure (the last KEPT_ATTEMPTS entries are kept)."""
        entry = attempt_entry(self.attempt, error, at, self.worker, self.claimed_at, traceback)
        self.errors = [*(self.errors or []), entry][-KEPT_ATTEMPTS:]
        return self.errors

    def status(self) -> JobStatus:
        if self.running:
            return JobStatus.RUNNING
        return JobStatus.RETRYING if self.errors and self.attempt > 0 else JobStatus.QUEUED

    def claimed(self, now: datetime | None = None) -> ClaimedJob:
        since = self.unknown_since
        return ClaimedJob(
            id=self.id,
            name=self.name,
            pool=self.pool,
            args=json_copy(self.args),
            attempt=self.attempt,
            max_attempts=self.max_attempts,
            tenant=self.tenant,
            idempotency_key=self.idempotency_key,
            enqueued_at=self.enqueued_at,
            due=max(self.enqueued_at, self.run_at).timestamp(),
            unknown_for=None if since is None or now is None else (now - since).total_seconds(),
        )

    def record(self) -> JobRecord:
        return JobRecord(
            id=self.id,
            name=self.name,
            pool=self.pool,
            status=self.status(),
            args=json_copy(self.args),
            attempt=self.attempt,
            max_attempts=self.max_attempts,
            tenant=self.tenant,
            idempotency_key=self.idempotency_key,
            enqueued_at=self.enqueued_at,
            history=json_copy(self.errors) or [],
            started_at=self.claimed_at,
            worker=self.worker,
        )

    def finish(self, status: JobStatus, at: datetime, **fields: Any) -> FinishedJob:
        """The history row this job becomes (``fields``: args, result, error, traceback)."""
        return FinishedJob(
            id=self.id,
            name=self.name,
            pool=self.pool,
            status=status,
            priority=self.priority,
            attempt=self.attempt,
            max_attempts=self.max_attempts,
            tenant=self.tenant,
            idempotency_key=self.idempotency_key,
            enqueued_at=self.enqueued_at,
            finished_at=at,
            errors=self.errors,
            started_at=self.claimed_at if self.running else None,
            **fields,
        )


@dataclass(slots=True)
class FinishedJob:
    id: int
    name: str
    pool: str
    status: JobStatus
    priority: int
    attempt: int
    max_attempts: int
    tenant: str | None
    idempotency_key: str | None
    enqueued_at: datetime
    finished_at: datetime
    errors: list[dict[str, Any]] | None
    args: dict[str, Any] | None = None
    result: Any = None
    error: str | None = None
    traceback: str | None = None
    started_at: datetime | None = None  # the claim of the attempt that finished it

    def record(self) -> JobRecord:
        return JobRecord(
            id=self.id,
            name=self.name,
            pool=self.pool,
            status=self.status,
            args=json_copy(self.args) or {},
            attempt=self.attempt,
            max_attempts=self.max_attempts,
            result=json_copy(self.result),
            error=self.error,
            tenant=self.tenant,
            idempotency_key=self.idempotency_key,
            enqueued_at=self.enqueued_at,
            finished_at=self.finished_at,
            history=json_copy(self.errors) or [],
            started_at=self.started_at,
        )
