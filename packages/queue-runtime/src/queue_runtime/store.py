"""Storage seams, at the domain level (after River's ``rivertype``).

Four protocols, each taking and returning small typed records:

- ``JobStore``: the jobs themselves (enqueue, claim, settle, DLQ, stats);
- ``GateStore``: certifications, rollouts, idempotency-key state (the gate
  and the execution guard) and shadow evidence (:mod:`queue_runtime.shadow`);
- ``Inspector``: what the tools read (``migrator plan --check``, the load
  test, ``queue-runtime jobs/show/workers``, the dashboard): history of ids,
  dead count, schema revisions, job listings and details, live workers;
- ``LeaseStore``: leases, the dataset epoch, tenant tokens (Redis).

``queue_runtime.pg`` implements the first three on PostgreSQL,
``queue_runtime.redis_leases`` the fourth, ``queue_runtime.testing`` all four
in memory. One contract suite (``tests/integration/test_store_contract.py``)
runs against every implementation.

Fencing: every claim increments ``attempt``; ``(job_id, attempt)`` is the
fencing token. ``complete`` / ``fail`` / ``retry`` only act on a row whose
state is still ``running`` with that same attempt, so a worker whose lease was
lost (and whose job was rescued and claimed again) cannot finish it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any, Protocol

from queue_runtime.config import RolloutMode
from queue_runtime.errors import KeyReused
from queue_runtime.shadow_model import ShadowDelta, ShadowEvidence


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


class JobStore(Protocol):
    def enqueue(self, job: NewJob, conn: Any = None) -> int: ...
    def enqueue_many(self, jobs: Sequence[NewJob]) -> list[int]: ...
    def claim(self, pool: str, limit: int, worker_id: str) -> list[ClaimedJob]: ...
    def complete_many(self, done: list[Completion]) -> int: ...
    def fail(self, failure: Failure) -> JobStatus: ...
    def defer(self, job_id: int, attempt: int, run_at: datetime, unknown: bool = False) -> bool:
        """Back to pending at ``run_at`` without consuming an attempt (fenced by ``(id, attempt)``);
        ``unknown``: the worker has not registered its name (the first such time is kept, and
        claims report how long ago it was as ``ClaimedJob.unknown_for``)."""
        ...

    def rescue(self, tokens: list[tuple[int, int]]) -> int: ...
    def running_tokens(self, older_than_seconds: float) -> list[tuple[int, int]]: ...
    def get(self, job_id: int) -> JobRecord | None: ...
    def dead_letters(self, limit: int = 50, name: str | None = None) -> list[JobRecord]: ...
    def replay(self, job_ids: list[int]) -> list[int]: ...
    def purge_dead(self, job_ids: list[int] | None = None) -> int: ...
    def stats(self) -> list[PoolStats]: ...
    # enqueue with the "was it new?" answer (idempotency keys), cancel, history retention:
    def enqueue_returning(self, job: NewJob, conn: Any = None) -> tuple[int, bool]:
        """``(job id, created)``: created is False when the idempotency key was known.

        A known key answers only the same call: the key is stored with
        :func:`args_digest` of the job's name and arguments, and a call with
        other arguments (or another job) raises :class:`~queue_runtime.errors.KeyReused`.
        """
        ...

    def enqueue_many_returning(self, jobs: Sequence[NewJob]) -> list[tuple[int, bool]]:
        """``enqueue_many`` with each job's ``(id, created)``; keys as ``enqueue_returning``:
        a key given twice in the batch, or known, for another call raises KeyReused and
        nothing of the batch is stored."""
        ...

    def enqueued_key(self, key: str) -> EnqueuedKey | None:
        """The job an enqueue took ``key`` for and the call it names; None: no enqueue did."""
        ...

    def cancel(self, job_id: int) -> bool: ...
    def purge_finished(self, older_than_seconds: float, batch: int = 10_000) -> int: ...
    def purge_keys(self, older_than_seconds: float, batch: int = 10_000) -> int:
        """Key retention: forget enqueue keys taken longer ago than this (batched), except the
        keys of jobs still queued or running; returns how many were forgotten."""
        ...

    # cancel and pause (``queue-runtime cancel|pause|resume``), what workers poll:
    def cancel_job(self, job_id: int, by: str | None = None) -> Cancellation:
        """Cancel a job that has not started (it never runs); for a running one, record a
        cancel request its worker hands to the job's context."""
        ...

    def cancel_attempt(self, job_id: int, attempt: int, reason: str) -> bool:
        """Finish a running attempt as cancelled (fenced by ``(id, attempt)``)."""
        ...

    def pause(self, pool: str, by: str | None = None) -> bool:
        """Workers stop claiming from ``pool``; False when it was paused already."""
        ...

    def resume(self, pool: str) -> bool:
        """Workers claim from ``pool`` again; False when it was not paused."""
        ...

    def control(self, job_ids: list[int]) -> Control:
        """The paused pools and which of ``job_ids`` have a cancel request (one round trip)."""
        ...

    # periodic jobs switched off (the dashboard's /periodic), what tickers skip:
    def switch_periodic(self, job: str, enabled: bool, by: str | None, reason: str) -> bool:
        """Record a periodic job switched on or off (with who and why); False when it
        already was (nothing recorded)."""
        ...

    def disabled_periodic(self) -> frozenset[str]:
        """The periodic jobs switched off: no ticker enqueues their ticks."""
        ...

    # the async twins (``aenqueue``, ``aget_result`` of the Django backend): natively async where
    # the store has an async driver (PostgreSQL: the running loop's pool), the same answers:
    async def aenqueue_returning(self, job: NewJob) -> tuple[int, bool]:
        """``enqueue_returning`` awaited (no caller's transaction: ``conn=`` is sync only)."""
        ...

    async def aget(self, job_id: int) -> JobRecord | None:
        """``get`` awaited."""
        ...

    def close(self) -> None:
        """Release connections; idempotent (the stores of one Runtime may share them)."""
        ...


