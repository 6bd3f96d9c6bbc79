"""Jobs whose name this worker has not registered: left for a worker that knows them.

In a rolling deploy, old workers claim the jobs of names only new code has;
two apps may share a pool. Dead-lettering such a job at its first claim (as
before issue 22) threw work away that another worker would have run. A worker
that does not know a name hands the job back instead, as a tenant deferral
does: ``defer(..., unknown=True)``, the attempt not consumed, due again after a
backoff that grows with the time it has waited (0.5 s, then about as long as
it has waited, at most 60 s or a quarter of the deadline), jittered so that
many such jobs do not come back together. The first hand-back is recorded in
the row (``jobs.unknown_since``, database clock); once a claim finds it older
than ``unknown_job_deadline`` (default an hour), the job goes to the DLQ with
the reason. Each hand-back counts in ``unknown_job_deferrals_total{pool}``.
"""

from __future__ import annotations

import functools
import logging
import random
import threading
from datetime import timedelta

from queue_runtime.config import Settings
from queue_runtime.metrics import WorkerMetrics
from queue_runtime.store import ClaimedJob, JobStore, LeaseStore
from queue_runtime.worker._backoff import retrying
from queue_runtime.worker._outcome import Outcome
from queue_runtime.worker._settle import Clock, Settlement, Settler

log = logging.getLogger("queue_runtime.worker")
FIRST_DELAY = 0.5  # seconds before the first hand-back is due again
MAX_DELAY = 60.0  # once old workers are gone, one that knows the name waits at most this long


def delay(waited: float | None, deadline: float) -> float:
    """Seconds until the job is due again: about as long as it has waited (doubling), capped."""
    grown = max(FIRST_DELAY, waited or 0.0)
    return min(grown, MAX_DELAY, deadline / 4) * random.uniform(0.8, 1.2)


def expired(job: ClaimedJob, deadline: float) -> bool:
    return job.unknown_for is not None and job.unknown_for >= deadline


class UnknownJobs:
    """What a worker does with a claimed job whose name it has not registered."""

    def __init__(
        self,
        settings: Settings,
        stores: tuple[JobStore, LeaseStore],
        worker_id: str,
        metrics: WorkerMetrics,
        clock: Clock,
        settler: Settler,
    ) -> None:
        self._settings, (self._store, self._leases) = settings, stores
        self._worker_id, self._metrics, self._clock = worker_id, metrics, clock
        self._settler = settler

    @property
    def deadline(self) -> float:
        return self._settings.unknown_job_deadline

    def handle(self, job: ClaimedJob) -> None:
        """Hand ``job`` back for a worker that knows its name; past the deadline, to the DLQ."""
        if expired(job, self.deadline):
            reason = (
                f"unknown job: {job.name!r} is not registered in the workers that claimed it"
                f" for {job.unknown_for:.0f}s (unknown_job_deadline {self.deadline:g}s)"
            )
            self._settler.submit(
                Settlement(job, Outcome.rejected(reason), self._settings.retry, False)
            )
            return
        later = self._clock() + timedelta(seconds=delay(job.unknown_for, self.deadline))
        back = functools.partial(self._store.defer, job.id, job.attempt, later, unknown=True)
        retrying(back, threading.Event(), "defer", 10)
        self._leases.release([job.token], self._worker_id)
        self._metrics.unknown_job_deferrals.labels(job.pool).inc()
        if job.unknown_for is None:  # once per job and worker fleet, not at every hand-back
            log.warning(
                "job %s (%s) is not registered in this worker: handed back for a worker that"
                " knows it (dead-lettered if none runs it within %gs)",
                job.id,
                job.name,
                self.deadline,
            )
