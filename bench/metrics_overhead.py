"""What per-job metrics cost: the same drain with them on and off, alternating.

    .venv/bin/python -m bench.metrics_overhead [--jobs 20000] [--repeat 3] [--workers 2]
        [--side-by-side]

Each run gets a fresh schema and Redis prefix (on the PostgreSQL and Redis of
``queue_runtime.testing``: 127.0.0.1:5432 and :6379), starts ``--workers``
worker processes on the empty queue (this module's ``--serve`` mode: the
worker ``queue-runtime worker`` runs, default settings, built with
``WorkerMetrics(per_job=True|False)``) and waits until each says it serves;
then N no-op jobs go in with one ``enqueue_many`` (one transaction, one
NOTIFY). The drain time runs from that commit to the moment no row is left in
``jobs`` (polled every 20 ms). Runs alternate on, off, off, on, on, off, ...
(the machine is shared: alternating spreads changes of load over both, and
neither side always runs first); the report is each run, the median of each
side and the ratio of the medians, the median of the pairs' ratios (runs 1-2,
3-4, ...), and the
CPU time the worker processes spent serving, per job (less sensitive to the
load of others than the wall clock is). Last, the per-job code alone in this
process: a 256-job batch tallied and recorded, microseconds per job.

``--side-by-side`` first runs ``--repeat`` rounds of both sides at once: two
schemas filled with N jobs each, then ``--workers`` processes per side started
together; each side's rate is taken over the window in which both are
draining, so both share the same machine and the same load from others (the
ratio of the two is the cost; alternating runs on a shared machine vary by
more than the cost itself).
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import timeit
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import psycopg
from psycopg import sql

from queue_runtime import Settings, configure, job
from queue_runtime.metrics import Settled, WorkerMetrics
from queue_runtime.store import ClaimedJob
from queue_runtime.testing import fresh_database, isolated_settings
from queue_runtime.worker import Worker

SETTINGS_ENV = "QR_BENCH_SETTINGS"
REPO = Path(__file__).resolve().parents[1]
POLL = 0.02  # seconds between "anything left?" queries
CPU_MARK = "worker cpu seconds: "
Sample = tuple[float, int, int]  # (perf_counter, rows left with per-job metrics on, ... off)


@dataclass(frozen=True)
class Run:
    per_job: bool
    rate: float  # jobs/s, wall clock, commit to empty
    cpu_us: float  # CPU of the worker processes while serving, per job (microseconds)


@job(name="bench.metrics_overhead.noop", pool="batch")
def noop(i: int) -> None:
    """The job: nothing, so the worker's own cost is all there is to measure."""


def serve(per_job: bool) -> int:
    """A worker process (``--serve on|off``): settings from the environment, until SIGTERM."""
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    runtime = configure(Settings.model_validate_json(os.environ[SETTINGS_ENV]))
    worker = Worker(runtime, ["batch"], metrics=WorkerMetrics(per_job=per_job))
    cpu = time.process_time()
    worker.run(install_signals=True)
    print(f"{CPU_MARK}{time.process_time() - cpu:.6f}", flush=True)  # serving, not start-up
    runtime.close()
    return 0


def spawn(settings: Settings, per_job: bool, log: Path) -> subprocess.Popen[bytes]:
    """One worker process of this module's ``--serve`` mode, its output in ``log``."""
    env = {**os.environ, SETTINGS_ENV: settings.model_dump_json(by_alias=True)}
    argv = [sys.executable, "-m", "bench.metrics_overhead", "--serve", "on" if per_job else "off"]
    with log.open("wb") as out:
        return subprocess.Popen(argv, cwd=REPO, env=env, stdout=out, stderr=out)


def stop(procs: list[subprocess.Popen[bytes]]) -> None:
    for proc in procs:
        proc.send_signal(signal.SIGTERM)
    for proc in procs:
        proc.wait(timeout=60)


