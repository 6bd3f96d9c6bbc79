"""Storage seams, at the domain level (after River).

``JobStore`` is what PostgreSQL does for the runtime; ``LeaseStore`` is what
Redis does. Each operation takes or returns small typed records. One contract
suite (``tests/integration/test_store_contract.py``) runs against every
implementation.

Fencing: every claim increments ``attempt``; ``(job_id, attempt)`` is the
fencing token. ``complete`` / ``fail`` / ``retry`` only act on a row whose
state is still ``running`` with that same attempt, so a worker whose lease was
lost (and whose job was rescued and claimed again) cannot finish it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any, Protocol


class JobStatus(StrEnum):
    QUEUED = "queued"
    RUNNING = "running"
    RETRYING = "retrying"
    SUCCEEDED = "succeeded"
    DEAD = "dead"
    CANCELLED = "cancelled"


@dataclass(frozen=True, slots=True)
class NewJob:
    name: str
    pool: str
    args: dict[str, Any]  # JSON-ready, validated against the job's signature
    priority: int = 0
    run_at: datetime | None = None
    idempotency_key: str | None = None
    tenant: str | None = None
    max_attempts: int = 5


@dataclass(frozen=True, slots=True)
class ClaimedJob:
    id: int
    name: str
    pool: str
    args: dict[str, Any]
    attempt: int  # fencing token, together with id
    max_attempts: int
    tenant: str | None
    idempotency_key: str | None
    enqueued_at: datetime

    @property
    def token(self) -> str:
        return f"{self.id}:{self.attempt}"


@dataclass(frozen=True, slots=True)
class Completion:
    id: int
    attempt: int
    result: Any = None  # JSON-ready


@dataclass(frozen=True, slots=True)
class Failure:
    id: int
    attempt: int
    error: str
    traceback: str = ""
    retry_at: datetime | None = None  # None: dead-letter now


@dataclass(frozen=True, slots=True)
class JobRecord:
    """What ``get_job`` and the DLQ show about one job, wherever it lives."""

    id: int
    name: str
    pool: str
    status: JobStatus
    args: dict[str, Any]
    attempt: int
    max_attempts: int
    result: Any = None
    error: str | None = None
    tenant: str | None = None
    idempotency_key: str | None = None
    enqueued_at: datetime | None = None
    finished_at: datetime | None = None
    history: list[dict[str, Any]] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class PoolStats:
    pool: str
    depth: int  # due and pending
    scheduled: int  # pending, not yet due
    running: int
    lag_seconds: float  # age of the oldest due pending job
    dead: int
    succeeded_last_minute: int


class JobStore(Protocol):
    def enqueue(self, job: NewJob, conn: Any = None) -> int: ...
    def enqueue_many(self, jobs: Sequence[NewJob]) -> list[int]: ...
    def claim(self, pool: str, limit: int, worker_id: str) -> list[ClaimedJob]: ...
    def complete_many(self, done: list[Completion]) -> int: ...
    def fail(self, failure: Failure) -> JobStatus: ...
    def defer(self, job_id: int, attempt: int, run_at: datetime) -> bool: ...
    def rescue(self, tokens: list[tuple[int, int]]) -> int: ...
    def running_tokens(self, older_than_seconds: float) -> list[tuple[int, int]]: ...
    def get(self, job_id: int) -> JobRecord | None: ...
    def dead_letters(self, limit: int = 50, name: str | None = None) -> list[JobRecord]: ...
    def replay(self, job_ids: list[int]) -> list[int]: ...
    def purge_dead(self, job_ids: list[int] | None = None) -> int: ...
    def stats(self) -> list[PoolStats]: ...
    # enqueue with the "was it new?" answer (idempotency keys), cancel, history retention:
    def enqueue_returning(self, job: NewJob, conn: Any = None) -> tuple[int, bool]: ...
    def cancel(self, job_id: int) -> bool: ...
    def purge_finished(self, older_than_seconds: float, batch: int = 10_000) -> int: ...


class LeaseStore(Protocol):
    def acquire(self, tokens: list[str], worker_id: str, ttl: float) -> list[bool]: ...
    def renew(self, tokens: list[str], worker_id: str, ttl: float) -> list[bool]: ...
    def release(self, tokens: list[str], worker_id: str) -> None: ...
    def alive(self, tokens: list[str]) -> list[bool]: ...
    def epoch(self) -> str: ...
    def tenant_acquire(self, tenant: str, job_id: int, cap: int, ttl: float) -> bool: ...
    def tenant_renew(self, held: list[tuple[str, int]], ttl: float) -> int: ...
    def tenant_release(self, tenant: str, job_id: int) -> None: ...
