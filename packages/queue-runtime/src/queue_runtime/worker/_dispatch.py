"""From a claimed batch to running attempts: lease, prefetch buffer, tenant cap, payload, run.

Order matters: the PostgreSQL claim comes first (it decides who runs what),
then ONE Redis call takes the leases of the whole batch, then the batch joins
its pool's prefetch buffer. If Redis cannot be reached, the batch goes straight
back to ``pending`` (``defer`` does not consume the attempt) and the worker
pauses claiming until Redis answers.

An executor thread takes a job from the buffer and calls :meth:`Dispatcher.run`:
the tenant token is taken only now (a buffered job holds none), then the
payload is decoded and the attempt runs in that thread.
"""

from __future__ import annotations

import functools
import logging
import random
import threading
import time
from datetime import timedelta

from queue_runtime.config import Settings
from queue_runtime.errors import LeasesUnavailable
from queue_runtime.metrics import WorkerMetrics
from queue_runtime.store import ClaimedJob, JobStore, LeaseStore
from queue_runtime.worker._backoff import retrying
from queue_runtime.worker._context import CancelSource
from queue_runtime.worker._execute import Executor
from queue_runtime.worker._inflight import Inflight, Running
from queue_runtime.worker._outcome import Outcome, OutcomeKind
from queue_runtime.worker._prefetch import Prefetch
from queue_runtime.worker._resolve import Invocation, Resolver
from queue_runtime.worker._settle import Clock, Settlement, Settler
from queue_runtime.worker._unknown import UnknownJobs

log = logging.getLogger("queue_runtime.worker")
TENANT_DEFER = 0.5  # seconds, jittered: a tenant's slot frees when one of its jobs ends


