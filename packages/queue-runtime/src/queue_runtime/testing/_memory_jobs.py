"""MemoryJobStore: the JobStore seam in memory (as procrastinate's InMemoryConnector).

It answers as :class:`queue_runtime.pg.PgJobStore` does, operation for
operation (the contract suite runs both), with one lock around every
operation and the time from an injectable :class:`Clock`. What only a
database can do is refused: there is no caller's transaction to join
(``conn=``).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

from queue_runtime.errors import KeyReused, StoreError
from queue_runtime.store import (
    Cancellation,
    ClaimedJob,
    Completion,
    Control,
    EnqueuedKey,
    Failure,
    HistoryEntry,
    JobHealth,
    JobRecord,
    JobStatus,
    NewJob,
    PeriodicSwitch,
    PoolStats,
    args_digest,
    batch_digests,
    clip_traceback,
)
from queue_runtime.testing._clock import Clock, SystemClock
from queue_runtime.testing._health import job_health
from queue_runtime.testing._rows import FinishedJob, HotJob, json_copy

LEASE_LOST = "lease lost"
# How far ``get`` follows a replayed dead job to its replay (as the PostgreSQL store).
REPLAY_HOPS = 5


class NoTransactions(StoreError):
    """The in-memory store joins no caller's transaction: enqueue without conn=."""


@dataclass(slots=True)
class _Key:
    """An enqueue key: its job, the call it names (its digest), when it was taken."""

    job_id: int
    digest: str | None
    created_at: datetime

    def names_other_call(self, digest: str | None) -> bool:
        """Another call than ``digest``'s (a key without a digest, from before 0003, is any)."""
        return None not in (self.digest, digest) and self.digest != digest


