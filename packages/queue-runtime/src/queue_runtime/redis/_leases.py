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
- ``{p}:worker:{worker_id}``: HASH, a live worker's presence (host, pid, pools
  as JSON, running, started_at / seen_at in epoch ms), ``PX`` = lease ttl; and
  ``{p}:workers``: ZSET of worker ids, score = presence expiry in ms (worker
  clock), so ``queue-runtime workers`` lists them without a SCAN. Written by
  the heartbeat in one pipelined round trip per beat (``announce``).

On a Redis Cluster (``redis+cluster://host:port,...`` or ``redis_cluster = true``)
every key starts with the prefix in braces, ``{qr}:lease:...``: a hash tag, so all
keys of one prefix live in one slot and every script (a heartbeat renews the
leases of many jobs, ``tenant_acquire`` reads the epoch) touches that slot only.
The price: all of a deployment's lease traffic is on one master (its replica
takes over when it fails); a second deployment with another prefix lands on
another slot. On a cluster the epoch also names the node that made it, so a
failover (whose new master may lack writes the old one acknowledged) makes a new
epoch, exactly like a restart. On a single Redis the keys have no braces.

Every state transition is one Lua script in ``queue_runtime/redis/lua/``. Redis
failures surface as :class:`LeasesUnavailable` (the worker stops claiming and
keeps running what it has until Redis answers again).
"""

from __future__ import annotations

import json
import secrets
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cache
from importlib import resources
from typing import Any

import redis
from redis.cluster import ClusterNode, RedisCluster
from redis.commands.core import Script
from redis.exceptions import RedisClusterException

from queue_runtime._redis_url import ClusterAddress, is_cluster_url, parse_cluster_url
from queue_runtime.errors import ConfigError, LeasesUnavailable, RedisDatabaseOutOfRange
from queue_runtime.store import Renewal, WorkerInfo

_RENEWAL_CODES = {1: Renewal.RENEWED, 2: Renewal.REASSERTED, 0: Renewal.LOST}
_TIMEOUT = 2.0  # seconds: a dead Redis must be noticed within a heartbeat period
_SCRIPTS = (
    "lease_acquire",
    "lease_renew",
    "lease_release",
    "epoch",
    "tenant_acquire",
    "tenant_renew",
    "tenant_count",
)
Client = redis.Redis | RedisCluster


@cache
def _lua(name: str) -> str:
    return resources.files("queue_runtime.redis").joinpath("lua", f"{name}.lua").read_text()


def _ms(seconds: float) -> int:
    return max(1, int(seconds * 1000))


class RedisLeaseStore:
    """The :class:`queue_runtime.store.LeaseStore` seam, on Redis."""

    def __init__(self, client: Client | ClusterAddress, prefix: str) -> None:
        """On ``client``, or on the cluster at ``client`` (connected on first use, as
        ``redis.Redis`` connects: building a store never touches the network)."""
        self._prefix = prefix
        self._address = client if isinstance(client, ClusterAddress) else None
        self._link = None if isinstance(client, ClusterAddress) else _Link.of(client)
        self._link_lock = threading.Lock()
        self._cluster = not isinstance(client, redis.Redis)
        if self._cluster and ("{" in prefix or "}" in prefix):
            raise ConfigError(f"redis_prefix {prefix!r}: no braces on a Redis Cluster")
        # The key space: on a cluster the prefix is the hash tag of every key (one slot).
        self._space = f"{{{prefix}}}" if self._cluster else prefix
        self._flag = ["cluster"] if self._cluster else []  # what the epoch scripts are told

    @classmethod
    def from_url(cls, url: str, prefix: str, *, cluster: bool = False) -> RedisLeaseStore:
        """A store on ``url``: a Redis Cluster for ``redis+cluster://`` or with ``cluster``."""
        if cluster or is_cluster_url(url):
            return cls(parse_cluster_url(url), prefix)
        client = redis.Redis.from_url(url, socket_timeout=_TIMEOUT, socket_connect_timeout=_TIMEOUT)
        return cls(client, prefix)

    def close(self) -> None:
        if self._link is not None:
            self._link.client.close()

    @property
    def _client(self) -> Client:
        """The client; on a cluster, connected now if it was not (raises RedisError)."""
        link = self._link
        if link is None:
            with self._link_lock:
                if self._link is None:
                    assert self._address is not None  # set whenever no link was given
                    self._link = _Link.of(_cluster_client(self._address))
                link = self._link
        return link.client

    def ping(self) -> bool:
        with _translated():
            if self._cluster:  # ask the master of our slot, not whichever node PING goes to
                self._client.exists(self.epoch_key)
                return True
            return bool(self._client.ping())

    def lease_key(self, token: str) -> str:
        return f"{self._space}:lease:{token}"

    @property
    def epoch_key(self) -> str:
        return f"{self._space}:epoch"

    def tenant_key(self, tenant: str) -> str:
        return f"{self._space}:tenant:{tenant}"

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
        """The dataset's epoch; a flush, a restart or a failover makes a new one appear."""
        value = self._run("epoch", [self.epoch_key], [secrets.token_hex(8), *self._flag])
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
        args = [job_id, cap, _ms(ttl), int(settle * 1000), secrets.token_hex(8), *self._flag]
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
        return int(self._run("tenant_count", [self.tenant_key(tenant)], []))

    # -- worker presence (``queue-runtime workers``) ---------------------------------

    def worker_key(self, worker_id: str) -> str:
        return f"{self._space}:worker:{worker_id}"

    @property
    def workers_key(self) -> str:
        return f"{self._space}:workers"

    def announce(self, worker: WorkerInfo, ttl: float) -> None:
        """The worker's presence, seen now, for ``ttl``: one pipelined round trip."""
        now = int(time.time() * 1000)
        fields: dict[Any, Any] = {
            "host": worker.host,
            "pid": worker.pid,
            "pools": json.dumps(list(worker.pools)),
            "running": worker.running,
            "started_at": int(worker.started_at.timestamp() * 1000),
            "seen_at": now,
        }
        key = self.worker_key(worker.id)
        with _translated():
            pipe = self._client.pipeline(transaction=False)
            pipe.hset(key, mapping=fields)
            pipe.pexpire(key, _ms(ttl))
            pipe.zadd(self.workers_key, {worker.id: now + _ms(ttl)})
            pipe.zremrangebyscore(self.workers_key, "-inf", now)  # workers that died
            pipe.execute()

    def retire(self, worker_id: str) -> None:
        with _translated():
            pipe = self._client.pipeline(transaction=False)
            pipe.delete(self.worker_key(worker_id))
            pipe.zrem(self.workers_key, worker_id)
            pipe.execute()

    def workers(self) -> list[WorkerInfo]:
        """The workers whose presence has not expired, by id."""
        now = int(time.time() * 1000)
        with _translated():
            ids = [_text(i) for i in self._client.zrangebyscore(self.workers_key, now, "+inf")]
            pipe = self._client.pipeline(transaction=False)
            for worker_id in sorted(ids):
                pipe.hgetall(self.worker_key(worker_id))
            found = pipe.execute() if ids else []
        records = (_worker(i, h) for i, h in zip(sorted(ids), found, strict=True) if h)
        return [r for r in records if r is not None]

    def _run(self, script: str, keys: list[str], args: list[Any]) -> Any:
        if not keys:
            return []
        with _translated():
            client = self._client
            assert self._link is not None  # made by self._client
            return self._link.scripts[script](keys=keys, args=args, client=client)


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _worker(worker_id: str, fields: dict[Any, Any]) -> WorkerInfo | None:
    """A presence hash as a record; None for one that is not whole (written by another version)."""
    got = {_text(k): _text(v) for k, v in fields.items()}
    try:
        return WorkerInfo(
            id=worker_id,
            host=got["host"],
            pid=int(got["pid"]),
            pools=tuple(json.loads(got["pools"])),
            running=int(got["running"]),
            started_at=_from_ms(got["started_at"]),
            seen_at=_from_ms(got["seen_at"]),
        )
    except (KeyError, ValueError):
        return None


