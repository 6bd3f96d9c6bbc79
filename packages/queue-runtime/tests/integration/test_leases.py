"""RedisLeaseStore against a real Redis: leases, re-assertion, epoch, tenant caps."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import redis

from queue_runtime.errors import LeasesUnavailable
from queue_runtime.redis import RedisLeaseStore
from queue_runtime.store import Renewal
from tests.support import free_port, wait_until

pytestmark = pytest.mark.redis


@pytest.fixture
def leases(redis_client: redis.Redis, unique_name: str) -> Iterator[RedisLeaseStore]:
    prefix = f"qrtest:{unique_name}"
    yield RedisLeaseStore(redis_client, prefix)
    keys = list(redis_client.scan_iter(match=f"{prefix}:*"))
    if keys:
        redis_client.delete(*keys)


def test_acquire_is_exclusive_per_token(leases: RedisLeaseStore) -> None:
    assert leases.acquire(["1:1", "2:1"], "w1", ttl=5) == [True, True]
    assert leases.acquire(["1:1", "3:1"], "w2", ttl=5) == [False, True]
    assert leases.acquire(["1:1"], "w1", ttl=5) == [True]  # our own: refreshed


def test_lease_expires_without_heartbeat(
    leases: RedisLeaseStore, redis_client: redis.Redis
) -> None:
    leases.acquire(["7:1"], "w1", ttl=5)
    assert 0 < redis_client.pttl(leases.lease_key("7:1")) <= 5000
    leases.acquire(["8:1"], "w1", ttl=0.2)
    assert leases.alive(["8:1"]) == [True]
    wait_until(lambda: leases.alive(["8:1"]) == [False], timeout=5, message="lease expiry")
    assert leases.alive(["7:1"]) == [True]


def test_heartbeat_renews_reasserts_and_reports_lost(
    leases: RedisLeaseStore, redis_client: redis.Redis
) -> None:
    leases.acquire(["1:1", "2:1", "3:1"], "w1", ttl=1)
    redis_client.delete(leases.lease_key("2:1"))  # as after a FLUSHALL
    redis_client.set(leases.lease_key("3:1"), "w2")  # another worker took it
    report = leases.heartbeat(["1:1", "2:1", "3:1"], "w1", ttl=10)
    assert report == [Renewal.RENEWED, Renewal.REASSERTED, Renewal.LOST]
    assert redis_client.pttl(leases.lease_key("1:1")) > 5000
    assert redis_client.get(leases.lease_key("2:1")) == b"w1"
    assert redis_client.get(leases.lease_key("3:1")) == b"w2"
    assert leases.renew(["1:1", "3:1"], "w1", ttl=10) == [True, False]


def test_release_only_drops_our_own_leases(leases: RedisLeaseStore) -> None:
    leases.acquire(["1:1"], "w1", ttl=5)
    leases.acquire(["2:1"], "w2", ttl=5)
    leases.release(["1:1", "2:1"], "w1")
    assert leases.alive(["1:1", "2:1"]) == [False, True]


def test_empty_batches_make_no_call(leases: RedisLeaseStore) -> None:
    assert leases.acquire([], "w1", ttl=5) == []
    assert leases.heartbeat([], "w1", ttl=5) == []
    assert leases.alive([]) == []
    assert leases.tenant_renew([], ttl=5) == 0


def test_epoch_is_stable_until_the_key_disappears(
    leases: RedisLeaseStore, redis_client: redis.Redis, unique_name: str
) -> None:
    first = leases.epoch()
    assert leases.epoch() == first
    redis_client.delete(f"qrtest:{unique_name}:epoch")
    assert leases.epoch() != first


def test_tenant_cap_refuses_beyond_cap_and_frees_on_release(leases: RedisLeaseStore) -> None:
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


def test_expired_tenant_tokens_free_their_slot(
    leases: RedisLeaseStore, redis_client: redis.Redis
) -> None:
    leases.tenant_acquire("acme", 1, cap=1, ttl=5, settle=0)
    # A dead worker's token: its score (expiry) is in the past.
    redis_client.zadd(leases.tenant_key("acme"), {"1": 0})
    assert leases.tenant_running("acme") == 0
    assert leases.tenant_acquire("acme", 2, cap=1, ttl=5, settle=0)


def test_tenant_renew_extends_and_readds_missing_tokens(
    leases: RedisLeaseStore, redis_client: redis.Redis
) -> None:
    leases.tenant_acquire("acme", 1, cap=2, ttl=1, settle=0)
    redis_client.delete(leases.tenant_key("beta"))
    assert leases.tenant_renew([("acme", 1), ("beta", 9)], ttl=10) == 1
    assert leases.tenant_running("acme") == 1
    assert leases.tenant_running("beta") == 1
    assert redis_client.pttl(leases.tenant_key("acme")) > 5000


def test_unreachable_redis_raises_leases_unavailable() -> None:
    store = RedisLeaseStore.from_url(f"redis://127.0.0.1:{free_port()}/0", "qrtest:down")
    with pytest.raises(LeasesUnavailable):
        store.acquire(["1:1"], "w1", ttl=5)
    with pytest.raises(LeasesUnavailable):
        store.epoch()


def test_no_tenant_token_while_a_new_dataset_settles(
    leases: RedisLeaseStore, redis_client: redis.Redis
) -> None:
    # First use (or after a flush/restart): running jobs may not have re-added
    # their tokens yet, so new ones wait out the settle time.
    assert not leases.tenant_acquire("acme", 1, cap=5, ttl=5, settle=0.3)
    wait_until(
        lambda: leases.tenant_acquire("acme", 1, cap=5, ttl=5, settle=0.3),
        timeout=5,
        message="the settle time to pass",
    )
    redis_client.delete(leases.epoch_key)  # as after FLUSHALL
    assert not leases.tenant_acquire("acme", 2, cap=5, ttl=5, settle=0.3)
