"""Redis side of the runtime: job leases, the dataset epoch, tenant tokens.

Keys (``p`` is ``Settings.redis_prefix``):

- ``{p}:lease:{job_id}:{attempt}``: the lease of one fencing token, value = worker
  id, ``PX`` = lease ttl. Renewed by its worker's heartbeat; a missing key is
  re-asserted (Redis was flushed or restarted), a key held by someone else is lost.
- ``{p}:epoch``: ``<random>:<creation ms>``, set once per dataset. When it
  disappears or changes, leases and tenant tokens may have vanished without
  their workers dying: the reaper waits a lease ttl plus one heartbeat before
  rescuing anything (``worker._reaper``), and no tenant token is handed out
  while the epoch is younger than that (running jobs re-add theirs first).
- ``{p}:tenant:{tenant}``: ZSET of the jobs of a tenant currently running,
  score = expiry in ms on the Redis server clock. At most ``cap`` live members.

Every state transition is one Lua script in ``queue_runtime/lua/``. Redis
failures surface as :class:`LeasesUnavailable` (the worker stops claiming and
keeps running what it has until Redis answers again).
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from importlib import resources
from typing import Any

import redis

from queue_runtime.errors import LeasesUnavailable
from queue_runtime.store import Renewal

_RENEWAL_CODES = {1: Renewal.RENEWED, 2: Renewal.REASSERTED, 0: Renewal.LOST}


@cache
def _lua(name: str) -> str:
    return resources.files("queue_runtime").joinpath("lua", f"{name}.lua").read_text()


def _ms(seconds: float) -> int:
    return max(1, int(seconds * 1000))


__all__ = ["LeasesUnavailable", "RedisLeaseStore", "Renewal"]


class RedisLeaseStore:
    """The :class:`queue_runtime.store.LeaseStore` seam, on Redis."""

    def __init__(self, client: redis.Redis, prefix: str) -> None:
        self._client = client
        self._prefix = prefix
        self._scripts = {
            name: client.register_script(_lua(name))
            for name in (
                "lease_acquire",
                "lease_renew",
                "lease_release",
                "epoch",
                "tenant_acquire",
                "tenant_renew",
            )
        }

    @classmethod
    def from_url(cls, url: str, prefix: str) -> RedisLeaseStore:
        # Short timeouts: a dead Redis must be noticed within a heartbeat period.
        client = redis.Redis.from_url(url, socket_timeout=2.0, socket_connect_timeout=2.0)
        return cls(client, prefix)

    def close(self) -> None:
        self._client.close()

    def ping(self) -> bool:
        with _translated():
            return bool(self._client.ping())

    def lease_key(self, token: str) -> str:
        return f"{self._prefix}:lease:{token}"

    @property
    def epoch_key(self) -> str:
        return f"{self._prefix}:epoch"

    def tenant_key(self, tenant: str) -> str:
        return f"{self._prefix}:tenant:{tenant}"

    def acquire(self, tokens: list[str], worker_id: str, ttl: float) -> list[bool]:
        """Take the leases of claimed tokens; False where another worker holds one."""
        codes = self._run(
            "lease_acquire", [self.lease_key(t) for t in tokens], [worker_id, _ms(ttl)]
        )
        return [bool(code) for code in codes]

    def heartbeat(self, tokens: list[str], worker_id: str, ttl: float) -> list[Renewal]:
        """Renew all leases of a worker in one call, re-asserting missing keys."""
        codes = self._run("lease_renew", [self.lease_key(t) for t in tokens], [worker_id, _ms(ttl)])
        return [_RENEWAL_CODES[int(code)] for code in codes]

    def renew(self, tokens: list[str], worker_id: str, ttl: float) -> list[bool]:
        """Protocol form of :meth:`heartbeat`: True unless the lease was lost."""
        return [r is not Renewal.LOST for r in self.heartbeat(tokens, worker_id, ttl)]

    def release(self, tokens: list[str], worker_id: str) -> None:
        self._run("lease_release", [self.lease_key(t) for t in tokens], [worker_id])

    def alive(self, tokens: list[str]) -> list[bool]:
        if not tokens:
            return []
        with _translated():
            values = self._client.mget([self.lease_key(t) for t in tokens])
        return [value is not None for value in values]

    def epoch(self) -> str:
        """The dataset's epoch; a flush or restart makes a new one appear."""
        value = self._run("epoch", [self.epoch_key], [secrets.token_hex(8)])
        return value.decode() if isinstance(value, bytes) else str(value)

    def tenant_acquire(
        self, tenant: str, job_id: int, cap: int, ttl: float, settle: float | None = None
    ) -> bool:
        """Take a token of ``tenant`` for ``job_id``; False when at the cap or settling.

        ``settle`` (default: ``ttl`` plus one heartbeat, ``ttl / 3``): for that long
        after the epoch appears (first use, flush, restart) no token is handed
        out, so running jobs re-add theirs before anyone can exceed the cap.
        """
        settle = ttl * 4 / 3 if settle is None else settle
        keys = [self.tenant_key(tenant), self.epoch_key]
        args = [job_id, cap, _ms(ttl), int(settle * 1000), secrets.token_hex(8)]
        return int(self._run("tenant_acquire", keys, args)) == 1

    def tenant_renew(self, held: list[tuple[str, int]], ttl: float) -> int:
        """Extend the tokens of ``(tenant, job_id)`` pairs; returns how many were re-added."""
        if not held:
            return 0
        keys = [self.tenant_key(tenant) for tenant, _ in held]
        return int(self._run("tenant_renew", keys, [_ms(ttl), *(job_id for _, job_id in held)]))

    def tenant_release(self, tenant: str, job_id: int) -> None:
        with _translated():
            self._client.zrem(self.tenant_key(tenant), job_id)

    def tenant_release_many(self, held: list[tuple[str, int]]) -> None:
        """Drop the tokens of ``(tenant, job_id)`` pairs in one round trip."""
        if not held:
            return
        with _translated():
            pipe = self._client.pipeline(transaction=False)
            for tenant, job_id in held:
                pipe.zrem(self.tenant_key(tenant), job_id)
            pipe.execute()

    def tenant_running(self, tenant: str) -> int:
        """Live tokens of a tenant (expired members are not counted)."""
        with _translated():
            return int(
                self._client.zcount(self.tenant_key(tenant), "(" + str(self._now_ms()), "+inf")
            )

    def _now_ms(self) -> int:
        seconds, micros = self._client.time()
        return int(seconds) * 1000 + int(micros) // 1000

    def _run(self, script: str, keys: list[str], args: list[Any]) -> Any:
        if not keys:
            return []
        with _translated():
            return self._scripts[script](keys=keys, args=args)


@contextmanager
def _translated() -> Iterator[None]:
    try:
        yield
    except redis.RedisError as exc:
        # Connection loss, timeouts, LOADING after a restart, READONLY after a failover:
        # all mean "leases cannot be trusted right now"; the worker pauses claiming.
        raise LeasesUnavailable(f"{type(exc).__name__}: {exc}") from exc
