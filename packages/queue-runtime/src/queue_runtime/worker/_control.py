"""Operator controls a worker polls: paused pools and cancel requests of the jobs it holds.

Every ``CONTROL_INTERVAL`` (0.5 s) ONE statement (``JobStore.control``) reads
the paused pools and which of this worker's jobs (running or prefetched) have
a cancel request. Both tables stay tiny, so the poll costs a fraction of a
millisecond of database time per worker.

- A pool that became paused: its prefetch buffer stops taking jobs and its
  unstarted ones go back to pending (attempt not consumed), so no new job of
  the pool starts here later than one interval plus one claim round trip
  after ``queue-runtime pause`` returned; running jobs go on. Resumed: the
  pool is marked as having work and the claim loop woken at once.
- Cancel requests: the ids are what ``JobContext.cancel_requested`` reads (a
  set lookup); a prefetched job with a request is never started.

While PostgreSQL cannot be reached the last answer stands (claims fail then anyway).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from queue_runtime.store import ClaimedJob, JobStore
from queue_runtime.worker._backoff import STORE_ERRORS
from queue_runtime.worker._inflight import Inflight
from queue_runtime.worker._prefetch import Prefetch

log = logging.getLogger("queue_runtime.worker")
CONTROL_INTERVAL = 0.5  # seconds between polls: the latency of pause and of a cancel request


class CancelRequests:
    """Ids of this worker's jobs with a cancel request; replaced whole by each poll."""

    def __init__(self) -> None:
        self._ids: frozenset[int] = frozenset()

    def requested(self, job_id: int) -> bool:
        return job_id in self._ids

    def update(self, ids: frozenset[int]) -> frozenset[int]:
        """Store the poll's answer; returns the ids that are new."""
        new, self._ids = ids - self._ids, ids
        return new


class Control:
    def __init__(
        self,
        store: JobStore,
        buffers: dict[str, Prefetch],
        inflight: Inflight,
        cancels: CancelRequests,
        give_back: Callable[[list[ClaimedJob]], None],
        resumed: Callable[[str], None],
        interval: float = CONTROL_INTERVAL,
    ) -> None:
        self._store, self._buffers, self._inflight = store, buffers, inflight
        self.cancels, self._give_back, self._resumed = cancels, give_back, resumed
        self.interval = interval
        self.paused: frozenset[str] = frozenset()
        self._failing = False

    def run(self, stop: threading.Event) -> None:
        while not stop.wait(self.interval):
            self.poll()

    def poll(self) -> None:
        """One round: read the controls, apply pauses and resumes, publish cancel requests."""
        held = [r.job.id for r in self._inflight.unsettled()]
        held += [job.id for buffer in self._buffers.values() for job in buffer.jobs()]
        try:
            found = self._store.control(held)
        except STORE_ERRORS as exc:
            if not self._failing:
                log.warning("could not read pauses and cancel requests (%s); retrying", exc)
            self._failing = True
            return
        self._failing = False
        for job_id in sorted(self.cancels.update(found.cancel_requested)):
            log.info("cancel of job %s requested", job_id)
        self._apply(found.paused & set(self._buffers))

    def _apply(self, paused: frozenset[str]) -> None:
        for pool in sorted(paused - self.paused):
            unstarted = self._buffers[pool].pause()
            log.warning(
                "pool %s paused: claiming stopped, %d unstarted job(s) handed back",
                pool,
                len(unstarted),
            )
            self._give_back(unstarted)
        for pool in sorted(self.paused - paused):
            self._buffers[pool].resume()
            log.warning("pool %s resumed: claiming again", pool)
            self._resumed(pool)
        self.paused = paused
