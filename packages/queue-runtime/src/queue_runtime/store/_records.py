"""The store layer's records: small frozen values the protocols take and return.

Jobs (``NewJob``, ``ClaimedJob``, ``JobRecord``, ...), leases (``Renewal``,
``WorkerInfo``), the gate (``Rollout``, ``Certification``, keys) and what the
tools read (``JobSummary``, ``JobDetail``, ``JobHealth``, ...), as River's
``rivertype`` holds its shared types.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from queue_runtime.config import RolloutMode


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
    due: float | None = None  # epoch s it became claimable (enqueued or later run_at): pickup
    # Seconds since a worker first handed it back for not knowing its name (None: never).
    unknown_for: float | None = None

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
    # The claim of the running attempt, or of the attempt that finished it; None: never claimed.
    started_at: datetime | None = None
    worker: str | None = None  # the worker running it now (None once it left the hot table)


@dataclass(frozen=True, slots=True)
class PoolStats:
    pool: str
    depth: int  # due and pending
    scheduled: int  # pending, not yet due
    running: int
    lag_seconds: float  # age of the oldest due pending job
    dead: int
    succeeded_last_minute: int
    paused: bool = False  # ``queue-runtime pause POOL``: workers claim nothing from it


class Cancellation(StrEnum):
    """What ``JobStore.cancel_job`` did (``handle.cancel()``, ``queue-runtime cancel``)."""

    CANCELLED = "cancelled"  # it was queued, scheduled or retrying: it never runs now
    REQUESTED = "requested"  # it is running: its context reports the request (cooperative)
    FINISHED = "finished"  # it had already finished (succeeded, dead or cancelled)
    UNKNOWN = "unknown"  # no such job (or it was purged)


@dataclass(frozen=True, slots=True)
class Control:
    """What a worker polls (``JobStore.control``): paused pools, cancel requests of its jobs."""

    paused: frozenset[str]
    cancel_requested: frozenset[int]


@dataclass(frozen=True, slots=True)
class EnqueuedKey:
    """An enqueue's idempotency key (``idempotency_keys``): its job and the call it names."""

    key: str
    job_id: int
    args_digest: str | None  # None: taken before digests were (it matches any call)

    def names_other_call(self, digest: str | None) -> bool:
        return None not in (self.args_digest, digest) and self.args_digest != digest


class Renewal(StrEnum):
    """What a heartbeat found for one lease."""

    RENEWED = "renewed"  # still ours, ttl reset
    REASSERTED = "reasserted"  # key was gone (flush/restart): set again to us
    LOST = "lost"  # another worker holds the token: stop caring about this job


# -- the gate's records -------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Rollout:
    """A job's rollout mode; ``percent`` is the async share (100 for async, 0 for inline)."""

    job: str
    mode: RolloutMode
    percent: int = 100
    updated_at: datetime | None = None  # None: no row stored, the configured default applies
    updated_by: str | None = None

    @property
    def label(self) -> str:
        """``inline``, ``25%`` or ``async``: what ``migrator rollout set`` takes."""
        return f"{self.percent}%" if self.mode is RolloutMode.PERCENT else self.mode.value


@dataclass(frozen=True, slots=True)
class Certification:
    """A passed load test of ``job`` at one fingerprint of its code."""

    job: str
    fingerprint: str
    certified_at: datetime
    certified_by: str
    figures: dict[str, Any] = field(default_factory=dict)
    revoked_at: datetime | None = None
    report: dict[str, Any] | None = None  # the load-test report it was made from (JSON)

    @property
    def valid(self) -> bool:
        """Not revoked (whether it matches the job's current code is the caller's question)."""
        return self.revoked_at is None


@dataclass(frozen=True, slots=True)
class GateSnapshot:
    """Every stored rollout and, per job, the fingerprints with a valid certification.

    ``certified`` maps job name to fingerprints (not a set of pairs): the
    enqueue path then looks up without building a tuple per call.
    """

    rollouts: dict[str, Rollout]
    certified: dict[str, frozenset[str]]