class Renewal(StrEnum):
    """What a heartbeat found for one lease."""

    RENEWED = "renewed"  # still ours, ttl reset
    REASSERTED = "reasserted"  # key was gone (flush/restart): set again to us
    LOST = "lost"  # another worker holds the token: stop caring about this job


class LeaseStore(Protocol):
    """Leases of fencing tokens, the dataset epoch, per-tenant tokens.

    Failures to reach the store raise :class:`queue_runtime.errors.LeasesUnavailable`.
    """

    def acquire(self, tokens: list[str], worker_id: str, ttl: float) -> list[bool]: ...
    def heartbeat(self, tokens: list[str], worker_id: str, ttl: float) -> list[Renewal]:
        """Renew every lease of a worker, re-asserting missing ones."""
        ...

    def renew(self, tokens: list[str], worker_id: str, ttl: float) -> list[bool]: ...
    def release(self, tokens: list[str], worker_id: str) -> None: ...
    def alive(self, tokens: list[str]) -> list[bool]: ...
    def epoch(self) -> str:
        """The dataset's epoch: it changes when the leases may have vanished (flush, restart)."""
        ...

    def ping(self) -> bool: ...
    def tenant_acquire(
        self, tenant: str, job_id: int, cap: int, ttl: float, settle: float | None = None
    ) -> bool: ...
    def tenant_renew(self, held: list[tuple[str, int]], ttl: float) -> int: ...
    def tenant_release(self, tenant: str, job_id: int) -> None: ...
    def tenant_release_many(self, held: list[tuple[str, int]]) -> None: ...
    def tenant_running(self, tenant: str) -> int: ...
    def announce(self, worker: WorkerInfo, ttl: float) -> None:
        """Write the worker's presence record (one round trip), kept for ``ttl`` seconds."""
        ...

    def retire(self, worker_id: str) -> None:
        """Remove the worker's presence record (a clean shutdown)."""
        ...

    def workers(self) -> list[WorkerInfo]:
        """The workers whose presence record has not expired, by id."""
        ...

    def close(self) -> None: ...


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


def args_digest(job: str, args: Mapping[str, Any]) -> str:
    """sha256 (hex) of the job's name and its JSON arguments: which call an idempotency key names.

    Keys sorted, so the digest is the call's, not the order its keyword
    arguments were given in.
    """
    text = json.dumps([job, args], sort_keys=True, separators=(",", ":"), allow_nan=False)
    return hashlib.sha256(text.encode()).hexdigest()


def batch_digests(jobs: Sequence[NewJob]) -> list[str | None]:
    """Each job's call digest (None without a key); KeyReused for a key the batch gives
    to two different calls (a repeat of the same call is one job, as two enqueues are)."""
    digests: list[str | None] = []
    first: dict[str, str] = {}
    for job in jobs:
        key = job.idempotency_key
        if not key:
            digests.append(None)
            continue
        digest = args_digest(job.name, job.args)
        if first.setdefault(key, digest) != digest:
            raise KeyReused(f"{key!r} is given twice in the batch, for two different calls")
        digests.append(digest)
    return digests


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


class KeyStore(Protocol):
    """The execution guard's keys (``job_keys``): what :mod:`queue_runtime.gate.guard` uses.

    A ``GateStore`` is one; a Runtime without a database keeps them in process
    (:class:`queue_runtime.local_keys.LocalKeys`).
    """

    def begin_key(
        self, key: str, job: str, job_id: int | None, digest: str | None = None
    ) -> KeyState | None:
        """Take ``key`` for this attempt of the call ``digest`` names (:func:`args_digest`).

        None: the key is this attempt's now (new, or a previous attempt's that
        died: taken over), run the job. A ``KeyState``: the key is not taken:
        it completed (its stored result answers the attempt), or it names
        another call (``names_other_call(digest)``). A ``digest`` of None
        matches any call (a caller that has none).
        """
        ...

    def complete_key(
        self, key: str, job: str, result: Any, job_id: int | None, digest: str | None = None
    ) -> None:
        """Record ``key`` completed with ``result`` (JSON-ready); a completed key stays as it is,
        and so does a key that names another call."""
        ...

    def complete_key_in(
        self,
        conn: object,
        key: str,
        job: str,
        result: Any,
        job_id: int | None,
        digest: str | None = None,
    ) -> None:
        """As ``complete_key``, inside the caller's transaction on ``conn`` (its own connection)."""
        ...

    def key_state(self, key: str) -> KeyState | None: ...


