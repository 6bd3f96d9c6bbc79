"""Django tasks: queue_runtime's backend beside django-tasks-db's ``db_worker``, one run each.

Run with a Python that has Django 6, django-tasks-db and queue-runtime (see bench/README.md):

    PYTHON bench/django_tasks_bench.py [--tasks 20000] [--workers 2] [--latency-tasks 100]

Same machine, same PostgreSQL, the same no-op task (``benchsite.tasks.noop``) enqueued
through Django's API (``noop.enqueue(i)``), each backend on a fresh database of its own.
Drain: the tasks are enqueued first, then ``--workers`` worker processes are started with
their defaults and timed until every task succeeded (process start-up included, for both);
"after start-up" is the first task's start to the last one's end, from the records.
Pickup latency: with the workers idle, tasks enqueued one by one (10 per second), each
task's start minus its enqueue, from the backend's own records. Prints both side by side
and the ratios; writes bench/_work/django_tasks_bench.json.

``--aenqueue N`` (queue_runtime only, no worker): N ``noop.aenqueue(i)`` at once from one
event loop (``asyncio.gather``), the native path (the loop's own PostgreSQL pool) against the
backend's former one (the sync enqueue in a worker thread, ``sync_to_async(...,
thread_sensitive=False)``, asgiref's default executor), each timed after a warm-up; writes
bench/_work/django_aenqueue_bench.json.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent
SITE = ROOT / "django_tasks_site"
PG = "postgresql://postgres@127.0.0.1:5432"


def main() -> int:
    args = _parser().parse_args()
    if args.tool:
        print(json.dumps(_child(args)))
        return 0
    if args.aenqueue:
        _report_aenqueue(_run_child("ours", args), args)
        return 0
    figures = {tool: _run_child(tool, args) for tool in ("ours", "db")}
    _report(figures, args)
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=20_000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--latency-tasks", type=int, default=100)
    parser.add_argument("--aenqueue", type=int, default=0, metavar="N")
    parser.add_argument("--tool", choices=("ours", "db"), help=argparse.SUPPRESS)
    parser.add_argument("--db", help=argparse.SUPPRESS)
    return parser


def _run_child(tool: str, args: argparse.Namespace) -> dict[str, Any]:
    import psycopg

    name = f"bench_dj{tool}_{os.getpid()}"
    with psycopg.connect(f"{PG}/postgres", autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    try:
        command = [sys.executable, __file__, "--tool", tool, "--db", name]
        command += ["--tasks", str(args.tasks), "--workers", str(args.workers)]
        command += ["--latency-tasks", str(args.latency_tasks), "--aenqueue", str(args.aenqueue)]
        done = subprocess.run(
            command, env=_env(tool, name), capture_output=True, text=True, check=False
        )
        if done.returncode != 0:
            raise SystemExit(f"{tool}: exit {done.returncode}\n{done.stderr[-3000:]}")
        found: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
        return found
    finally:
        with psycopg.connect(f"{PG}/postgres", autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def _env(tool: str, db: str) -> dict[str, str]:
    paths = [str(SITE), *[p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]]
    return {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(paths),
        "DJANGO_SETTINGS_MODULE": "benchsite.settings",
        "BENCH_BACKEND": tool,
        "BENCH_DB_NAME": db,
        "QUEUE_RUNTIME_DATABASE_URL": f"{PG}/{db}",
        "QUEUE_RUNTIME_REDIS_URL": os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/0"),
    }


# -- one tool, in its own process (Django's settings are per process) ------------------


def _child(args: argparse.Namespace) -> dict[str, Any]:
    import django

    django.setup()
    _install(args.tool)
    from benchsite.tasks import noop

    if args.aenqueue:
        return _aenqueue_figures(noop, args.aenqueue)

    started = time.perf_counter()
    for i in range(args.tasks):
        noop.enqueue(i)
    enqueue_s = time.perf_counter() - started
    workers, spawned = _workers(args.tool, args.workers), time.perf_counter()
    try:
        _wait(lambda: _succeeded(args.tool) >= args.tasks, 1800)
        drain_s = time.perf_counter() - spawned
        work_s = _work_seconds(args.tool)
        latencies = _latencies(noop, args.tool, args.latency_tasks, args.tasks)
    finally:
        for proc in workers:
            proc.terminate()
        for proc in workers:
            proc.wait(timeout=30)
    return {
        "tasks": args.tasks,
        "enqueue_s": enqueue_s,
        "drain_s": drain_s,
        "drain_per_s": args.tasks / drain_s,
        "work_s": work_s,
        "work_per_s": args.tasks / work_s,
        "pickup_p50_ms": statistics.median(latencies) * 1000,
        "pickup_p95_ms": statistics.quantiles(latencies, n=20)[-1] * 1000,
    }


def _aenqueue_figures(noop: Any, count: int) -> dict[str, Any]:
    import asyncio

    async def thread_path(i: int) -> Any:  # the backend's aenqueue before the native one
        from asgiref.sync import sync_to_async
        from django.tasks.signals import task_enqueued

        backend = noop.get_backend()
        backend.validate_task(noop)
        result = await sync_to_async(backend._enqueue, thread_sensitive=False)(noop, [i], {})
        await task_enqueued.asend(type(backend), task_result=result)
        return result

    async def timed(enqueue: Any) -> float:
        await asyncio.gather(*(enqueue(-1) for _ in range(20)))  # warm-up: pools, threads
        started = time.perf_counter()
        done = await asyncio.gather(*(enqueue(i) for i in range(count)))
        elapsed = time.perf_counter() - started
        assert len({r.id for r in done}) == count
        return elapsed

    native_s = asyncio.run(timed(noop.aenqueue))
    thread_s = asyncio.run(timed(thread_path))
    stored = int(_one("SELECT count(*) FROM queue_runtime.jobs"))
    return {
        "tasks": count,
        "native_s": native_s,
        "native_per_s": count / native_s,
        "thread_s": thread_s,
        "thread_per_s": count / thread_s,
        "stored": stored,
        "load_1min_after": os.getloadavg()[0],
    }


def _report_aenqueue(figures: dict[str, Any], args: argparse.Namespace) -> None:
    n = figures["tasks"]
    print(f"{n} concurrent noop.aenqueue() from one event loop (load {os.getloadavg()[0]:.1f})")
    print(f"native (the loop's own pool)   {figures['native_per_s']:>8.0f} tasks/s")
    print(f"thread (sync_to_async, before) {figures['thread_per_s']:>8.0f} tasks/s")
    print(f"native faster by {figures['native_per_s'] / figures['thread_per_s']:.1f}x")
    out = ROOT / "_work" / "django_aenqueue_bench.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps({"args": vars(args), "figures": figures}, indent=2))


def _install(tool: str) -> None:
    if tool == "ours":
        from queue_runtime import configure, migrate

        migrate(configure().settings)
        return
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def _workers(tool: str, count: int) -> list[subprocess.Popen[bytes]]:
    if tool == "ours":
        bin_dir = Path(sys.executable).parent
        command = [str(bin_dir / "queue-runtime"), "worker", "benchsite.worker"]
        command += ["--django-settings", "benchsite.settings", "--pool", "batch"]
    else:
        command = [sys.executable, "-m", "django", "db_worker", "--no-reload"]
    log = open(os.environ.get("BENCH_LOG", os.devnull), "ab")  # noqa: SIM115  (closed at exit)
    return [subprocess.Popen(command, stdout=log, stderr=log) for _ in range(count)]


def _succeeded(tool: str) -> int:
    if tool == "ours":
        return int(
            _one("SELECT count(*) FROM queue_runtime.job_history WHERE status = 'succeeded'")
        )
    from django_tasks_db.models import DBTaskResult

    return int(DBTaskResult.objects.filter(status="SUCCESSFUL").count())


def _work_seconds(tool: str) -> float:
    """The drain without the workers' start-up: the first task's start to the last one's end."""
    if tool == "ours":
        query = "SELECT extract(epoch FROM max(finished_at) - min(started_at)) FROM {}.job_history"
        return float(_one(query.format("queue_runtime")))
    from django.db.models import Max, Min
    from django_tasks_db.models import DBTaskResult

    span = DBTaskResult.objects.aggregate(first=Min("started_at"), last=Max("finished_at"))
    return float((span["last"] - span["first"]).total_seconds())


