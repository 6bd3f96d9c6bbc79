"""A Redis Cluster of the test's own: 3 masters and 3 replicas on free ports, stopped by PID.

``redis-server --cluster-enabled yes`` on six ports (no persistence, a short
``cluster-node-timeout`` so a killed master's replica takes over within a few
seconds), joined by ``redis-cli --cluster create ... --cluster-replicas 1``.
Only processes started here are ever signalled; the working directory (node
configs, logs) is removed at the end. The fixtures skip with the reason when
redis-server or redis-cli is missing (and fail under MIGRATOR_REQUIRE_SERVICES).
"""

from __future__ import annotations

import random
import shutil
import signal
import socket
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import redis
from redis.cluster import RedisCluster
from redis.crc import key_slot

from queue_runtime.testing import require, wait_until

BUS_OFFSET = 10_000  # a cluster node also listens on port + 10000 (the cluster bus)
HOST = "127.0.0.1"


@dataclass(frozen=True)
class Node:
    id: str
    port: int
    master: bool
    master_id: str | None
    failed: bool
    slots: tuple[tuple[int, int], ...]

    def holds(self, slot: int) -> bool:
        return any(low <= slot <= high for low, high in self.slots)


class RedisClusterServers:
    """Six redis-servers in cluster mode on 127.0.0.1, working dir ``workdir``."""

    def __init__(self, workdir: Path, masters: int = 3, node_timeout_ms: int = 2000) -> None:
        self.workdir = workdir
        self.node_timeout_ms = node_timeout_ms
        self.ports = _cluster_ports(masters * 2)
        self.procs: dict[int, subprocess.Popen[bytes]] = {}

    @property
    def url(self) -> str:
        """``redis+cluster://`` with the masters' ports as seeds (any node would do)."""
        seeds = ",".join(f"{HOST}:{port}" for port in self.ports[: len(self.ports) // 2])
        return f"redis+cluster://{seeds}/"

    def start(self, timeout: float = 60.0) -> None:
        for port in self.ports:
            self._spawn(port)
        for index in range(len(self.ports)):
            self._up(index, timeout)
        create = ["redis-cli", "--cluster", "create", *(f"{HOST}:{p}" for p in self.ports)]
        create += ["--cluster-replicas", "1", "--cluster-yes"]
        done = subprocess.run(create, capture_output=True, timeout=timeout, check=False)
        assert done.returncode == 0, done.stdout.decode() + done.stderr.decode()
        wait_until(self.healthy, timeout, 0.1, "cluster_state:ok and replicas in sync everywhere")

    def stop(self) -> None:
        """SIGTERM every server still running (SIGKILL after 10 s), then remove the dir."""
        for proc in self.procs.values():
            if proc.poll() is None:
                proc.terminate()
        for proc in self.procs.values():
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=10)
        shutil.rmtree(self.workdir, ignore_errors=True)

    def kill(self, port: int) -> None:
        """SIGKILL the server on ``port`` (one of ours, by PID) and reap it."""
        proc = self.procs[port]
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)

    def client(self) -> RedisCluster:
        return RedisCluster.from_url(f"redis://{HOST}:{self.ports[0]}/0")

    # -- topology -------------------------------------------------------------------

    def nodes(self, port: int | None = None) -> list[Node]:
        """``CLUSTER NODES`` as seen from ``port`` (default: any live server)."""
        ask = port if port is not None else self.live_ports()[0]
        with redis.Redis(host=HOST, port=ask, socket_timeout=2) as client:
            text = client.execute_command("CLUSTER", "NODES")
        text = text.decode() if isinstance(text, bytes) else str(text)
        return [_node(line) for line in text.splitlines() if line.strip()]

    def master_of(self, key: str) -> Node:
        """The live master that holds ``key``'s slot."""
        slot = key_slot(key.encode())
        return next(n for n in self.nodes() if n.master and not n.failed and n.holds(slot))

    def replica_of(self, master: Node) -> Node:
        return next(n for n in self.nodes() if n.master_id == master.id)

    def live_ports(self) -> list[int]:
        return [port for port, proc in self.procs.items() if proc.poll() is None]

    def healthy(self) -> bool:
        """Every live node says cluster_state:ok; every live replica's link to its master is up."""
        try:
            for port in self.live_ports():
                with redis.Redis(host=HOST, port=port, socket_timeout=2) as client:
                    if client.cluster("info").get("cluster_state") != "ok":
                        return False
                    replication = client.info("replication")
                    if replication["role"] == "slave" and replication["master_link_status"] != "up":
                        return False
        except redis.RedisError:
            return False
        return True

    def _spawn(self, port: int) -> None:
        args = ["redis-server", "--port", str(port), "--bind", HOST, "--cluster-enabled", "yes"]
        args += ["--cluster-config-file", str(self.workdir / f"nodes-{port}.conf")]
        args += ["--cluster-node-timeout", str(self.node_timeout_ms)]
        args += ["--save", "", "--appendonly", "no", "--daemonize", "no"]
        args += ["--dir", str(self.workdir), "--logfile", str(self.workdir / f"redis-{port}.log")]
        self.procs[port] = subprocess.Popen(
            args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )

    def _up(self, index: int, timeout: float, attempts: int = 3) -> None:
        """Wait until node ``index`` answers; a server that exited first (its port taken
        between the check and its bind) is started again on another free port."""
        last: list[str] = []
        for _ in range(attempts):
            port = self.ports[index]
            proc = self.procs[port]
            wait_until(
                lambda p=port, q=proc: self._answers(p) or q.poll() is not None,
                timeout,
                0.05,
                f"redis-server on {port}",
            )
            if proc.poll() is None:
                return
            log = self.workdir / f"redis-{port}.log"
            last = log.read_text(errors="replace").strip().splitlines()[-1:] if log.exists() else []
            del self.procs[port]
            self.ports[index] = _cluster_ports(1, taken=self.ports)[0]
            self._spawn(self.ports[index])
        raise AssertionError(f"redis-server exited {attempts} times; last log line: {last}")

    @staticmethod
    def _answers(port: int) -> bool:
        try:
            with redis.Redis(
                host=HOST, port=port, socket_connect_timeout=0.5, socket_timeout=0.5
            ) as client:
                return bool(client.ping())
        except (redis.ConnectionError, redis.TimeoutError):  # not up, or not a redis-server
            return False