def _from_ms(value: str) -> datetime:
    return datetime.fromtimestamp(int(value) / 1000, UTC)


@dataclass(frozen=True, slots=True)
class _Link:
    """A client and the Lua scripts registered on it."""

    client: Client
    scripts: dict[str, Script]

    @classmethod
    def of(cls, client: Client) -> _Link:
        return cls(client, {name: client.register_script(_lua(name)) for name in _SCRIPTS})


def _cluster_client(address: ClusterAddress) -> RedisCluster:
    """A client of the cluster: it connects at once, to learn the slots from a seed node."""
    # ClusterNode has no annotations in redis-py: an untyped call.
    seeds = [ClusterNode(host, port) for host, port in address.nodes]  # type: ignore[no-untyped-call]
    try:
        return RedisCluster(
            startup_nodes=seeds,
            username=address.username,
            password=address.password,
            ssl=address.tls,
            socket_timeout=_TIMEOUT,
            socket_connect_timeout=_TIMEOUT,
        )
    except RedisClusterException as exc:  # "no reachable node": not a RedisError
        raise redis.ConnectionError(f"Redis Cluster at {address.seeds}: {exc}") from exc


@contextmanager
def _translated() -> Iterator[None]:
    try:
        yield
    except redis.ResponseError as exc:
        if "DB index is out of range" in str(exc):  # the URL's fault, not an outage
            raise RedisDatabaseOutOfRange(f"{type(exc).__name__}: {exc}") from exc
        raise LeasesUnavailable(f"{type(exc).__name__}: {exc}") from exc
    except (redis.RedisError, RedisClusterException) as exc:
        # Connection loss, timeouts, LOADING after a restart, READONLY after a failover:
        # all mean "leases cannot be trusted right now"; the worker pauses claiming.
        raise LeasesUnavailable(f"{type(exc).__name__}: {exc}") from exc
