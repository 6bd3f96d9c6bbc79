"""Reporting outcomes: batched acks, retries with backoff, DLQ, lease release.

One thread takes outcomes from a queue and writes them in batches: every
success of a batch in ONE ``complete_many`` statement, then each failure
(``fail`` with ``retry_at`` from the job's RetryPolicy, or None for the DLQ).
Leases and tenant tokens are released only after PostgreSQL has the outcome,
so the reaper never sees a finished attempt without a lease while still running.
"""

from __future__ import annotations

import functools
import logging
import queue
import threading
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from queue_runtime.config import RetryPolicy
from queue_runtime.metrics import JobTally, Settled, Timing, WorkerMetrics
from queue_runtime.retry import Backoff
from queue_runtime.store import ClaimedJob, Completion, Failure, JobStatus, JobStore, LeaseStore
from queue_runtime.worker._backoff import STORE_ERRORS, retrying
from queue_runtime.worker._outcome import Outcome, OutcomeKind

log = logging.getLogger("queue_runtime.worker")
BATCH = 256
LINGER = 0.005  # seconds to gather more outcomes into one statement (when fewer than BATCH)

Clock = Callable[[], datetime]


@dataclass(frozen=True, slots=True)
class Settlement:
    job: ClaimedJob
    outcome: Outcome
    policy: RetryPolicy
    tenant_held: bool
    timing: Timing | None = None  # (seconds it ran, epoch start); None: never started


def decide(s: Settlement, backoff: Backoff) -> Completion | Failure:
    """What to store for one outcome: a completion, a retry at a time, or dead (retry_at None).

    The attempt budget is the job row's ``max_attempts``; the delay comes from
    the job's RetryPolicy via ``backoff`` (clock and RNG injectable).
    """
    job, out = s.job, s.outcome
    if out.kind is OutcomeKind.SUCCEEDED:
        return Completion(job.id, job.attempt, out.result)
    retry_at = None
    if not out.permanent and job.attempt < job.max_attempts:
        delay = backoff.delay(failed_attempts(job, s.policy), s.policy)
        retry_at = backoff.now() + timedelta(seconds=delay)
    return Failure(job.id, job.attempt, out.error, out.traceback, retry_at)


def failed_attempts(job: ClaimedJob, policy: RetryPolicy) -> int:
    """Real attempts so far, for the backoff exponent.

    A tenant deferral keeps its attempt number and raises ``max_attempts`` by
    one (tokens never repeat), so ``attempt`` alone overcounts: the attempts
    left (``max_attempts - attempt``) are exact, the policy gives the total.
    """
    left = job.max_attempts - job.attempt
    return max(1, min(job.attempt, policy.max_attempts - left))


@dataclass
class _PoolCounts:
    """One batch's per-pool totals (completed, retried, dead-lettered), added to the
    worker's metrics after the batch's per-job figures."""

    completed: Counter[str] = field(default_factory=Counter)
    retried: Counter[str] = field(default_factory=Counter)
    dead: Counter[str] = field(default_factory=Counter)

    def record(self, metrics: WorkerMetrics) -> None:
        for pool, count in self.completed.items():
            metrics.job_completed(pool, count)
        for pool, count in self.retried.items():
            metrics.retries.labels(pool).inc(count)
        for pool, count in self.dead.items():
            metrics.dead.labels(pool).inc(count)


