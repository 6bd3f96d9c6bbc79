"""Leases, heartbeats, the epoch and tenant caps on a local Redis Cluster (3 masters, 3 replicas).

The lease-store contract runs on the cluster too (``test_lease_contract.py``);
here: the key space is one slot per prefix, a failover makes a new epoch, and
real workers on PostgreSQL drain a queue while the master holding the slot is
SIGKILLed: every job runs and completes exactly once, none is lost. Each test
that kills a server starts a cluster of its own (``fresh_redis_cluster``).
"""

from __future__ import annotations

import secrets
import socket
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import psycopg
import pytest
import redis
from psycopg import sql
from redis.crc import key_slot

from queue_runtime import JobStatus, Settings, configure
from queue_runtime.errors import LeasesUnavailable
from queue_runtime.redis import RedisLeaseStore
from queue_runtime.runtime import Runtime
from queue_runtime.store import Renewal, WorkerInfo
from queue_runtime.testing import require, wait_until
from tests.integration import fault_app
from tests.integration.redis_cluster_servers import (
    HOST,
    RedisClusterServers,
    cluster_problem,
    fresh_redis_cluster,
    redis_cluster,
)
from tests.integration.workers import Spawner, db_now, executions, spawning

__all__ = ["fresh_redis_cluster", "redis_cluster"]  # fixtures
pytestmark = pytest.mark.cluster  # some tests start a cluster of their own, without the fixtures
LEASE_TTL = 2.0  # shorter than a failover (node timeout 2 s + election): leases expire in it


@pytest.fixture
def spawner(tmp_path: Path) -> Iterator[Spawner]:
    (tmp_path / "workers").mkdir()
    yield from spawning(tmp_path / "workers")


def _worker(worker_id: str) -> WorkerInfo:
    now = datetime.now(UTC)
    return WorkerInfo(worker_id, "host-a", 1, ("batch",), 0, now, now)


def test_a_node_whose_port_is_taken_before_it_binds_starts_on_another(tmp_path: Path) -> None:
    """The fixture's own race: a chosen port taken before its server binds (CI saw one
    exit and the start wait 60 s for it). The node starts again elsewhere; the cluster forms."""
    require(cluster_problem())
    (tmp_path / "cluster").mkdir()
    servers = RedisClusterServers(tmp_path / "cluster")
    taken = servers.ports[0]
    with socket.socket() as squatter:
        squatter.bind((HOST, taken))
        squatter.listen()
        try:
            servers.start()
            assert taken not in servers.ports and len(set(servers.ports)) == 6
            assert servers.healthy()
        finally:
            servers.stop()


def test_every_key_of_a_prefix_is_in_one_slot(redis_cluster: RedisClusterServers) -> None:
    prefix = f"qrtest:{secrets.token_hex(4)}"
    client = redis_cluster.client()
    leases = RedisLeaseStore(client, prefix)
    try:
        assert leases.acquire(["1:1", "2:1", "3:1"], "w1", ttl=30) == [True] * 3
        assert leases.tenant_acquire("acme", 1, cap=2, ttl=30, settle=0)
        assert leases.tenant_acquire("beta", 2, cap=2, ttl=30, settle=0)
        leases.announce(_worker("w1"), ttl=30)
        keys = [k.decode() for k in client.scan_iter(match=f"{{{prefix}}}:*")]
        assert len(keys) == 8  # 3 leases, 2 tenants, the epoch, the presence hash and index
        assert {key_slot(k.encode()) for k in keys} == {key_slot(prefix.encode())}
        assert [w.id for w in leases.workers()] == ["w1"]
        assert leases.ping()
    finally:
        client.delete(*client.scan_iter(match=f"{{{prefix}}}:*"))
        client.close()
    single = RedisLeaseStore(redis.Redis(), "qr")  # never connects: key names only
    assert (single.lease_key("1:1"), single.epoch_key) == ("qr:lease:1:1", "qr:epoch")


def test_cluster_url_connects_on_first_use_and_fails_as_leases_unavailable(
    redis_cluster: RedisClusterServers,
) -> None:
    leases = RedisLeaseStore.from_url(redis_cluster.url, "qrtest:url")
    try:
        assert leases.ping() and leases.alive(["9:9"]) == [False]
    finally:
        leases.close()
    plain = redis_cluster.url.replace("redis+cluster://", "redis://").split(",")[0] + "/0"
    leases = RedisLeaseStore.from_url(plain, "qrtest:url", cluster=True)  # redis_cluster = true
    assert leases.epoch_key == "{qrtest:url}:epoch"
    leases.close()
    dead = RedisLeaseStore.from_url("redis+cluster://127.0.0.1:1/", "qrtest:down")  # no network yet
    with pytest.raises(LeasesUnavailable, match=r"Redis Cluster at 127\.0\.0\.1:1"):
        dead.epoch()


