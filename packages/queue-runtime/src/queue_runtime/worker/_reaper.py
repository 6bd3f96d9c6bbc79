"""The reaper: rescue attempts whose lease is gone (their worker died).

Every worker runs one; rescue is fenced by ``(id, attempt)`` and idempotent,
so several reapers are harmless. Each round: running tokens claimed longer
than ``lease_ttl`` ago (PostgreSQL), which of them still have a lease (Redis),
and ``rescue`` of the others (back to pending, run at once).

The Redis epoch guards against a flush or a restart, which delete leases of
LIVE workers: when the epoch is missing or different from the last round (or
on this reaper's first round), nothing is rescued until a full ``lease_ttl``
plus one heartbeat interval has passed, by which time every live worker has
re-asserted its leases. The epoch is read again after the lease check, so a
flush between the two reads cannot turn live jobs into rescues.

Redis can also be away without losing its data (a stalled server, a network
partition, a failover slower than a lease): the leases of live workers expire
meanwhile while the epoch stays the same. So a round that could not reach Redis
starts the same quiet period once Redis answers again: live workers re-assert
their leases with their next heartbeat before anything is rescued.

Retention rides on the same thread: every ``purge_every`` seconds the reaper
drops succeeded and cancelled history older than ``history_retention_days``
(batched deletes; dead jobs are never purged), so the history table does not
grow without bound and no separate cron is needed. Idempotency keys expire on
the same schedule: enqueue keys taken and guard keys untouched for longer
than ``key_retention_days`` are forgotten (batched), except the enqueue keys
of jobs still queued, running or dead.

The SLO check rides on it too (:mod:`queue_runtime.worker._slo`): each round,
a job whose SLO is breached is rolled back to inline.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from queue_runtime.errors import LeasesUnavailable, QueueError
from queue_runtime.metrics import WorkerMetrics
from queue_runtime.store import GateStore, JobStore, LeaseStore
from queue_runtime.worker._backoff import STORE_ERRORS, TRANSIENT
from queue_runtime.worker._slo import SloGuard

log = logging.getLogger("queue_runtime.worker")
_ROUND_ERRORS: tuple[type[BaseException], ...] = (*STORE_ERRORS, QueueError)
ALL_POOLS = "*"  # rescues are counted without a pool: running_tokens does not carry it


class Reaper:
    def __init__(
        self,
        store: JobStore,
        leases: LeaseStore,
        ttl: float,
        metrics: WorkerMetrics,
        clock: Callable[[], float] = time.monotonic,
        retention_seconds: float | None = None,
        purge_every: float = 600.0,
        slo: SloGuard | None = None,
        keys: GateStore | None = None,
        key_retention_seconds: float | None = None,
    ) -> None:
        self._store, self._leases, self._ttl, self._metrics = store, leases, ttl, metrics
        self._clock = clock
        self._retention, self._purge_every = retention_seconds, purge_every
        self._slo = slo
        self._keys, self._key_retention = keys, key_retention_seconds
        self._next_purge = clock()
        self.interval = ttl / 2
        self._quiet = ttl + ttl / 3  # lease ttl + one heartbeat interval
        self._epoch: str | None = None
        self._quiet_until = 0.0
        self._lost_redis = False  # a round could not reach Redis: wait a quiet period after it

    def run(self, stop: threading.Event) -> None:
        while not stop.wait(self.interval):
            try:
                self.sweep()
                self.retain()
                self.guard_slos()
            except TRANSIENT as exc:
                if isinstance(exc, LeasesUnavailable):
                    self._lost_redis = True
                log.warning("reaper round skipped (%s: %s)", type(exc).__name__, exc)
            except _ROUND_ERRORS:
                log.exception("reaper round failed")  # keep reaping: the next round may work

    def sweep(self) -> int:
        """One round; returns the number of attempts rescued."""
        if not self._epoch_settled(self._leases.epoch()):
            return 0
        tokens = self._store.running_tokens(self._ttl)
        if not tokens:
            return 0
        alive = self._leases.alive([f"{i}:{a}" for i, a in tokens])
        if not self._epoch_settled(self._leases.epoch()):
            return 0
        dead = [t for t, ok in zip(tokens, alive, strict=True) if not ok]
        rescued = self._store.rescue(dead) if dead else 0
        if rescued:
            log.warning("reaper rescued %d attempt(s) without a lease: %s", rescued, dead)
            self._metrics.lost_leases.labels(ALL_POOLS).inc(rescued)
        return rescued

    def retain(self) -> int:
        """Purge history and keys past retention when it is due; returns the history rows purged."""
        now = self._clock()
        if (self._retention is None and self._key_retention is None) or now < self._next_purge:
            return 0
        self._next_purge = now + self._purge_every
        self.expire_keys()
        if self._retention is None:
            return 0
        purged = self._store.purge_finished(self._retention)
        if purged:
            log.info("retention purged %d finished job(s) from history", purged)
        return purged

    def expire_keys(self) -> int:
        """Forget idempotency keys past ``key_retention``; returns how many (enqueue and guard)."""
        if self._key_retention is None:
            return 0
        expired = self._store.purge_keys(self._key_retention)
        if self._keys is not None:
            expired += self._keys.purge_keys(self._key_retention)
        if expired:
            log.info("key retention forgot %d idempotency key(s)", expired)
        return expired

    def guard_slos(self) -> int:
        """Roll back the jobs whose SLO is breached; returns how many this round did."""
        return len(self._slo.check()) if self._slo is not None else 0

    def _epoch_settled(self, epoch: str) -> bool:
        now = self._clock()
        if (
            self._lost_redis
        ):  # Redis answers again (it just gave the epoch): leases may have expired
            self._lost_redis = False
            self._quiet_until = now + self._quiet
            log.warning("Redis answers again after an outage: no rescue for %.1fs", self._quiet)
        if epoch != self._epoch:
            if self._epoch is not None:
                log.warning(
                    "Redis epoch changed (flush or restart): no rescue for %.1fs", self._quiet
                )
            self._epoch, self._quiet_until = epoch, now + self._quiet
        return now >= self._quiet_until