class Dispatcher:
    def __init__(
        self,
        settings: Settings,
        store: JobStore,
        leases: LeaseStore,
        worker_id: str,
        parts: tuple[Inflight, Executor, Settler, Resolver, WorkerMetrics],
        clock: Clock,
        stopping: threading.Event,
    ) -> None:
        self._settings, self._store, self._leases = settings, store, leases
        self._worker_id, self._clock, self._stopping = worker_id, clock, stopping
        self._inflight, self._executor, self._settler, self._resolver, self._metrics = parts
        stores = (store, leases)
        self._unknown = UnknownJobs(
            settings, stores, worker_id, self._metrics, clock, self._settler
        )
        self.redis_down = threading.Event()
        self.buffers: dict[str, Prefetch] = {}  # per pool, filled by the worker's wiring
        self.cancels: CancelSource | None = None  # cancel requests (``_control``), from the wiring
        # Starting an attempt (joining Inflight) and shutdown's check for running ones
        # are serialised: after seal(), every attempt is either in Inflight or handed back.
        self._gate = threading.Lock()

    def dispatch(self, jobs: list[ClaimedJob]) -> None:
        """Lease a freshly claimed batch (one Redis call) and hand it to its pool's executors."""
        try:
            held = self._leases.acquire([j.token for j in jobs], self._worker_id, self._ttl)
        except LeasesUnavailable as exc:
            log.warning("Redis unavailable (%s): returning %d claimed job(s)", exc, len(jobs))
            self.redis_down.set()
            self.give_back(jobs)
            return
        leased = []
        for job, ok in zip(jobs, held, strict=True):
            if ok:
                leased.append(job)
            else:  # cannot happen unless tokens repeat; never run a job someone holds
                log.error("lease of %s held by another worker; skipping", job.token)
        if not leased:
            return
        if self._stopping.is_set() or self.redis_down.is_set():
            self.give_back(leased)
            return
        by_pool: dict[str, list[ClaimedJob]] = {}
        for job in leased:
            by_pool.setdefault(job.pool, []).append(job)
        for pool, batch in by_pool.items():
            buffer = self.buffers.get(pool)
            if buffer is None or not buffer.put(batch):  # closed: the worker is stopping
                self.give_back(batch)

    def run(self, job: ClaimedJob) -> bool:
        """Run one buffered job in the calling executor thread (returns when it is done).

        False when it did not run: handed back (also for a name this worker has not
        registered: ``_unknown``), deferred by its tenant cap, or rejected.
        """
        if self._stopping.is_set() or self.redis_down.is_set():
            self.give_back([job])
            return False
        return self._admit(job)

    def give_back(self, jobs: list[ClaimedJob]) -> None:
        """Return claimed, unstarted jobs to pending at once (attempt not consumed)."""
        if not jobs:
            return
        now = self._clock()
        for job in jobs:
            retrying(
                functools.partial(self._store.defer, job.id, job.attempt, now),
                threading.Event(),
                "defer",
                10,
            )
        retrying(
            lambda: self._leases.release([j.token for j in jobs], self._worker_id),
            threading.Event(),
            "release",
            1.0,
        )

    @property
    def _ttl(self) -> float:
        return self._settings.lease_ttl

    def _admit(self, job: ClaimedJob) -> bool:
        if not self._resolver.knows(job.name):  # before its tenant token: it will not run here
            self._unknown.handle(job)
            return False
        try:
            tenant_held = self._take_tenant_slot(job)
        except LeasesUnavailable:
            self.redis_down.set()
            self.give_back([job])
            return False
        if tenant_held is None:
            return False
        if self.cancels is not None and self.cancels.requested(job.id):  # cancelled while buffered
            outcome = Outcome.cancelled("cancelled before it started")
            self._settler.submit(Settlement(job, outcome, self._settings.retry, tenant_held))
            return False
        resolved = self._resolver.resolve(job)
        if isinstance(resolved, Outcome):
            self._settler.submit(Settlement(job, resolved, self._settings.retry, tenant_held))
            return False
        return self._start(job, resolved, tenant_held)

    def _take_tenant_slot(self, job: ClaimedJob) -> bool | None:
        """False: no cap applies; True: token taken; None: over the cap, deferred."""
        cap = self._cap(job.tenant)
        if job.tenant is None or cap is None:
            return False
        if self._leases.tenant_acquire(job.tenant, job.id, cap, self._ttl):
            return True
        later = self._clock() + timedelta(seconds=TENANT_DEFER * random.uniform(0.5, 1.5))
        retrying(
            lambda: self._store.defer(job.id, job.attempt, later), threading.Event(), "defer", 10
        )
        self._leases.release([job.token], self._worker_id)
        self._metrics.tenant_deferrals.labels(job.pool).inc()
        return None

    def _cap(self, tenant: str | None) -> int | None:
        if tenant is None:
            return None
        return self._settings.tenant_caps.get(tenant, self._settings.default_tenant_cap)

    def _start(self, job: ClaimedJob, inv: Invocation, tenant_held: bool) -> bool:
        deadline = None if inv.is_async else time.monotonic() + inv.timeout
        running = Running(job, deadline, inv.timeout, inv.policy, tenant_held)
        with self._gate:
            late = self._stopping.is_set()
            if not late:
                self._inflight.add(running)
        if late:  # shutdown began while this job was being admitted: it never starts
            self.give_back([job])
            self.release([running])
            return False

        def done(outcome: Outcome) -> None:
            self.settle(running, outcome)
            self._inflight.remove(running)

        self._executor.run(inv, done)
        return True

    def seal(self) -> None:
        """From now on no attempt starts (``stopping`` is set): Inflight holds every running one."""
        with self._gate:
            pass

    def settle(self, running: Running, outcome: Outcome) -> None:
        """Report an attempt's outcome, once (a timed-out sync job's late result is dropped)."""
        if not self._inflight.claim_settlement(running):
            if outcome.kind is OutcomeKind.SUCCEEDED:
                log.info("late result of %s dropped: the attempt had timed out", running.token)
            return
        outcome = self._honour_cancel(running.job, outcome)
        took = time.monotonic() - running.started_at  # started_at is monotonic
        self._settler.submit(
            Settlement(
                running.job,
                outcome,
                running.policy,
                running.tenant_held,
                (took, time.time() - took),
            )
        )

    def _honour_cancel(self, job: ClaimedJob, outcome: Outcome) -> Outcome:
        """A job whose cancel was requested is not retried: a retryable failure ends cancelled."""
        retryable = outcome.kind in (OutcomeKind.FAILED, OutcomeKind.TIMED_OUT)
        if not retryable or outcome.permanent or self.cancels is None:
            return outcome
        if not self.cancels.requested(job.id):
            return outcome
        return Outcome.cancelled(f"cancel requested; the attempt then failed: {outcome.error}")

    def release(self, running: list[Running]) -> None:
        """Best effort: drop the leases and tenant tokens of attempts handed back."""
        try:
            self._leases.release([r.token for r in running], self._worker_id)
            for r in running:
                if r.tenant_held and r.job.tenant is not None:
                    self._leases.tenant_release(r.job.tenant, r.job.id)
        except LeasesUnavailable:
            log.warning("Redis unavailable: leases of handed-back jobs will expire instead")