def _node(line: str) -> Node:
    # <id> <ip:port@cport> <flags> <master> <ping> <pong> <epoch> <link> <slot> <slot> ...
    fields = line.split()
    flags = fields[2].split(",")
    slots = []
    for spec in fields[8:]:
        if spec.startswith("["):
            continue  # a slot being migrated: none here
        low, _, high = spec.partition("-")
        slots.append((int(low), int(high or low)))
    return Node(
        id=fields[0],
        port=int(fields[1].split("@")[0].rsplit(":", 1)[1]),
        master="master" in flags,
        master_id=None if fields[3] == "-" else fields[3],
        failed="fail" in flags,
        slots=tuple(slots),
    )


def _cluster_ports(count: int, taken: list[int] | None = None) -> list[int]:
    """``count`` ports free now whose cluster bus port (+10000) is free too.

    Both below the kernel's ephemeral range when there is room: a port in it can be
    given to any outgoing connection (a test's PostgreSQL or Redis client) between
    this check and the server's bind, and the server would exit.
    """
    low, high = _port_range()
    ports: list[int] = []
    while len(ports) < count:
        port = random.randrange(low, high)
        fresh = port not in ports and port not in (taken or [])
        if fresh and _free(port) and _free(port + BUS_OFFSET):
            ports.append(port)
    return ports


def _port_range() -> tuple[int, int]:
    """Where a node's port is drawn from: its bus port (+10000) stays below the ephemeral ports."""
    try:
        first = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        first = 32768  # Linux's default; elsewhere the range is only a preference
    top = first - BUS_OFFSET
    return (10_000, top) if top - 10_000 >= 1_000 else (20_000, 55_000)


def _free(port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind((HOST, port))
        except OSError:
            return False
    return True


def cluster_problem() -> str | None:
    missing = [name for name in ("redis-server", "redis-cli") if shutil.which(name) is None]
    if missing:
        return f"{' and '.join(missing)} not found on PATH: a local Redis Cluster cannot be started"
    return None


def running_cluster(workdir: Path) -> Iterator[RedisClusterServers]:
    """Body of the cluster fixtures: start one, yield it, stop it (by PID) and remove its dir."""
    require(cluster_problem())
    workdir.mkdir(parents=True, exist_ok=True)
    servers = RedisClusterServers(workdir)
    try:
        servers.start()
        yield servers
    finally:
        servers.stop()


@pytest.fixture(scope="session")
def redis_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisClusterServers]:
    """A cluster shared by the session's tests: never killed or flushed (use a prefix each)."""
    yield from running_cluster(tmp_path_factory.mktemp("redis-cluster"))


@pytest.fixture
def fresh_redis_cluster(tmp_path: Path) -> Iterator[RedisClusterServers]:
    """A cluster of this test alone: its servers may be killed."""
    yield from running_cluster(tmp_path / "redis-cluster")