def drain(settings: Settings, per_job: bool, jobs: int, workers: int, logs: Path) -> Run:
    """One drain of ``jobs`` no-op jobs by ``workers`` fresh processes."""
    paths = [logs / f"{settings.schema_name}-{n}.log" for n in range(workers)]
    procs = [spawn(settings, per_job, path) for path in paths]
    try:
        _wait(lambda: all("serving pools" in p.read_text() for p in paths), 60, paths)
        runtime = configure(settings)
        try:
            noop.enqueue_many(((i,), {}) for i in range(jobs))
            started = time.perf_counter()
            _wait(lambda: _empty(settings), 600, paths)
            rate = jobs / (time.perf_counter() - started)
        finally:
            runtime.close()
    finally:
        stop(procs)
    cpu = sum(_cpu_seconds(path) for path in paths)
    return Run(per_job, rate, 1e6 * cpu / jobs)


def side_by_side(dsn: str, args: argparse.Namespace, logs: Path, on_first: bool) -> float:
    """One round of both at once, each on its own schema: on/off jobs per second.

    Both queues are filled first, then the workers of both sides start (in
    ``on_first`` order, interleaved); the rates are taken over the window in
    which both sides are draining, so both see the same load from others.
    """
    poll = Settings().poll_interval
    with (
        isolated_settings(dsn, poll_interval=poll) as on,
        isolated_settings(dsn, poll_interval=poll) as off,
    ):
        for settings in (on, off):
            runtime = configure(settings)
            noop.enqueue_many(((i,), {}) for i in range(args.jobs))
            runtime.close()
        order = [(True, on), (False, off)] if on_first else [(False, off), (True, on)]
        paths, procs = [], []
        for n in range(args.workers):
            for per_job, settings in order:
                paths.append(logs / f"{settings.schema_name}-{n}.log")
                procs.append(spawn(settings, per_job, paths[-1]))
        try:
            samples = _remaining(on, off, args.jobs, paths)
        finally:
            stop(procs)
    both = [s for s in samples if 0 < s[1] < args.jobs and 0 < s[2] < args.jobs]
    print(f"  {len(samples)} samples, {len(both)} with both sides draining", flush=True)
    if len(both) < 2:
        raise SystemExit("the two sides never drained at the same time; use more --jobs")
    (t0, on0, off0), (t1, on1, off1) = both[0], both[-1]
    return ((on0 - on1) / (t1 - t0)) / ((off0 - off1) / (t1 - t0))


def _remaining(on: Settings, off: Settings, jobs: int, logs: list[Path]) -> list[Sample]:
    """(time, rows left on, rows left off), every POLL seconds, until one side is empty."""
    query = sql.SQL("SELECT (SELECT count(*) FROM {}.jobs), (SELECT count(*) FROM {}.jobs)").format(
        sql.Identifier(on.schema_name), sql.Identifier(off.schema_name)
    )
    samples: list[Sample] = []
    deadline = time.monotonic() + 600
    with psycopg.connect(on.database_url or "", autocommit=True) as conn:
        while not samples or (samples[-1][1] > 0 and samples[-1][2] > 0):
            if time.monotonic() > deadline:
                tails = "\n".join(p.read_text()[-2000:] for p in logs)
                raise SystemExit(f"no side drained in 600 s; worker logs:\n{tails}")
            row = conn.execute(query).fetchone()
            assert row is not None
            samples.append((time.perf_counter(), int(row[0]), int(row[1])))
            time.sleep(POLL)
    return samples


def _cpu_seconds(log: Path) -> float:
    lines = [x for x in log.read_text().splitlines() if x.startswith(CPU_MARK)]
    if not lines:
        raise SystemExit(f"a worker did not report its CPU time:\n{log.read_text()[-2000:]}")
    return float(lines[-1].removeprefix(CPU_MARK))


def _empty(settings: Settings) -> bool:
    query = sql.SQL("SELECT NOT EXISTS (SELECT 1 FROM {}.jobs)").format(
        sql.Identifier(settings.schema_name)
    )
    with psycopg.connect(settings.database_url or "", autocommit=True) as conn:
        row = conn.execute(query).fetchone()
    return bool(row and row[0])


def _wait(done: Callable[[], bool], timeout: float, logs: list[Path]) -> None:
    deadline = time.monotonic() + timeout
    while not done():
        if time.monotonic() > deadline:
            tails = "\n".join(p.read_text()[-2000:] for p in logs)
            raise SystemExit(f"timed out after {timeout:g}s; worker logs:\n{tails}")
        time.sleep(POLL)