class ChangeCause(StrEnum):
    """Why a job's rollout changed (the audit's ``cause``)."""

    SET = "set"  # an operator or tool stored a mode
    UNSET = "unset"  # the stored mode was removed: the configured default applies again
    SLO = "slo"  # the worker's SLO check rolled the job back to inline


@dataclass(frozen=True, slots=True)
class RolloutChange:
    """One audited change of a job's rollout: who, when, from what to what, and why.

    ``before`` / ``after`` are None where no rollout was stored (the default applied).
    """

    job: str
    before: Rollout | None
    after: Rollout | None
    changed_at: datetime
    changed_by: str | None
    cause: ChangeCause
    reason: str | None = None

    @property
    def before_label(self) -> str:
        return self.before.label if self.before else "default"

    @property
    def after_label(self) -> str:
        return self.after.label if self.after else "default"


class KeyStatus(StrEnum):
    IN_PROGRESS = "in_progress"
    COMPLETED = "completed"


@dataclass(frozen=True, slots=True)
class KeyState:
    """The stored state of one idempotency key (the execution guard's ``job_keys`` row)."""

    key: str
    job: str
    state: KeyStatus
    result: Any  # JSON-ready; None until completed
    job_id: int | None
    updated_at: datetime | None = None
    args_digest: str | None = None  # None: stored before digests were (it matches any call)

    def names_other_call(self, digest: str | None) -> bool:
        """True when the key was taken by another call (other arguments or another job)."""
        return None not in (self.args_digest, digest) and self.args_digest != digest


@dataclass(frozen=True, slots=True)
class KeyCounts:
    """How many keys of one job the guard holds, and how many of them completed."""

    completed: int
    total: int


# -- what the tools read --------------------------------------------------------


@dataclass(frozen=True, slots=True)
class HistoryEntry:
    """One finished job as the history keeps it."""

    id: int
    status: JobStatus
    attempt: int
    enqueued_at: datetime
    finished_at: datetime
    errors: list[dict[str, Any]] | None = None


@dataclass(frozen=True, slots=True)
class JobHealth:
    """One job over a recent window: what the SLO check judges."""

    job: str
    succeeded: int  # runs that finished in the window
    failed_attempts: int  # attempts that failed in the window (retried or dead-lettered)
    dead: int  # jobs dead-lettered in the window
    lag_seconds: float  # age of the job's oldest due pending run, now

    @property
    def attempts(self) -> int:
        return self.succeeded + self.failed_attempts

    @property
    def failure_rate(self) -> float:
        return self.failed_attempts / self.attempts if self.attempts else 0.0


# -- inspection: jobs, one job, live workers (``queue-runtime jobs/show/workers``) -----


@dataclass(frozen=True, slots=True)
class JobQuery:
    """Which jobs ``Inspector.list_jobs`` lists: newest first, keyset-paginated.

    ``after``: the ``next_after`` of the previous :class:`JobPage` (ids below it);
    None starts at the newest job. Every filter is optional.
    """

    state: JobStatus | None = None
    job: str | None = None
    pool: str | None = None
    after: int | None = None
    limit: int = 50


# A listing's argument preview: the start of the arguments' JSON (never the whole payload).
PREVIEW = 120


@dataclass(frozen=True, slots=True)
class JobSummary:
    """One row of a job listing."""

    id: int
    name: str
    pool: str
    status: JobStatus
    attempt: int
    max_attempts: int
    enqueued_at: datetime
    run_at: datetime | None = None  # queued, retrying: when it is due; None once finished
    started_at: datetime | None = None  # claim of the running attempt, or of the finishing one
    finished_at: datetime | None = None
    error: str | None = None  # the last error message, if any
    # The start of the arguments' JSON, PREVIEW + 1 characters (the dashboard's listings;
    # None where a listing does not read it: ``Inspector.list_jobs``).
    args_text: str | None = None

    @property
    def args_preview(self) -> str:
        text = self.args_text or ""
        return text if len(text) <= PREVIEW else text[: PREVIEW - 1] + "…"

    @property
    def scheduled(self) -> bool:
        """Queued to run later (a retry's backoff shows as ``retrying``)."""
        return (
            self.status is JobStatus.QUEUED
            and self.run_at is not None
            and self.run_at > datetime.now(UTC)
        )