class GateStore(KeyStore, Protocol):
    """Certifications, rollouts, idempotency keys: what the gate and the guard store."""

    def insert_certification(
        self,
        job: str,
        fingerprint: str,
        figures: dict[str, Any],
        who: str,
        report: dict[str, Any] | None = None,
    ) -> Certification: ...
    def revoke_certifications(self, job: str, fingerprint: str | None) -> int: ...
    def certifications(
        self, job: str | None, fingerprint: str | None, valid_only: bool
    ) -> list[Certification]:
        """Newest first."""
        ...

    def upsert_rollout(
        self, job: str, mode: RolloutMode, percent: int, who: str | None, reason: str | None = None
    ) -> Rollout:
        """Store the job's mode and audit the change (one transaction)."""
        ...

    def delete_rollout(self, job: str, who: str | None) -> Rollout | None:
        """Remove the job's stored mode (audited when there was one); the removed row."""
        ...

    def rollback_to_inline(self, job: str, who: str, reason: str) -> RolloutChange | None:
        """Set ``inline`` unless it is stored already, audited as an SLO rollback.

        None: the job was inline already (another worker won the race). Several
        callers at once make one change between them.
        """
        ...

    def rollout_changes(self, job: str | None, limit: int = 50) -> list[RolloutChange]:
        """The audit, newest first; of one job if ``job``."""
        ...

    def rollouts(self) -> list[Rollout]:
        """Every stored rollout, by job name."""
        ...

    def snapshot(self) -> GateSnapshot: ...
    def key_counts(self, job: str) -> KeyCounts: ...
    def purge_keys(self, older_than_seconds: float, batch: int = 10_000) -> int:
        """Key retention: forget keys not touched (taken, completed) for this long, in batches;
        returns how many were forgotten."""
        ...

    def add_shadow(self, deltas: Sequence[ShadowDelta]) -> None:
        """Add each delta's counts to its (job, fingerprint) record, keeping the newest examples.

        Additive: processes flushing the same record at once lose no count.
        """
        ...

    def shadow_evidence(self, job: str | None = None) -> list[ShadowEvidence]:
        """The shadow evidence records (of one job if ``job``), newest seen first."""
        ...

    def close(self) -> None: ...


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


class Inspector(Protocol):
    """Read-only questions the tools ask about the runtime's state."""

    def history(self, job_ids: Sequence[int]) -> list[HistoryEntry]:
        """The finished jobs among ``job_ids`` (any order)."""
        ...

    def finished_count(self, job_ids: Sequence[int]) -> int: ...
    def unfinished_ids(self, job_ids: Sequence[int]) -> set[int]:
        """The ids among ``job_ids`` still in the hot table (queued, running, retrying)."""
        ...

    def dead_count(self) -> int: ...
    def job_health(self, job: str, window_seconds: float) -> JobHealth:
        """``job``'s runs, failures and dead letters over the last ``window_seconds``, its lag now."""
        ...

    def revisions(self) -> list[str] | None:
        """The schema's migration revision(s); None when it was never migrated."""
        ...

    def missing(self, names: Sequence[str]) -> list[str]:
        """Which of these tables or indexes the schema lacks (in the order given)."""
        ...

    def list_jobs(self, query: JobQuery) -> JobPage:
        """Jobs matching ``query``, newest (highest id) first, from the hot table and the
        history; keyset-paginated on the id, never counted."""
        ...

    def job_detail(self, job_id: int) -> JobDetail | None:
        """One job wherever it lives; a replayed dead job answers as its replay (its id
        differs); None when unknown or purged."""
        ...

    def workers(self) -> list[WorkerInfo]:
        """The live workers (their presence records), by id."""
        ...

    def close(self) -> None: ...


@dataclass(frozen=True, slots=True)
class Stores:
    """The four seams one Runtime runs on (``Runtime(settings, stores=...)``).

    The default is PostgreSQL plus Redis built from the settings
    (:func:`queue_runtime.pg.stores`); ``queue_runtime.testing`` builds
    in-memory ones.
    """

    jobs: JobStore
    gate: GateStore
    inspector: Inspector
    leases: LeaseStore

    def close(self) -> None:
        """Close every store (each close is idempotent, so shared connections are fine)."""
        for part in (self.jobs, self.gate, self.inspector, self.leases):
            part.close()
