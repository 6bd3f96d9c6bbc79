"""The ``DashboardStore`` protocol: what the web dashboard reads, and its one write.

Listings and one job are the Inspector's records (``JobPage`` of
``JobSummary``, ``JobDetail``), with the start of each job's arguments
(``JobSummary.args_text``); the charts, the per-name figures, the periodic
switches and the claims per worker are the dashboard's own records, here.
The one write is "retry now" (``retry_now``: waiting jobs due at once), which
no CLI command has; every other action of the dashboard is the JobStore's.

``queue_runtime.pg`` implements it on PostgreSQL (keyset pages, windows over
the history, BRIN reads of the last hour), ``queue_runtime.testing`` in
memory; the dashboard's tests run on both.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Protocol

from queue_runtime.store._records import JobDetail, JobPage, JobSummary

SLICES = 60  # ``by_name`` reads its window in this many equal slices


class ListState(StrEnum):
    """What the jobs page filters on: the runtime's statuses, and queued-for-later."""

    QUEUED = "queued"
    SCHEDULED = "scheduled"  # queued with a run_at in the future (not a retry)
    RUNNING = "running"
    RETRYING = "retrying"
    SUCCEEDED = "succeeded"
    DEAD = "dead"
    CANCELLED = "cancelled"


@dataclass(frozen=True, slots=True)
class Minute:
    """The jobs that finished in one minute (the overview's charts)."""

    at: datetime
    succeeded: int
    lag_seconds: float  # the longest enqueue-to-finish among them
    capped: bool = False  # more than ``cap`` jobs finished: the figures are of the first ``cap``


@dataclass(frozen=True, slots=True)
class NameStats:
    """One job name's finished jobs over a window (``DashboardStore.by_name``)."""

    name: str
    finished: int
    dead: int
    cancelled: int
    retried: int  # finished after more than one attempt
    run_p50: float | None  # seconds, the attempt that finished the job (None: no start times)
    run_p95: float | None
    total_p95: float  # enqueue to finish

    @property
    def failure_rate(self) -> float:
        """Dead among finished (0..1)."""
        return self.dead / self.finished if self.finished else 0.0


@dataclass(frozen=True, slots=True)
class NameStatsPage:
    rows: list[NameStats]
    capped: bool  # a slice held more jobs than were read: the figures are of a sample


@dataclass(frozen=True, slots=True)
class PeriodicSwitch:
    """One switch of a periodic job off or on (``JobStore.switch_periodic``'s audit)."""

    job: str
    enabled: bool
    changed_at: datetime
    changed_by: str | None
    reason: str | None


@dataclass(frozen=True, slots=True)
class WorkerClaims:
    """The running jobs one worker holds in one pool (the claims, as the job rows say)."""

    worker: str
    pool: str
    running: int
    oldest_claim: datetime
    newest_claim: datetime


class DashboardStore(Protocol):
    """The dashboard's reads (and "retry now"); raise ``StoreUnavailable`` / ``StoreError``."""

    def jobs(
        self,
        state: ListState | None,
        name: str | None,
        after: int | None,
        limit: int = 50,
        args: str | None = None,
    ) -> JobPage:
        """A page of jobs, newest id first, with ids below ``after`` (dead letters: newest
        finished first, after the job ``after``). ``args``: a case-insensitive substring of
        the arguments' JSON. A page may hold fewer than ``limit`` jobs and still have a
        ``next_after`` (a store that searches the history in windows of ids)."""
        ...

    def dead(self, job_ids: list[int]) -> list[JobSummary]:
        """Which of ``job_ids`` are dead letters (newest first)."""
        ...

    def job(self, job_id: int) -> JobDetail | None:
        """One job by its id, wherever it lives (a replayed dead job is not followed)."""
        ...

    def now_minute(self) -> datetime:
        """The store's clock's current minute (the charts' right edge)."""
        ...

    def minutes(self, starts: list[datetime], cap: int) -> list[Minute]:
        """The finished jobs of each minute starting at ``starts`` (reading at most ``cap``
        each); minutes without jobs may be left out."""
        ...

    def by_name(self, since: datetime, until: datetime, cap: int = 12_000) -> NameStatsPage:
        """Per job name, the jobs finished in [since, until), most first: reading at most
        ``cap`` of them, ``SLICES`` equal slices of ``cap / SLICES`` each."""
        ...

    def by_keys(self, keys: list[str]) -> dict[str, JobSummary]:
        """The jobs these idempotency keys name (periodic ticks), by key."""
        ...

    def periodic_switches(self, limit: int = 20) -> list[PeriodicSwitch]:
        """The newest switches of periodic jobs (who switched which off or on, and why)."""
        ...

    def retry_now(self, job_ids: list[int], by: str) -> list[int]:
        """Make these waiting jobs due now (audited with ``by``); the ids that were waiting."""
        ...

    def claims(self) -> list[WorkerClaims]:
        """The running jobs per worker and pool, by worker and pool."""
        ...

    def close(self) -> None: ...