class Settler:
    """The ack thread of a worker."""

    def __init__(
        self,
        store: JobStore,
        leases: LeaseStore,
        worker_id: str,
        metrics: WorkerMetrics,
        backoff: Backoff,
    ) -> None:
        self._store, self._leases, self._worker_id = store, leases, worker_id
        self._metrics, self._backoff = metrics, backoff
        self._queue: queue.Queue[Settlement] = queue.Queue()
        self._closing = threading.Event()
        self._abandon = threading.Event()  # set only when shutdown can wait no longer
        self._thread = threading.Thread(target=self._loop, name="qr-settler", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def submit(self, settlement: Settlement) -> None:
        self._queue.put(settlement)

    def close(self, timeout: float) -> None:
        """Write everything queued so far (up to ``timeout``), then stop."""
        self._closing.set()
        self._thread.join(timeout)
        if self._thread.is_alive():
            self._abandon.set()
            self._thread.join(5)

    def _loop(self) -> None:
        while not (self._closing.is_set() and self._queue.empty()):
            batch = self._take()
            if not batch:
                continue
            try:
                self._persist(batch)
            except STORE_ERRORS:
                # Not transient (retried inside): the outcomes are lost, the leases
                # expire and the reaper hands the jobs out again. Keep acking others.
                log.exception("could not store %d outcome(s)", len(batch))

    def _take(self) -> list[Settlement]:
        try:
            batch = [self._queue.get(timeout=0.1)]
        except queue.Empty:
            return []
        if self._queue.qsize() < BATCH:
            self._closing.wait(LINGER)
        while len(batch) < BATCH:
            try:
                batch.append(self._queue.get_nowait())
            except queue.Empty:
                break
        return batch

    def _persist(self, batch: list[Settlement]) -> None:
        cancelled = [s for s in batch if s.outcome.kind is OutcomeKind.CANCELLED]
        records = [
            (s, decide(s, self._backoff))
            for s in batch
            if s.outcome.kind is not OutcomeKind.CANCELLED
        ]
        tally = self._metrics.tally()  # per-job figures, added once per batch
        pools = _PoolCounts()  # the per-pool totals, added after them
        self._cancel(cancelled, tally)
        self._complete([(s, r) for s, r in records if isinstance(r, Completion)], tally, pools)
        for s, record in records:
            if isinstance(record, Failure):
                self._fail(s, record, tally, pools)
        self._release(batch)
        # Metrics last: leases and tenant tokens never wait for them. The per-job figures go
        # first: a scrape never sees a pool's total ahead of the jobs it counts (a reader
        # waiting on dead_lettered_total{pool} then finds every job's own dead-lettered count).
        tally.ran_many((s.job, s.timing) for s in batch if s.timing is not None)
        self._metrics.record(tally)
        pools.record(self._metrics)

    def _complete(
        self, done: list[tuple[Settlement, Completion]], tally: JobTally, pools: _PoolCounts
    ) -> None:
        if not done:
            return
        stored = retrying(
            lambda: self._store.complete_many([c for _, c in done]), self._abandon, "complete_many"
        )
        if stored is not None and stored < len(done):
            log.info("%d completion(s) fenced out: their attempt was rescued", len(done) - stored)
        pools.completed.update(s.job.pool for s, _ in done)
        tally.count_many(Settled.COMPLETED, (s.job for s, _ in done))

    def _fail(self, s: Settlement, failure: Failure, tally: JobTally, pools: _PoolCounts) -> None:
        status = retrying(lambda: self._store.fail(failure), self._abandon, "fail")
        if status is JobStatus.DEAD:
            pools.dead[s.job.pool] += 1
            tally.count(Settled.FAILED, s.job)
            tally.count(Settled.DEAD, s.job)
            log.warning("job %s (%s) dead-lettered: %s", s.job.id, s.job.name, failure.error)
        elif status is not None and failure.retry_at is not None:
            pools.retried[s.job.pool] += 1
            tally.count(Settled.FAILED, s.job)
            tally.count(Settled.RETRIED, s.job)

    def _cancel(self, cancelled: list[Settlement], tally: JobTally) -> None:
        """Attempts that stopped on their cancel request end cancelled (fenced, one each)."""
        for s in cancelled:
            job, error = s.job, s.outcome.error
            store = functools.partial(self._store.cancel_attempt, job.id, job.attempt, error)
            if retrying(store, self._abandon, "cancel_attempt"):
                tally.count(Settled.CANCELLED, job)
                log.info("job %s (%s) cancelled: %s", job.id, job.name, error)

    def _release(self, batch: list[Settlement]) -> None:
        """Leases, then tenant tokens: two round trips per batch, never blocking acks for long.

        Best effort: while Redis is down they cannot be released, and they expire
        by themselves (the jobs' rows are already finished or rescheduled).
        """
        tokens = [s.job.token for s in batch]
        held = [(s.job.tenant, s.job.id) for s in batch if s.tenant_held and s.job.tenant]

        def release() -> bool:
            self._leases.release(tokens, self._worker_id)
            self._leases.tenant_release_many(held)
            return True

        retrying(release, self._abandon, "release", 2.0)