class MemoryJobStore:
    def __init__(self, pools: Sequence[str] = (), clock: Clock | None = None) -> None:
        self.clock = clock or SystemClock()
        self._pools = list(pools)
        self._lock = threading.Lock()
        self._jobs: dict[int, HotJob] = {}
        self._history: dict[int, FinishedJob] = {}
        self._keys: dict[str, _Key] = {}
        self._replayed_as: dict[int, int] = {}
        self._cancel_requests: set[int] = set()
        self._paused: set[str] = set()
        self._periodic_off: set[str] = set()  # periodic jobs switched off
        self._switches: list[PeriodicSwitch] = []  # their audit, oldest first
        self._last_id = 0

    def close(self) -> None:
        """Nothing to release; the jobs stay (a closed Runtime's store can still be read)."""

    # -- enqueue ------------------------------------------------------------

    def enqueue(self, job: NewJob, conn: Any = None) -> int:
        return self.enqueue_returning(job, conn)[0]

    def enqueue_returning(self, job: NewJob, conn: Any = None) -> tuple[int, bool]:
        """``(job id, created)``: created is False when the idempotency key was known.

        A known key taken for another call raises KeyReused.
        """
        if conn is not None:
            raise NoTransactions()
        digest = None if job.idempotency_key is None else args_digest(job.name, job.args)
        with self._lock:
            known = self._keys.get(job.idempotency_key) if job.idempotency_key else None
            if known is not None and None not in (known.digest, digest) and known.digest != digest:
                raise KeyReused(f"{job.idempotency_key!r} names job {known.job_id}, another call")
            return self._insert(job, self.clock.now(), digest)

    async def aenqueue_returning(self, job: NewJob) -> tuple[int, bool]:
        """The sync answer: a dict under a lock never waits on anything."""
        return self.enqueue_returning(job)

    def enqueue_many(self, jobs: Sequence[NewJob]) -> list[int]:
        return [job_id for job_id, _ in self.enqueue_many_returning(jobs)]

    def enqueue_many_returning(self, jobs: Sequence[NewJob]) -> list[tuple[int, bool]]:
        """All or nothing: a key the batch reuses, or that names another call, raises KeyReused
        before any job is inserted; a known key of the same call answers with its job."""
        digests = batch_digests(jobs)
        with self._lock:
            for job, digest in zip(jobs, digests, strict=True):
                known = self._keys.get(job.idempotency_key) if job.idempotency_key else None
                if known is not None and known.names_other_call(digest):
                    raise KeyReused(
                        f"{job.idempotency_key!r} names job {known.job_id}, another call"
                    )
            now = self.clock.now()
            return [self._insert(j, now, d) for j, d in zip(jobs, digests, strict=True)]

    def enqueued_key(self, key: str) -> EnqueuedKey | None:
        with self._lock:
            found = self._keys.get(key)
            return None if found is None else EnqueuedKey(key, found.job_id, found.digest)

    def _insert(self, job: NewJob, now: datetime, digest: str | None = None) -> tuple[int, bool]:
        """A known key answers with its job (the caller checked the digest)."""
        known = self._keys.get(job.idempotency_key) if job.idempotency_key else None
        if known is not None:
            return known.job_id, False
        row = HotJob(
            id=self._next_id(),
            name=job.name,
            pool=job.pool,
            priority=job.priority,
            args=json_copy(job.args),
            max_attempts=job.max_attempts,
            run_at=now if job.run_at is None else max(job.run_at, now),  # past: now, as PostgreSQL
            tenant=job.tenant,
            idempotency_key=job.idempotency_key,
            enqueued_at=now,
        )
        self._jobs[row.id] = row
        if job.idempotency_key:
            self._keys[job.idempotency_key] = _Key(row.id, digest, now)
        return row.id, True

    def _next_id(self) -> int:
        self._last_id += 1
        return self._last_id

    # -- claim and finish ---------------------------------------------------

    def claim(self, pool: str, limit: int, worker_id: str) -> list[ClaimedJob]:
        """The due jobs of ``pool``, best priority first, then oldest ``run_at``."""
        with self._lock:
            now = self.clock.now()
            due = [j for j in self._jobs.values() if j.pool == pool and j.due(now)]
            due.sort(key=lambda j: (-j.priority, j.run_at, j.id))
            for row in due[:limit]:
                row.running, row.attempt = True, row.attempt + 1
                row.claimed_at, row.worker = now, worker_id
            claimed = [row.claimed(now) for row in due[:limit]]
        # Give up the GIL, as a round trip to a server does: concurrent claimers then
        # interleave (one thread would otherwise drain the queue within its time slice).
        time.sleep(0)
        return claimed

    def complete_many(self, done: list[Completion]) -> int:
        with self._lock:
            now = self.clock.now()
            held = [(self._held(d.id, d.attempt), d) for d in done]
            for row, d in held:
                if row is not None:
                    self._finish(row, JobStatus.SUCCEEDED, now, result=json_copy(d.result))
            return sum(row is not None for row, _ in held)

    def fail(self, failure: Failure) -> JobStatus:
        """RETRYING or DEAD when recorded; with a stale token, the job's current status."""
        with self._lock:
            now = self.clock.now()
            row = self._held(failure.id, failure.attempt)
            if row is None:
                current = self._get(failure.id, REPLAY_HOPS)
                return current.status if current else JobStatus.CANCELLED
            traceback = clip_traceback(failure.traceback)
            row.add_error(failure.error, now, traceback)
            if failure.retry_at is not None:
                row.release(failure.retry_at)
                return JobStatus.RETRYING
            fields = {"error": failure.error, "traceback": traceback}
            self._finish(row, JobStatus.DEAD, now, args=row.args, **fields)
            return JobStatus.DEAD

    def defer(self, job_id: int, attempt: int, run_at: datetime, unknown: bool = False) -> bool:
        """Back to the queue WITHOUT consuming an attempt: max_attempts grows by one."""
        with self._lock:
            row = self._held(job_id, attempt)
            if row is None:
                return False
            if unknown and row.unknown_since is None:
                row.unknown_since = self.clock.now()
            row.release(run_at)
            row.max_attempts += 1
            return True

    def rescue(self, tokens: list[tuple[int, int]]) -> int:
        """Lost leases: back to the queue now, or dead-lettered on their last attempt."""
        with self._lock:
            now = self.clock.now()
            rows = [row for row in (self._held(i, a) for i, a in tokens) if row is not None]
            for row in rows:
                row.add_error(LEASE_LOST, now)
                if row.attempt < row.max_attempts:
                    row.release(now)
                else:
                    error = "lease lost on the last attempt"
                    self._finish(row, JobStatus.DEAD, now, args=row.args, error=error)
            return len(rows)

    def running_tokens(self, older_than_seconds: float) -> list[tuple[int, int]]:
        with self._lock:
            # <=, where PostgreSQL has <: a claim at this very microsecond still counts
            # (PostgreSQL's now() is always later than a claim's own transaction).
            cutoff = self.clock.now() - timedelta(seconds=older_than_seconds)
            running = [j for j in self._jobs.values() if j.running and j.claimed_at]
            old = [j for j in running if j.claimed_at and j.claimed_at <= cutoff]
            old.sort(key=lambda j: (j.claimed_at, j.id))
            return [(j.id, j.attempt) for j in old]

    def cancel(self, job_id: int) -> bool:
        """Cancel a job that is not running yet; False when it already started or finished."""
        with self._lock:
            row = self._jobs.get(job_id)
            if row is None or row.running:
                return False
            self._finish(row, JobStatus.CANCELLED, self.clock.now(), args=row.args)
            return True

    # -- cancel, pause -------------------------------------------------------

    def cancel_job(self, job_id: int, by: str | None = None) -> Cancellation:
        """Queued, scheduled, retrying: cancelled now; running: a cancel request is recorded."""
        with self._lock:
            self._cancel_requests &= set(self._jobs)  # requests of jobs that left: dropped
            for _ in range(REPLAY_HOPS + 1):
                answer = self._cancel_one(job_id, by)
                if answer is not Cancellation.UNKNOWN or job_id not in self._replayed_as:
                    return answer
                job_id = self._replayed_as[job_id]  # a replayed dead job: its replay
            return Cancellation.UNKNOWN

    def _cancel_one(self, job_id: int, by: str | None) -> Cancellation:
        row = self._jobs.get(job_id)
        if row is not None and row.running:
            self._cancel_requests.add(job_id)
            return Cancellation.REQUESTED
        if row is not None:
            error = f"cancelled by {by}" if by is not None else "cancelled"
            self._finish(row, JobStatus.CANCELLED, self.clock.now(), args=row.args, error=error)
            return Cancellation.CANCELLED
        return Cancellation.FINISHED if job_id in self._history else Cancellation.UNKNOWN

    def cancel_attempt(self, job_id: int, attempt: int, reason: str) -> bool:
        with self._lock:
            row = self._held(job_id, attempt)
            if row is None:
                return False
            self._cancel_requests.discard(job_id)
            self._finish(row, JobStatus.CANCELLED, self.clock.now(), args=row.args, error=reason)
            return True

    def pause(self, pool: str, by: str | None = None) -> bool:
        with self._lock:
            known = pool in self._paused
            self._paused.add(pool)
            return not known

    def resume(self, pool: str) -> bool:
        with self._lock:
            known = pool in self._paused
            self._paused.discard(pool)
            return known

    def control(self, job_ids: list[int]) -> Control:
        with self._lock:
            requested = self._cancel_requests.intersection(job_ids)
            return Control(frozenset(self._paused), frozenset(requested))

    def switch_periodic(self, job: str, enabled: bool, by: str | None, reason: str) -> bool:
        with self._lock:
            was = job not in self._periodic_off
            if was == enabled:
                return False
            if enabled:
                self._periodic_off.discard(job)
            else:
                self._periodic_off.add(job)
            self._switches.append(PeriodicSwitch(job, enabled, self.clock.now(), by, reason))
            return True

    def periodic_switches(self, limit: int = 20) -> list[PeriodicSwitch]:
        """The newest switches of periodic jobs first (the dashboard's audit)."""
        with self._lock:
            return self._switches[::-1][:limit]

    def retry_now(self, job_ids: list[int]) -> list[int]:
        """Waiting jobs (a retry's backoff, scheduled) due now; the ids that were waiting."""
        with self._lock:
            now = self.clock.now()
            rows = [self._jobs[i] for i in sorted(set(job_ids)) if i in self._jobs]
            waiting = [row for row in rows if not row.running and row.run_at > now]
            for row in waiting:
                row.run_at = now
            return [row.id for row in waiting]

    def disabled_periodic(self) -> frozenset[str]:
        with self._lock:
            return frozenset(self._periodic_off)

    def _held(self, job_id: int, attempt: int) -> HotJob | None:
        row = self._jobs.get(job_id)
        return row if row is not None and row.holds(attempt) else None

    def _finish(self, row: HotJob, status: JobStatus, now: datetime, **fields: Any) -> None:
        del self._jobs[row.id]
        self._history[row.id] = row.finish(status, now, **fields)

    # -- inspection, DLQ ----------------------------------------------------

    def get(self, job_id: int) -> JobRecord | None:
        """The job, wherever it is; a replayed dead job answers as its replay."""
        with self._lock:
            return self._get(job_id, REPLAY_HOPS)

    async def aget(self, job_id: int) -> JobRecord | None:
        return self.get(job_id)

    def _get(self, job_id: int, hops: int) -> JobRecord | None:
        if job_id in self._jobs:
            return self._jobs[job_id].record()
        if job_id in self._history:
            return self._history[job_id].record()
        moved = self._replayed_as.get(job_id)
        if moved is None or hops == 0:
            return None
        return self._get(moved, hops - 1)

    def dead_letters(self, limit: int = 50, name: str | None = None) -> list[JobRecord]:
        with self._lock:
            dead = self._finished_where(lambda f: f.status is JobStatus.DEAD)
            chosen = [f for f in dead if name is None or f.name == name]
            chosen.sort(key=lambda f: (f.finished_at, f.id), reverse=True)
            return [f.record() for f in chosen[:limit]]

    def replay(self, job_ids: list[int]) -> list[int]:
        """Dead jobs back to the queue as new jobs; returns the new ids (order of ``job_ids``)."""
        with self._lock:
            now = self.clock.now()
            dead = self._finished_where(lambda f: f.status is JobStatus.DEAD and f.id in job_ids)
            new_by_old = {f.id: self._requeue(f, now) for f in dead}
            return [new_by_old[i] for i in job_ids if i in new_by_old]

    def _requeue(self, dead: FinishedJob, now: datetime) -> int:
        del self._history[dead.id]
        row = HotJob(
            id=self._next_id(),
            name=dead.name,
            pool=dead.pool,
            priority=dead.priority,
            args=dead.args or {},
            max_attempts=dead.max_attempts,
            run_at=now,
            tenant=dead.tenant,
            idempotency_key=dead.idempotency_key,
            enqueued_at=now,
            errors=dead.errors,  # the attempt history travels with the replay
        )
        self._jobs[row.id] = row
        if dead.idempotency_key is not None and dead.idempotency_key in self._keys:
            self._keys[dead.idempotency_key].job_id = row.id
        self._replayed_as[dead.id] = row.id
        return row.id

    def purge_dead(self, job_ids: list[int] | None = None) -> int:
        with self._lock:
            return self._purge(
                lambda f: f.status is JobStatus.DEAD and (job_ids is None or f.id in job_ids)
            )

    def purge_finished(self, older_than_seconds: float, batch: int = 10_000) -> int:
        """Retention: drop succeeded and cancelled history older than this (never dead jobs).

        ``batch`` bounds a transaction in PostgreSQL; one lock holds here, so it is unused.
        """
        finished = {JobStatus.SUCCEEDED, JobStatus.CANCELLED}
        with self._lock:
            cutoff = self.clock.now() - timedelta(seconds=older_than_seconds)
            return self._purge(lambda f: f.status in finished and f.finished_at <= cutoff)

    def purge_keys(self, older_than_seconds: float, batch: int = 10_000) -> int:
        """Key retention: forget keys taken before the cutoff, but not those of jobs still
        queued or running, or dead (a replay brings them back). ``batch``: as purge_finished."""
        with self._lock:
            cutoff = self.clock.now() - timedelta(seconds=older_than_seconds)
            dead = {f.id for f in self._history.values() if f.status is JobStatus.DEAD}
            gone = [
                key
                for key, held in self._keys.items()
                if held.created_at <= cutoff
                and held.job_id not in self._jobs
                and held.job_id not in dead
            ]
            for key in gone:
                del self._keys[key]
            return len(gone)

    def _purge(self, which: Callable[[FinishedJob], bool]) -> int:
        gone = self._finished_where(which)
        for f in gone:
            del self._history[f.id]
            if f.idempotency_key is not None:
                self._keys.pop(f.idempotency_key, None)  # the key is free again
        return len(gone)

    def _finished_where(self, which: Callable[[FinishedJob], bool]) -> list[FinishedJob]:
        return [f for f in self._history.values() if which(f)]

    def stats(self) -> list[PoolStats]:
        """Per pool; configured pools appear even when idle."""
        with self._lock:
            now = self.clock.now()
            hot, finished = list(self._jobs.values()), list(self._history.values())
            paused = sorted(self._paused)
        names = [*self._pools, *(j.pool for j in hot), *(f.pool for f in finished), *paused]
        stats = [_pool_stats(n, hot, finished, now) for n in dict.fromkeys(names)]
        return [replace(s, paused=True) if s.pool in paused else s for s in stats]

    # -- what the Inspector reads -------------------------------------------

    def history_of(self, job_ids: Iterable[int]) -> list[HistoryEntry]:
        """The finished jobs among ``job_ids``."""
        with self._lock:
            found = [self._history[i] for i in set(job_ids) if i in self._history]
            return [_entry(f) for f in found]

    def unfinished_of(self, job_ids: Iterable[int]) -> set[int]:
        with self._lock:
            return {i for i in job_ids if i in self._jobs}

    def dead_count(self) -> int:
        with self._lock:
            return len(self._finished_where(lambda f: f.status is JobStatus.DEAD))

    def queued(self) -> list[JobRecord]:
        """The jobs waiting for a worker (due or scheduled), oldest first: the manual mode's view."""
        with self._lock:
            return [self._jobs[i].record() for i in sorted(self._jobs) if not self._jobs[i].running]

    def snapshot(self) -> tuple[list[HotJob], list[FinishedJob], dict[int, int]]:
        """Copies of the hot rows, the finished rows and the replay map (the inspector's view)."""
        with self._lock:
            hot = [replace(j, args=json_copy(j.args)) for j in self._jobs.values()]
            return hot, [replace(f) for f in self._history.values()], dict(self._replayed_as)

    def health_of(self, job: str, window_seconds: float) -> JobHealth:
        with self._lock:
            hot, finished = list(self._jobs.values()), list(self._history.values())
        return job_health(job, window_seconds, hot, finished, self.clock.now())


def _entry(f: FinishedJob) -> HistoryEntry:
    errors = json_copy(f.errors)
    return HistoryEntry(f.id, f.status, f.attempt, f.enqueued_at, f.finished_at, errors)


def _pool_stats(
    pool: str, hot: list[HotJob], finished: list[FinishedJob], now: datetime
) -> PoolStats:
    pending = [j for j in hot if j.pool == pool and not j.running]
    due = [j.run_at for j in pending if j.run_at <= now]
    minute_ago = now - timedelta(minutes=1)
    mine = [f for f in finished if f.pool == pool]
    return PoolStats(
        pool=pool,
        depth=len(due),
        scheduled=len(pending) - len(due),
        running=sum(1 for j in hot if j.pool == pool and j.running),
        lag_seconds=(now - min(due)).total_seconds() if due else 0.0,
        dead=sum(1 for f in mine if f.status is JobStatus.DEAD),
        succeeded_last_minute=sum(
            1 for f in mine if f.status is JobStatus.SUCCEEDED and f.finished_at > minute_ago
        ),
    )
