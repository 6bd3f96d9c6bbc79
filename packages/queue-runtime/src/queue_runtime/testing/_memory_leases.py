"""MemoryLeaseStore: the LeaseStore seam in memory, on an injectable clock.

The same rules as the Lua scripts of :mod:`queue_runtime.redis`: a
lease is held by one worker until its TTL passes; a heartbeat re-asserts a
missing lease; the epoch appears on first use and changes after
:meth:`MemoryLeaseStore.flush` (what FLUSHALL or a restart does to Redis);
tenant tokens are capped, expire, and none is handed out while a new epoch
settles. :meth:`MemoryLeaseStore.go_down` makes every call raise
``LeasesUnavailable``, as an unreachable Redis does.
"""

from __future__ import annotations

import secrets
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from queue_runtime.errors import LeasesUnavailable
from queue_runtime.store import Renewal, WorkerInfo
from queue_runtime.testing._clock import Clock, SystemClock


@dataclass(slots=True)
class _Held:
    holder: str
    expires: datetime


class MemoryLeaseStore:
    def __init__(self, clock: Clock | None = None) -> None:
        self.clock = clock or SystemClock()
        self._lock = threading.Lock()
        self._leases: dict[str, _Held] = {}
        self._tenants: dict[str, dict[int, datetime]] = {}
        self._epoch: tuple[str, datetime] | None = None
        self._workers: dict[str, tuple[WorkerInfo, datetime]] = {}  # presence, its expiry
        self._down = False

    # -- test controls --------------------------------------------------------

    def flush(self) -> None:
        """Forget everything, epoch included: what FLUSHALL or a restart does to Redis."""
        with self._lock:
            self._leases.clear()
            self._tenants.clear()
            self._workers.clear()
            self._epoch = None

    def go_down(self, down: bool = True) -> None:
        """Every call raises LeasesUnavailable until ``go_down(False)``."""
        with self._lock:
            self._down = down

    # -- leases ---------------------------------------------------------------

    def acquire(self, tokens: list[str], worker_id: str, ttl: float) -> list[bool]:
        """Take the leases of claimed tokens; False where another worker holds one."""
        with self._open() as now:
            taken = [self._holder(t, now) in (None, worker_id) for t in tokens]
            for token, ok in zip(tokens, taken, strict=True):
                if ok:
                    self._leases[token] = _Held(worker_id, _after(now, ttl))
            return taken

    def heartbeat(self, tokens: list[str], worker_id: str, ttl: float) -> list[Renewal]:
        """Renew every lease of a worker, re-asserting missing ones."""
        with self._open() as now:
            return [self._renew_one(t, worker_id, now, ttl) for t in tokens]

    def _renew_one(self, token: str, worker_id: str, now: datetime, ttl: float) -> Renewal:
        holder = self._holder(token, now)
        if holder not in (None, worker_id):
            return Renewal.LOST
        self._leases[token] = _Held(worker_id, _after(now, ttl))
        return Renewal.RENEWED if holder == worker_id else Renewal.REASSERTED

    def renew(self, tokens: list[str], worker_id: str, ttl: float) -> list[bool]:
        return [r is not Renewal.LOST for r in self.heartbeat(tokens, worker_id, ttl)]

    def release(self, tokens: list[str], worker_id: str) -> None:
        with self._open() as now:
            for token in tokens:
                if self._holder(token, now) == worker_id:
                    del self._leases[token]

    def alive(self, tokens: list[str]) -> list[bool]:
        with self._open() as now:
            return [self._holder(t, now) is not None for t in tokens]

    def _holder(self, token: str, now: datetime) -> str | None:
        held = self._leases.get(token)
        return held.holder if held is not None and held.expires > now else None

    def epoch(self) -> str:
        """The dataset's epoch: ``<random>:<creation ms>``, new after a flush."""
        with self._open() as now:
            return self._epoch_at(now)[0]

    def _epoch_at(self, now: datetime) -> tuple[str, datetime]:
        if self._epoch is None:
            self._epoch = (f"{secrets.token_hex(8)}:{int(now.timestamp() * 1000)}", now)
        return self._epoch

    def ping(self) -> bool:
        with self._open():
            return True

    def close(self) -> None:
        """Nothing to release."""

    # -- worker presence -------------------------------------------------------

    def announce(self, worker: WorkerInfo, ttl: float) -> None:
        """The worker's presence, seen now, until ``ttl`` passes without another announce."""
        with self._open() as now:
            self._workers[worker.id] = (replace(worker, seen_at=now), _after(now, ttl))

    def retire(self, worker_id: str) -> None:
        with self._open():
            self._workers.pop(worker_id, None)

    def workers(self) -> list[WorkerInfo]:
        with self._open() as now:
            live = {i: w for i, (w, expires) in self._workers.items() if expires > now}
            return [live[i] for i in sorted(live)]

    # -- tenant tokens ----------------------------------------------------------

    def tenant_acquire(
        self, tenant: str, job_id: int, cap: int, ttl: float, settle: float | None = None
    ) -> bool:
        """A token of ``tenant`` for ``job_id``; False at the cap or while a new epoch settles."""
        settle = ttl * 4 / 3 if settle is None else settle
        with self._open() as now:
            born = self._epoch_at(now)[1]
            if now - born < timedelta(seconds=settle):
                return False
            members = self._live_members(tenant, now)
            if job_id not in members and len(members) >= cap:
                return False
            members[job_id] = _after(now, ttl)
            return True

    def tenant_renew(self, held: list[tuple[str, int]], ttl: float) -> int:
        """Extend these tokens; a missing one is re-added (its job IS running). How many were."""
        with self._open() as now:
            readded = 0
            for tenant, job_id in held:
                members = self._tenants.setdefault(tenant, {})
                readded += job_id not in members
                members[job_id] = _after(now, ttl)
            return readded

    def tenant_release(self, tenant: str, job_id: int) -> None:
        self.tenant_release_many([(tenant, job_id)])

    def tenant_release_many(self, held: list[tuple[str, int]]) -> None:
        with self._open():
            for tenant, job_id in held:
                self._tenants.get(tenant, {}).pop(job_id, None)

    def tenant_running(self, tenant: str) -> int:
        with self._open() as now:
            return len(self._live_members(tenant, now))

    def _live_members(self, tenant: str, now: datetime) -> dict[int, datetime]:
        """The tenant's tokens, expired ones (their worker died) dropped first."""
        members = self._tenants.setdefault(tenant, {})
        for job_id in [j for j, expires in members.items() if expires <= now]:
            del members[job_id]
        return members

    @contextmanager
    def _open(self) -> Iterator[datetime]:
        """The store's lock held, the clock read once, an outage enforced."""
        with self._lock:
            if self._down:
                raise LeasesUnavailable("the in-memory lease store was taken down (go_down)")
            yield self.clock.now()


def _after(now: datetime, seconds: float) -> datetime:
    return now + timedelta(seconds=seconds)