@dataclass(frozen=True, slots=True)
class JobPage:
    """A page of jobs; ``next_after`` is the ``JobQuery.after`` of the next page (None: last)."""

    jobs: tuple[JobSummary, ...]
    next_after: int | None


# A job's attempt history (``errors``) keeps its last KEPT_ATTEMPTS failed attempts,
# each traceback clipped to TRACEBACK_CHARS (its head and its tail, where the exception is).
KEPT_ATTEMPTS = 10
TRACEBACK_CHARS = 8_000


def clip_traceback(text: str | None) -> str | None:
    """``text`` within TRACEBACK_CHARS: its first quarter and its end, the cut marked."""
    if not text:
        return None
    if len(text) <= TRACEBACK_CHARS:
        return text
    head = TRACEBACK_CHARS // 4
    tail = TRACEBACK_CHARS - head
    cut = len(text) - head - tail
    return f"{text[:head]}\n... [{cut} characters cut] ...\n{text[-tail:]}"


@dataclass(frozen=True, slots=True)
class AttemptError:
    """One failed attempt: its message, when it started and failed, on which worker, and
    its traceback (clipped to TRACEBACK_CHARS; None for a lost lease, and for attempts
    recorded before migration 0006, except a dead job's last one)."""

    attempt: int
    error: str
    at: datetime | None
    worker: str | None = None
    traceback: str | None = None
    started_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class JobDetail:
    """Everything stored about one job (``queue-runtime show ID``).

    ``started_at``: when the current attempt started (running), or the one that
    finished the job (None for a job cancelled before it ran, or finished
    before migration 0006).
    """

    id: int
    name: str
    pool: str
    status: JobStatus
    args: dict[str, Any]
    attempt: int
    max_attempts: int
    priority: int
    enqueued_at: datetime
    run_at: datetime | None = None
    started_at: datetime | None = None
    finished_at: datetime | None = None
    worker: str | None = None  # the worker running it now
    tenant: str | None = None
    idempotency_key: str | None = None
    result: Any = None
    error: str | None = None  # the final error of a dead job
    traceback: str | None = None  # its stored traceback
    errors: tuple[AttemptError, ...] = ()


@dataclass(frozen=True, slots=True)
class WorkerInfo:
    """A live worker, from the presence record its heartbeat keeps (expires with the lease ttl)."""

    id: str
    host: str
    pid: int
    pools: tuple[str, ...]
    running: int  # attempts running at its last heartbeat
    started_at: datetime
    seen_at: datetime  # its last heartbeat


def attempt_errors(
    entries: Sequence[Mapping[str, Any]] | None, traceback: str | None, attempt: int
) -> tuple[AttemptError, ...]:
    """A job's stored attempt history (``errors``) as records; a dead job's ``traceback``
    column fills in the final ``attempt``'s entry when it has none (rows before 0006)."""
    found = [_attempt_error(entry) for entry in entries or ()]
    if traceback and found and found[-1].attempt == attempt and not found[-1].traceback:
        last = found[-1]
        found[-1] = AttemptError(
            last.attempt, last.error, last.at, last.worker, traceback, last.started_at
        )
    return tuple(found)


def _attempt_error(entry: Mapping[str, Any]) -> AttemptError:
    worker, traceback = entry.get("worker"), entry.get("traceback")
    return AttemptError(
        int(entry.get("attempt") or 0),
        str(entry.get("error") or ""),
        _instant(entry.get("at")),
        str(worker) if worker else None,
        str(traceback) if traceback else None,
        _instant(entry.get("started")),
    )


def _instant(value: Any) -> datetime | None:
    return datetime.fromisoformat(value) if isinstance(value, str) else None