def _latencies(noop: Any, tool: str, count: int, already: int) -> list[float]:
    ids = []
    for i in range(count):
        ids.append(noop.enqueue(-i).id)
        time.sleep(0.1)
    _wait(lambda: _succeeded(tool) >= already + count, 120)
    if tool == "ours":
        rows = _all(
            "SELECT extract(epoch FROM started_at - enqueued_at) FROM queue_runtime.job_history"
            " WHERE id = ANY(%s)",
            [int(i) for i in ids],
        )
        return [float(r[0]) for r in rows]
    from django_tasks_db.models import DBTaskResult

    found = DBTaskResult.objects.filter(id__in=ids).values_list("started_at", "enqueued_at")
    return [(started - enqueued).total_seconds() for started, enqueued in found]


def _one(query: str) -> Any:
    return _all(query)[0][0]


def _all(query: str, *params: Any) -> list[Any]:
    import psycopg

    with psycopg.connect(os.environ["QUEUE_RUNTIME_DATABASE_URL"]) as conn:
        return conn.execute(query, params or None).fetchall()


def _wait(done: Any, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not done():
        if time.monotonic() > deadline:
            raise SystemExit(f"not done after {timeout}s")
        time.sleep(0.05)


def _report(figures: dict[str, dict[str, Any]], args: argparse.Namespace) -> None:
    ours, db = figures["ours"], figures["db"]
    rows = [
        ("enqueue of all tasks (s)", "enqueue_s", db["enqueue_s"] / ours["enqueue_s"]),
        ("drain (s)", "drain_s", db["drain_s"] / ours["drain_s"]),
        ("drain (tasks/s)", "drain_per_s", ours["drain_per_s"] / db["drain_per_s"]),
        ("drain after start-up (tasks/s)", "work_per_s", ours["work_per_s"] / db["work_per_s"]),
        ("pickup p50 (ms)", "pickup_p50_ms", db["pickup_p50_ms"] / ours["pickup_p50_ms"]),
        ("pickup p95 (ms)", "pickup_p95_ms", db["pickup_p95_ms"] / ours["pickup_p95_ms"]),
    ]
    print(f"{args.tasks} no-op tasks, {args.workers} worker processes each, defaults")
    print(f"{'':28}{'queue_runtime':>15}{'django-tasks-db':>17}{'ours better by':>16}")
    for label, key, ratio in rows:
        print(f"{label:28}{ours[key]:>15.1f}{db[key]:>17.1f}{ratio:>15.1f}x")
    out = ROOT / "_work" / "django_tasks_bench.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps({"args": vars(args), "figures": figures}, indent=2))


if __name__ == "__main__":
    sys.exit(main())