def measure(args: argparse.Namespace) -> list[Run]:
    runs: list[Run] = []
    defaults = Settings()
    with fresh_database() as dsn, tempfile.TemporaryDirectory() as logs:
        for n in range(2 * args.repeat):
            per_job = n % 4 in (0, 3)  # on, off, off, on, ...: no side always goes first
            with isolated_settings(dsn, poll_interval=defaults.poll_interval) as settings:
                run = drain(settings, per_job, args.jobs, args.workers, Path(logs))
            runs.append(run)
            side = "on " if per_job else "off"
            print(
                f"run {n + 1:2}: per-job metrics {side} {run.rate:9,.0f} jobs/s"
                f"  worker CPU {run.cpu_us:6.1f} us/job",
                flush=True,
            )
    return runs


def summary(runs: list[Run]) -> list[str]:
    """Medians of each side, their ratio, and the median ratio of each adjacent (on, off) pair."""
    on = [r for r in runs if r.per_job]
    off = [r for r in runs if not r.per_job]
    rate_on, rate_off = (statistics.median(r.rate for r in side) for side in (on, off))
    cpu_on, cpu_off = (statistics.median(r.cpu_us for r in side) for side in (on, off))
    pairs = statistics.median(a.rate / b.rate for a, b in zip(on, off, strict=False))
    return [
        f"median drain, per-job metrics on:  {rate_on:9,.0f} jobs/s",
        f"median drain, per-job metrics off: {rate_off:9,.0f} jobs/s",
        f"on / off: {rate_on / rate_off:.3f} (cost {100 * (1 - rate_on / rate_off):+.1f}% of drain"
        f" throughput); median of the {min(len(on), len(off))} pairs' ratios: {pairs:.3f}",
        f"worker CPU per job: on {cpu_on:.1f} us, off {cpu_off:.1f} us"
        f" (cost {100 * (cpu_on / cpu_off - 1):+.1f}%)",
    ]


def record_cost(batch: int = 256, rounds: int = 30) -> float:
    """Microseconds per job of the per-job code alone: a batch's tally built and recorded.

    In this process, no I/O: best of ``rounds`` (the least disturbed by others' load).
    """
    metrics = WorkerMetrics()
    metrics.bind_jobs({noop.name})
    now = datetime.now(UTC)
    jobs = [
        ClaimedJob(i, noop.name, "batch", {}, 1, 5, None, None, now, now.timestamp())
        for i in range(batch)
    ]
    timings = [(job, (0.0002, time.time())) for job in jobs]

    def one_batch() -> None:
        tally = metrics.tally()
        tally.count_many(Settled.COMPLETED, jobs)
        tally.ran_many(timings)
        metrics.record(tally)

    best = min(timeit.repeat(one_batch, number=100, repeat=rounds))
    return 1e6 * best / 100 / batch


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--jobs", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=3, help="runs of each side (>= 3)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument(
        "--side-by-side",
        action="store_true",
        help="also run both sides at once, --repeat rounds (the same load from others on both)",
    )
    parser.add_argument("--serve", choices=["on", "off"], help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve:
        return serve(args.serve == "on")
    if args.side_by_side:
        ratios = []
        with fresh_database() as dsn, tempfile.TemporaryDirectory() as logs:
            for n in range(args.repeat):
                ratios.append(side_by_side(dsn, args, Path(logs), on_first=n % 2 == 0))
                print(f"side by side {n + 1:2}: on / off {ratios[-1]:.3f}", flush=True)
        median = statistics.median(ratios)
        print(f"side by side, median on / off: {median:.3f} (cost {100 * (1 - median):+.1f}%)")
    runs = measure(args)
    print("\n".join(summary(runs)))
    cost = record_cost()
    cpu_off = statistics.median(r.cpu_us for r in runs if not r.per_job)
    print(
        f"per-job metrics code alone: {cost:.2f} us per job (256-job batch, best of 30),"
        f" {100 * cost / cpu_off:.1f}% of the workers' CPU per job with them off"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
