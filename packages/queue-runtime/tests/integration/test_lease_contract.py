"""The LeaseStore contract: Redis and the in-memory store answer alike.

One test body, a parametrised ``backend`` fixture: the memory store, one Redis, and a
local Redis Cluster (3 masters, 3 replicas, started by the session: keys hash-tagged
by prefix, so every script touches one slot). Time: the memory store runs
on a pinned clock that ``backend.elapse`` moves; Redis keeps its own time, so
there ``elapse`` does nothing and the test waits on the condition instead.
Redis-specific details (PTTLs, keys set by hand) stay in ``test_leases.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from enum import StrEnum

import pytest
import redis

from queue_runtime.errors import LeasesUnavailable
from queue_runtime.redis import RedisLeaseStore
from queue_runtime.store import LeaseStore, Renewal
from queue_runtime.testing import (
    ManualClock,
    MemoryLeaseStore,
    delete_redis_prefix,
    free_port,
    redis_test_url,
    wait_until,
)
from tests.integration.redis_cluster_servers import RedisClusterServers, redis_cluster

__all__ = ["redis_cluster"]  # the session's cluster fixture, used by the CLUSTER backend


class Backend(StrEnum):
    REDIS = "redis"
    MEMORY = "memory"
    CLUSTER = "cluster"


@dataclass(frozen=True)
class LeaseBackend:
    leases: LeaseStore
    elapse: Callable[[float], None]  # let this much time pass (memory: move the clock)
    flush: Callable[[], None]  # lose every lease and the epoch, as FLUSHALL or a restart
    unreachable: Callable[[], LeaseStore]  # a store whose every call fails


def _memory() -> LeaseBackend:
    clock = ManualClock()
    leases = MemoryLeaseStore(clock)

    def elapse(seconds: float) -> None:
        clock.advance(seconds)

    def down() -> LeaseStore:
        leases.go_down()
        return leases

    return LeaseBackend(leases, elapse, leases.flush, down)


def _redis(client: redis.Redis, prefix: str) -> LeaseBackend:
    def dead() -> LeaseStore:
        return RedisLeaseStore.from_url(f"redis://127.0.0.1:{free_port()}/0", "qrtest:down")

    def flush() -> None:
        delete_redis_prefix(redis_test_url(), prefix)

    return LeaseBackend(RedisLeaseStore(client, prefix), lambda _: None, flush, dead)


def _cluster(servers: RedisClusterServers, prefix: str) -> Iterator[LeaseBackend]:
    client = servers.client()

    def dead() -> LeaseStore:
        return RedisLeaseStore.from_url(f"redis+cluster://127.0.0.1:{free_port()}/", "qrtest:down")

    def flush() -> None:  # the prefix's keys only (one slot, so one node holds them all)
        keys = list(client.scan_iter(match=f"{{{prefix}}}:*"))
        if keys:
            client.delete(*keys)

    try:
        yield LeaseBackend(RedisLeaseStore(client, prefix), lambda _: None, flush, dead)
    finally:
        flush()
        client.close()


# The cluster backend's tests are the cluster suite (tests/suites.py), not the fast one.
CLUSTER_MARKED = [
    pytest.param(b, marks=pytest.mark.cluster) if b is Backend.CLUSTER else b for b in Backend
]


@pytest.fixture(params=CLUSTER_MARKED)
def backend(request: pytest.FixtureRequest, unique_name: str) -> Iterator[LeaseBackend]:
    if request.param is Backend.MEMORY:
        yield _memory()
        return
    if request.param is Backend.CLUSTER:
        yield from _cluster(request.getfixturevalue("redis_cluster"), f"qrtest:{unique_name}")
        return
    client: redis.Redis = request.getfixturevalue("redis_client")
    prefix = f"qrtest:{unique_name}"
    yield _redis(client, prefix)
    delete_redis_prefix(redis_test_url(), prefix)


def expired(backend: LeaseBackend, seconds: float, condition: Callable[[], bool]) -> None:
    backend.elapse(seconds)
    wait_until(condition, timeout=5, message="the ttl to pass")


def test_acquire_is_exclusive_per_token(backend: LeaseBackend) -> None:
    leases = backend.leases
    assert leases.acquire(["1:1", "2:1"], "w1", ttl=5) == [True, True]
    assert leases.acquire(["1:1", "3:1"], "w2", ttl=5) == [False, True]
    assert leases.acquire(["1:1"], "w1", ttl=5) == [True]  # our own: refreshed


def test_lease_expires_without_heartbeat(backend: LeaseBackend) -> None:
    leases = backend.leases
    leases.acquire(["7:1"], "w1", ttl=30)
    leases.acquire(["8:1"], "w1", ttl=0.2)
    assert leases.alive(["8:1"]) == [True]
    expired(backend, 0.3, lambda: leases.alive(["8:1"]) == [False])
    assert leases.alive(["7:1"]) == [True]
    assert leases.acquire(["8:1"], "w2", ttl=5) == [True]  # free for the next claimer


def test_heartbeat_renews_reasserts_and_reports_lost(backend: LeaseBackend) -> None:
    leases = backend.leases
    leases.acquire(["1:1"], "w1", ttl=30)
    leases.acquire(["2:1"], "w1", ttl=0.2)
    leases.acquire(["3:1"], "w2", ttl=30)  # another worker holds it
    expired(backend, 0.3, lambda: leases.alive(["2:1"]) == [False])
    report = leases.heartbeat(["1:1", "2:1", "3:1"], "w1", ttl=30)
    assert report == [Renewal.RENEWED, Renewal.REASSERTED, Renewal.LOST]
    assert leases.alive(["1:1", "2:1", "3:1"]) == [True, True, True]
    assert leases.acquire(["2:1", "3:1"], "w2", ttl=5) == [False, True]  # 2:1 is w1's again
    assert leases.renew(["1:1", "3:1"], "w1", ttl=30) == [True, False]


def test_heartbeat_keeps_a_lease_past_its_first_ttl(backend: LeaseBackend) -> None:
    leases = backend.leases
    leases.acquire(["1:1"], "w1", ttl=0.5)
    assert leases.heartbeat(["1:1"], "w1", ttl=30) == [Renewal.RENEWED]
    backend.elapse(1.0)
    assert leases.alive(["1:1"]) == [True]


def test_release_only_drops_our_own_leases(backend: LeaseBackend) -> None:
    leases = backend.leases
    leases.acquire(["1:1"], "w1", ttl=5)
    leases.acquire(["2:1"], "w2", ttl=5)
    leases.release(["1:1", "2:1"], "w1")
    assert leases.alive(["1:1", "2:1"]) == [False, True]


def test_empty_batches_are_empty(backend: LeaseBackend) -> None:
    leases = backend.leases
    assert leases.acquire([], "w1", ttl=5) == []
    assert leases.heartbeat([], "w1", ttl=5) == []
    assert leases.alive([]) == []
    assert leases.tenant_renew([], ttl=5) == 0
    leases.release([], "w1")
    leases.tenant_release_many([])


def test_epoch_is_stable_until_the_dataset_is_lost(backend: LeaseBackend) -> None:
    leases = backend.leases
    leases.acquire(["1:1"], "w1", ttl=30)
    first = leases.epoch()
    assert leases.epoch() == first and leases.ping()
    backend.flush()
    assert leases.epoch() != first
    assert leases.alive(["1:1"]) == [False]


def test_tenant_cap_refuses_beyond_cap_and_frees_on_release(backend: LeaseBackend) -> None:
    leases = backend.leases
    assert leases.tenant_acquire("acme", 1, cap=2, ttl=5, settle=0)
    assert leases.tenant_acquire("acme", 2, cap=2, ttl=5, settle=0)
    assert not leases.tenant_acquire("acme", 3, cap=2, ttl=5, settle=0)
    assert leases.tenant_acquire("acme", 1, cap=2, ttl=5, settle=0)  # already a member: refreshed
    assert leases.tenant_acquire("other", 3, cap=2, ttl=5, settle=0)  # caps are per tenant
    leases.tenant_release("acme", 1)
    assert leases.tenant_acquire("acme", 3, cap=2, ttl=5, settle=0)
    assert leases.tenant_running("acme") == 2
    leases.tenant_release_many([("acme", 2), ("acme", 3), ("other", 3)])
    assert (leases.tenant_running("acme"), leases.tenant_running("other")) == (0, 0)


def test_expired_tenant_tokens_free_their_slot(backend: LeaseBackend) -> None:
    leases = backend.leases
    assert leases.tenant_acquire("acme", 1, cap=1, ttl=0.2, settle=0)
    assert not leases.tenant_acquire("acme", 2, cap=1, ttl=5, settle=0)
    expired(backend, 0.3, lambda: leases.tenant_running("acme") == 0)
    assert leases.tenant_acquire("acme", 2, cap=1, ttl=5, settle=0)


def test_tenant_renew_extends_and_readds_missing_tokens(backend: LeaseBackend) -> None:
    leases = backend.leases
    leases.tenant_acquire("acme", 1, cap=2, ttl=1, settle=0)
    assert leases.tenant_renew([("acme", 1), ("beta", 9)], ttl=30) == 1
    backend.elapse(2)
    assert leases.tenant_running("acme") == 1
    assert leases.tenant_running("beta") == 1


def test_no_tenant_token_while_a_new_dataset_settles(backend: LeaseBackend) -> None:
    # First use (or after a flush/restart): running jobs may not have re-added
    # their tokens yet, so new ones wait out the settle time.
    leases = backend.leases
    assert not leases.tenant_acquire("acme", 1, cap=5, ttl=5, settle=0.3)
    backend.elapse(0.4)
    wait_until(
        lambda: leases.tenant_acquire("acme", 1, cap=5, ttl=5, settle=0.3),
        timeout=5,
        message="the settle time to pass",
    )
    backend.flush()
    assert not leases.tenant_acquire("acme", 2, cap=5, ttl=5, settle=0.3)


def test_unreachable_store_raises_leases_unavailable(backend: LeaseBackend) -> None:
    store = backend.unreachable()
    with pytest.raises(LeasesUnavailable):
        store.acquire(["1:1"], "w1", ttl=5)
    with pytest.raises(LeasesUnavailable):
        store.epoch()
