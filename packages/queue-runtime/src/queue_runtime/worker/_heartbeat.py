"""The heartbeat and the timeout watchdog: two small loops over the running attempts.

Heartbeat (every ``lease_ttl / 3``): ONE Lua call renews every lease of this
worker (running attempts and prefetched, not yet started jobs), re-asserting keys that vanished (Redis flushed or restarted) and
reporting tokens another worker holds as lost; one more call renews the tenant
tokens, and one pipelined call writes the worker's presence record (host, pid,
pools, running count: ``queue-runtime workers``; it also serves as the ping of
an idle worker). It never writes PostgreSQL. While Redis is down it marks the
worker so no new job is claimed; running jobs go on.

Watchdog: a sync job cannot be interrupted, so when it passes its timeout the
attempt is reported as timed out (retried by its policy) and the thread is left
to finish; its late result is dropped and fenced out by the store.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
from collections.abc import Callable
from contextlib import suppress
from datetime import UTC, datetime

from queue_runtime.errors import LeasesUnavailable
from queue_runtime.metrics import WorkerMetrics
from queue_runtime.store import LeaseStore, Renewal, WorkerInfo
from queue_runtime.worker._inflight import Inflight, Running
from queue_runtime.worker._outcome import Outcome
from queue_runtime.worker._prefetch import Prefetch

log = logging.getLogger("queue_runtime.worker")
WATCHDOG_TICK = 0.05  # seconds: timeout resolution of sync jobs


class Heartbeat:
    def __init__(
        self,
        leases: LeaseStore,
        worker_id: str,
        ttl: float,
        inflight: Inflight,
        metrics: WorkerMetrics,
        redis_down: threading.Event,
        buffers: dict[str, Prefetch],
    ) -> None:
        self._leases, self._worker_id, self._ttl = leases, worker_id, ttl
        self._inflight, self._metrics, self._redis_down = inflight, metrics, redis_down
        self._buffers = buffers
        self.interval = ttl / 3
        self._started_at = datetime.now(UTC)

    def run(self, stop: threading.Event) -> None:
        self._announce_quietly()  # listed from the start, not one interval later
        while not stop.wait(self.interval):
            self.beat()
        with suppress(LeasesUnavailable):  # else the record expires with the ttl
            self._leases.retire(self._worker_id)

    def presence(self, running: int) -> WorkerInfo:
        """This worker's presence record (its pools are its prefetch buffers')."""
        now = datetime.now(UTC)
        pools = tuple(self._buffers)
        host, pid = socket.gethostname(), os.getpid()
        return WorkerInfo(self._worker_id, host, pid, pools, running, self._started_at, now)

    def _announce_quietly(self) -> None:
        with suppress(LeasesUnavailable):  # the first beat reports it
            self._leases.announce(self.presence(0), self._ttl)

    def beat(self) -> None:
        # Buffered first: a job that starts between the two reads is in the second.
        buffered = [(pool, token) for pool, b in self._buffers.items() for token in b.tokens()]
        running = self._inflight.unsettled()
        try:
            self._renew_leases(running, buffered)
            held = [(r.job.tenant, r.job.id) for r in running if r.tenant_held and r.job.tenant]
            self._leases.tenant_renew(held, self._ttl)
            self._leases.announce(self.presence(len(running)), self._ttl)
        except LeasesUnavailable as exc:
            if not self._redis_down.is_set():
                log.warning("Redis unavailable (%s): claiming paused, running jobs continue", exc)
            self._redis_down.set()
            return
        if self._redis_down.is_set():
            log.warning("Redis is back: claiming resumes")
        self._redis_down.clear()

    def _renew_leases(self, running: list[Running], buffered: list[tuple[str, str]]) -> None:
        tokens = [r.token for r in running] + [token for _, token in buffered]
        report = self._leases.heartbeat(tokens, self._worker_id, self._ttl)
        reasserted: list[str] = []
        for r, renewal in zip(running, report, strict=False):
            if renewal is Renewal.REASSERTED:
                reasserted.append(r.token)
                self._metrics.reasserted_leases.labels(r.job.pool).inc()
            elif renewal is Renewal.LOST and not r.lost:
                r.lost = True  # keep running: its completion is fenced out if it was rescued
                self._metrics.lost_leases.labels(r.job.pool).inc()
                log.warning("lease of %s lost to another worker", r.token)
        for (pool, token), renewal in zip(buffered, report[len(running) :], strict=True):
            if renewal is Renewal.REASSERTED:
                reasserted.append(token)
                self._metrics.reasserted_leases.labels(pool).inc()
            elif renewal is Renewal.LOST and self._buffers[pool].discard(token):
                # Not started yet: drop it; the holder of the token runs it.
                self._metrics.lost_leases.labels(pool).inc()
                log.warning("lease of prefetched %s lost to another worker; dropped", token)
        if reasserted:
            log.warning(
                "re-asserted %d lease(s) missing from Redis: %s", len(reasserted), reasserted
            )


class Watchdog:
    def __init__(self, inflight: Inflight, settle: Callable[[Running, Outcome], None]) -> None:
        self._inflight, self._settle = inflight, settle

    def run(self, stop: threading.Event) -> None:
        while not stop.wait(WATCHDOG_TICK):
            for running in self._inflight.overdue(time.monotonic()):
                log.warning("job %s timed out after %gs", running.token, running.timeout)
                self._settle(running, Outcome.timed_out(running.timeout))
