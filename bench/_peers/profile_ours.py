"""Profile our drain: where a worker's time goes, and what each job costs in round trips.

    .venv/bin/python -m bench._peers.profile_ours [--jobs 20000] [--workers 2] [--py-spy]

Fills a fresh database with N no-op jobs, then drains them with the
``queue-runtime worker`` CLI against a private redis-server (started here on a
free port, stopped by PID), so Redis command counts are ours alone. Prints:
drain rate; PostgreSQL transactions per job (each autocommitted statement is
one, so this counts round trips) and row operations; Redis commands per job by
command; the workers' CPU time per 1,000 jobs (user + system, from /proc, counted from the
first job start to the end of the drain: unlike the rate, it barely moves when other work
shares the machine, so two versions can be compared on a busy host); with ``--py-spy``, the functions where the workers spend their time.
"""

from __future__ import annotations

import argparse
import collections
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import psycopg
import redis

from bench._peers import pg
from bench._peers.ours_tool import OursTool
from bench._peers.phases import wait_for
from bench._peers.procs import REPO_ROOT, WorkerGroup
from bench._peers.recorder import STARTS_DIR_ENV, read_starts
from bench._peers.tool import payloads
from queue_runtime import Mode, configure

_DB_COUNTERS = """
SELECT xact_commit + xact_rollback, tup_inserted, tup_updated, tup_deleted
FROM pg_stat_database WHERE datname = current_database()
"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_redis(port: int) -> subprocess.Popen[bytes]:
    argv = ["redis-server", "--port", str(port), "--save", "", "--appendonly", "no"]
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    client = redis.Redis(port=port)
    wait_for(lambda: _pings(client), 10, "private redis-server up", 0.05)
    return proc


def _pings(client: redis.Redis) -> bool:
    try:
        return bool(client.ping())
    except redis.ConnectionError:
        return False


def db_counters(dsn: str) -> list[int]:
    """The database's counters once they stop moving (backends flush stats lazily)."""
    previous: list[int] = []
    with psycopg.connect(dsn, autocommit=True) as conn:
        for _ in range(20):
            conn.execute("SELECT pg_stat_clear_snapshot()")
            row = conn.execute(_DB_COUNTERS).fetchone()
            assert row is not None
            current = [int(v) for v in row]
            # our own two statements per read count as transactions too
            if previous and current[1:] == previous[1:]:
                return current
            previous = current
            time.sleep(0.5)
    return previous


def redis_calls(client: redis.Redis) -> dict[str, int]:
    stats = client.info("commandstats")
    return {name.removeprefix("cmdstat_"): int(v["calls"]) for name, v in stats.items()}


def attach_py_spy(pid: int, out: Path) -> subprocess.Popen[bytes]:
    """py-spy on a running worker; it writes its file when the worker exits."""
    spy = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
    argv = [spy, "record", "--format", "raw", "--rate", "250", "--nonblocking"]
    argv += ["--pid", str(pid), "-o", str(out)]
    return subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def summarize_profile(path: Path, top: int = 25) -> list[str]:
    """Self time per function (leaf frames) and time per thread, from py-spy's raw format."""
    leaves: collections.Counter[str] = collections.Counter()
    threads: collections.Counter[str] = collections.Counter()
    for line in path.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        frames = stack.split(";")
        leaves[frames[-1]] += int(count)
        threads[frames[0]] += int(count)
    total = sum(leaves.values()) or 1
    out = [f"{100 * n / total:5.1f}%  thread {name}" for name, n in threads.most_common(12)]
    out += [f"{100 * n / total:5.1f}%  {name}" for name, n in leaves.most_common(top)]
    return out


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--jobs", type=int, default=20_000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--py-spy", action="store_true")
    parser.add_argument("--worker-args", default="", help='e.g. "--pool batch --concurrency 32"')
    args = parser.parse_args()
    work = REPO_ROOT / "bench" / "_work" / f"profile-{os.getpid()}"
    work.mkdir(parents=True, exist_ok=True)
    port = free_port()
    redis_proc = start_redis(port)
    database = f"bench_profile_{os.getpid()}"
    dsn = pg.create_database(database)
    try:
        _profile(dsn, port, args, work)
    finally:
        redis_proc.terminate()
        redis_proc.wait(10)
        pg.drop_database(database)
    return 0


def _profile(dsn: str, port: int, args: argparse.Namespace, work: Path) -> None:
    import bench._peers.ours_tool as ours

    ours.REDIS_URL = f"redis://127.0.0.1:{port}/0"  # the private server, for clean counts
    tool = OursTool(args.worker_args.split())
    tool.install(dsn)
    tool.enqueue_bulk(dsn, payloads(0, args.jobs), 1000)
    configure(mode=Mode.INLINE)  # close the enqueuer's pool: its backend flushes its stats
    client = redis.Redis(port=port)
    before_pg, before_redis = db_counters(dsn), redis_calls(client)
    _drain(tool, dsn, args, work)
    after_pg, after_redis = db_counters(dsn), redis_calls(client)
    _report(args.jobs, before_pg, after_pg, before_redis, after_redis)
    for path in sorted(work.glob("profile-*.txt")):
        print(f"\n== py-spy {path.name} (self time)")
        print("\n".join(summarize_profile(path)))
    tool.cleanup()


def cpu_seconds(pid: int) -> float:
    """User + system CPU time a live process has used so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    utime, stime = int(fields[11]), int(fields[12])  # fields 14 and 15 of proc(5)
    return (utime + stime) / os.sysconf("SC_CLK_TCK")


def _drain(tool: OursTool, dsn: str, args: argparse.Namespace, work: Path) -> None:
    group = WorkerGroup(work)
    group.start(tool.worker(dsn), args.workers, {STARTS_DIR_ENV: str(work)})
    spies = [
        attach_py_spy(proc.pid, work / f"profile-{proc.pid}.txt")
        for proc in (group.processes if args.py_spy else [])
    ]
    pids = [proc.pid for proc in group.processes]
    try:
        # the first job's start record opens its file: CPU from then on is the drain's
        wait_for(lambda: any(work.glob("starts-*.txt")), 60, "the first start", 0.005)
        cpu_at_start = sum(cpu_seconds(pid) for pid in pids)
        wait_for(lambda: pg.scalar(dsn, tool.remaining_sql) == 0, 600, "drain", 0.02)
        done = time.time()
        cpu = sum(cpu_seconds(pid) for pid in pids) - cpu_at_start
    finally:
        group.stop(grace=15)
        for spy in spies:
            spy.wait(30)
    first = min(s.started_at for s in read_starts(work).values())
    print(f"drain: {args.jobs / (done - first):,.0f} jobs/s ({args.workers} workers)")
    print(f"worker CPU per 1,000 jobs: {1000 * cpu / args.jobs * 1000:.1f} ms (user + system)")


def _report(n: int, pg0: list[int], pg1: list[int], r0: dict[str, int], r1: dict[str, int]) -> None:
    labels = ("transactions (round trips)", "rows inserted", "rows updated", "rows deleted")
    for label, a, b in zip(labels, pg0, pg1, strict=True):
        print(f"postgres {label} per job: {(b - a) / n:.3f}")
    deltas = {cmd: r1.get(cmd, 0) - r0.get(cmd, 0) for cmd in r1}
    for cmd, calls in sorted(deltas.items(), key=lambda kv: -kv[1]):
        if calls:
            print(f"redis {cmd} per job: {calls / n:.3f}")


if __name__ == "__main__":
    sys.exit(main())