def test_a_failover_makes_a_new_epoch_and_tenants_settle(
    fresh_redis_cluster: RedisClusterServers,
) -> None:
    cluster, prefix = fresh_redis_cluster, "qrtest:failover"
    leases = RedisLeaseStore.from_url(cluster.url, prefix)
    try:
        before = leases.epoch()
        assert leases.acquire(["1:1"], "w1", ttl=30) == [True]
        master = cluster.master_of(leases.epoch_key)
        replica = cluster.replica_of(master)
        assert before.endswith(":" + master.id)
        wait_until(lambda: _replicated(cluster, replica.port, leases.epoch_key), 10, 0.05)
        cluster.kill(master.port)
        wait_until(
            lambda: cluster.healthy() and cluster.master_of(leases.epoch_key).port == replica.port,
            timeout=60,
            interval=0.2,
            message="the replica to take over the slot",
        )
        after = wait_until(lambda: _answer(leases.epoch), 30, 0.2, "the new master to answer")
        assert after and after != before and after.endswith(":" + replica.id)
        assert leases.epoch() == after  # stable again on the new master
        # The new master may lack tokens its predecessor handed out: none for a settle time.
        assert not leases.tenant_acquire("acme", 1, cap=5, ttl=30, settle=30)
        assert leases.heartbeat(["1:1"], "w1", ttl=30) == [Renewal.RENEWED]  # replicated
    finally:
        leases.close()


@pytest.mark.slow
def test_workers_drain_through_a_master_failover_and_run_each_job_once(
    settings: Settings, spawner: Spawner, fresh_redis_cluster: RedisClusterServers
) -> None:
    cluster = fresh_redis_cluster
    rt = _use(settings, cluster)
    slow = [fault_app.work.enqueue(n, seconds=8.0).id for n in range(4)]
    quick = [fault_app.work.enqueue(n, seconds=0.2).id for n in range(150)]
    for _ in range(3):
        spawner.start(rt.settings, "--pool", "batch", "--concurrency", "4")
    wait_until(
        lambda: _running_longer_than_a_lease(rt.settings, slow) and _ran(rt.settings) >= 30,
        timeout=60,
        message="the slow jobs to be reaper-eligible and the quick ones flowing",
    )
    epoch_key = f"{{{rt.settings.redis_prefix}}}:epoch"
    master = cluster.master_of(epoch_key)
    replica = cluster.replica_of(master)
    cluster.kill(master.port)  # SIGKILL the master of the slot, by its PID
    killed = time.monotonic()
    wait_until(
        lambda: cluster.healthy() and cluster.master_of(epoch_key).port == replica.port,
        timeout=60,
        interval=0.2,
        message="the replica to take over the slot",
    )
    took = time.monotonic() - killed
    more = [fault_app.work.enqueue(n, seconds=0.05).id for n in range(30)]
    ids = slow + quick + more
    wait_until(lambda: _all_succeeded(rt, ids), timeout=120, interval=0.5, message="all jobs")

    ran: dict[int, int] = {}
    for e in executions(rt.settings):
        ran[e.job_id] = ran.get(e.job_id, 0) + 1
    twice = {job_id: n for job_id, n in ran.items() if n > 1}
    logs = spawner.logs()
    assert twice == {}, f"jobs executed more than once across the failover: {twice}\n{logs}"
    assert sorted(ran) == sorted(ids)  # none lost, nothing else ran
    assert _successes(rt) == dict.fromkeys(ids, 1)
    # The failover reached the workers: the slow jobs' leases (LEASE_TTL, shorter than any
    # failover) expired while no master took writes, and the first heartbeat on the new
    # master re-asserted them. Whether a heartbeat also *raised* in the window is timing:
    # redis-py's cluster client retries a command through the promotion (re-reading the slot
    # map), so one sent then may arrive late instead of failing; asserting "Redis
    # unavailable" was a race (CI saw only the re-assertion once, 2026-12-04).
    assert "re-asserted" in logs, logs
    # Deterministic on a cluster: the epoch names its node, so the promoted replica makes a
    # new one, and the reapers wait for the heartbeats before any rescue.
    assert "Redis epoch changed" in logs, logs
    print(f"failover: replica promoted {took:.1f}s after the SIGKILL; {len(ids)} jobs, each once")


def _use(settings: Settings, cluster: RedisClusterServers) -> Runtime:
    tuned = settings.model_copy(
        update={
            "redis_url": cluster.url,
            "lease_ttl": LEASE_TTL,
            "poll_interval": 0.1,
            "shutdown_grace": 5.0,
        }
    )
    fault_app.create_tables(tuned.database_url or "", tuned.schema_name)
    return configure(tuned)


def _replicated(cluster: RedisClusterServers, port: int, key: str) -> bool:
    with redis.Redis(host="127.0.0.1", port=port) as client:
        client.execute_command("READONLY")
        return bool(client.exists(key))


def _answer(call: Callable[[], str]) -> str | None:
    try:
        return call()
    except LeasesUnavailable:
        return None


def _ran(settings: Settings) -> int:
    return len(executions(settings))


def _running_longer_than_a_lease(settings: Settings, ids: list[int]) -> bool:
    started = {e.job_id: e.started_at for e in executions(settings) if e.job_id in ids}
    if len(started) < len(ids):
        return False
    return db_now(settings) - max(started.values()) > timedelta(seconds=LEASE_TTL + 0.5)


def _all_succeeded(rt: Runtime, ids: list[int]) -> bool:
    return all(getattr(rt.store.get(i), "status", None) is JobStatus.SUCCEEDED for i in ids)


def _successes(rt: Runtime) -> dict[int, int]:
    query = sql.SQL("SELECT id, count(*) FROM {}.job_history GROUP BY id").format(
        sql.Identifier(rt.settings.schema_name)
    )
    with psycopg.connect(rt.settings.database_url or "") as conn:
        return {int(i): int(n) for i, n in conn.execute(query).fetchall()}
