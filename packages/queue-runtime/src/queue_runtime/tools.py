"""The door from the tools (``migrator plan --check``, ``migrator loadtest``) into the runtime.

What the tools read of a runtime's state beyond its public API, typed by the
store protocols and never by the implementations behind them, so the tools
need not know ``queue_runtime.pg`` or ``queue_runtime.redis``:

- :func:`read_only`: the gate store and the inspector on read-only connections
  of their own (no pool), with a connect timeout: certifications, rollouts,
  keys and shadow evidence; job history, schema revisions, missing tables;
- :func:`lease_round_trip`: a real acquire / alive / release of a throwaway
  token through the configured lease store, the proof that leasing works.

The load test's execution ledger and chaos probe are test helpers:
:mod:`queue_runtime.testing` (``ExecutionLedger``, ``PgLedger``).
"""

from __future__ import annotations

from dataclasses import dataclass

from queue_runtime.config import Settings
from queue_runtime.errors import LeasesUnavailable
from queue_runtime.pg.inspect import ReadOnly, read_only
from queue_runtime.redis import RedisLeaseStore

__all__ = ["LeaseRoundTrip", "ReadOnly", "lease_round_trip", "read_only"]


@dataclass(frozen=True, slots=True)
class LeaseRoundTrip:
    """What the lease store answered for one token: taken, alive, then alive after release."""

    acquired: list[bool]
    alive: list[bool]
    after_release: list[bool]

    @property
    def ok(self) -> bool:
        return (self.acquired, self.alive, self.after_release) == ([True], [True], [False])


def lease_round_trip(settings: Settings, token: str, worker: str, ttl: float) -> LeaseRoundTrip:
    """Acquire, check and release ``token`` for ``worker`` on the Redis ``settings`` configure,
    under its prefix; the key lives at most ``ttl`` seconds. Raises ``LeasesUnavailable``
    when no Redis is configured or it does not answer."""
    if not settings.redis_url:
        raise LeasesUnavailable("no redis_url configured")
    store = RedisLeaseStore.from_url(
        settings.redis_url, settings.redis_prefix, cluster=settings.redis_cluster
    )
    try:
        acquired = store.acquire([token], worker, ttl=ttl)
        alive = store.alive([token])
        store.release([token], worker)
        return LeaseRoundTrip(acquired, alive, store.alive([token]))
    finally:
        store.close()
