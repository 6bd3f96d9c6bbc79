"""The measured phases, the same for every tool.

Order per tool, on its own fresh database (autovacuum off on its tables):
1. one-by-one enqueue, then the tables are truncated;
2. bulk enqueue of N, timed; WAL is measured from just before it ...
3. ... through the drain by 2 worker processes started on the full queue, to
   the moment no unfinished job is left; the workers are then stopped so their
   backends flush their statistics, and n_dead_tup is read;
4. pickup latency: 2 fresh workers, a warm-up, then a paced enqueue.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from bench._peers import pg
from bench._peers.procs import WorkerGroup
from bench._peers.recorder import STARTS_DIR_ENV, Start, count_starts, read_starts
from bench._peers.tool import Tool, payloads

WARMUP_SEQ = 10_000_000  # sequence numbers of warm-up jobs, outside the measured range
WARMUP_JOBS = 20


@dataclass(frozen=True)
class BenchConfig:
    jobs: int
    single_jobs: int
    batch: int
    rate: float
    duration: float
    workers: int
    work_dir: Path


@dataclass
class ToolRun:
    """One tool on one database; phases record their figures or why they failed."""

    tool: Tool
    dsn: str
    config: BenchConfig
    metrics: dict[str, float | str] = field(default_factory=dict)
    notes: dict[str, str] = field(default_factory=dict)
    details: dict[str, list[str]] = field(default_factory=dict)  # JSON only

    def phase_dir(self, phase: str) -> Path:
        path = self.config.work_dir / self.tool.name / phase
        path.mkdir(parents=True, exist_ok=True)
        return path


def wait_for(
    condition: Callable[[], bool], timeout: float, what: str, interval: float = 0.02
) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what} not reached within {timeout:.0f}s")
        time.sleep(interval)


def percentile(sorted_values: list[float], fraction: float) -> float:
    """Nearest-rank percentile of an already sorted list."""
    rank = max(1, math.ceil(fraction * len(sorted_values)))
    return sorted_values[rank - 1]


def measure_single(run: ToolRun) -> None:
    jobs = payloads(0, run.config.single_jobs)
    started = time.perf_counter()
    run.tool.enqueue_single(run.dsn, jobs)
    run.metrics["single_enqueue_jobs_s"] = len(jobs) / (time.perf_counter() - started)
    pg.truncate_all(run.dsn)


def measure_bulk_and_drain(run: ToolRun) -> None:
    """Bulk enqueue, then drain: WAL from before the enqueue to the end of the drain."""
    oid = pg.database_oid(run.dsn)
    pg.checkpoint(run.dsn)
    with pg.retain_wal(run.dsn):
        lsn_before = pg.current_lsn(run.dsn)
        jobs = payloads(0, run.config.jobs)
        started = time.perf_counter()
        run.tool.enqueue_bulk(run.dsn, jobs, run.config.batch)
        run.metrics["bulk_enqueue_jobs_s"] = len(jobs) / (time.perf_counter() - started)
        lsn_enqueued = pg.current_lsn(run.dsn)
        drained_at, starts_dir = _drain(run)
        _record_wal(run, oid, (lsn_before, lsn_enqueued, drained_at))
    run.metrics["dead_tuples_job"] = pg.dead_tuples(run.dsn) / len(jobs)
    _check_each_ran_once(run, starts_dir, len(jobs))


def _record_wal(run: ToolRun, oid: int, lsns: tuple[str, str, str]) -> None:
    before, enqueued, drained = lsns
    n = run.config.jobs
    wal = pg.wal_between(run.dsn, before, drained, oid)
    run.metrics["wal_bytes_job"] = wal.total_bytes / n
    if wal.database_bytes is not None:
        run.metrics["wal_bytes_job_own_db"] = wal.database_bytes / n
    else:
        run.metrics["wal_bytes_job_own_db"] = f"failed: {wal.error}"
    for part, (start, end) in {"enqueue": (before, enqueued), "drain": (enqueued, drained)}.items():
        own = pg.wal_between(run.dsn, start, end, oid).database_bytes
        if own is not None:
            run.notes[f"wal_own_db_{part}_bytes_job"] = f"{own / n:.0f}"
        run.details[f"wal_{part}_breakdown"] = pg.wal_breakdown(run.dsn, start, end, oid)


def _drain(run: ToolRun) -> tuple[str, Path]:
    """Start the workers on the full queue; return the LSN when nothing is left, and the starts."""
    starts_dir = run.phase_dir("drain")
    group = WorkerGroup(starts_dir)
    try:
        group.start(run.tool.worker(run.dsn), run.config.workers, {STARTS_DIR_ENV: str(starts_dir)})
        timeout = 60 + run.config.jobs / 200

        def finished() -> bool:
            group.check_alive()
            return pg.scalar(run.dsn, run.tool.remaining_sql) == 0

        wait_for(finished, timeout, "drain", interval=0.02)
        done_wall = time.time()
        lsn = pg.current_lsn(run.dsn)
    finally:
        group.stop()
    first_claim = min(start.started_at for start in read_starts(starts_dir).values())
    run.metrics["drain_jobs_s"] = run.config.jobs / (done_wall - first_claim)
    return lsn, starts_dir


def _check_each_ran_once(run: ToolRun, starts_dir: Path, expected: int) -> None:
    lines = count_starts(starts_dir)
    unique = len(read_starts(starts_dir))
    run.notes["drain_runs"] = f"{unique}/{expected} jobs ran, {lines - unique} ran more than once"


def measure_latency(run: ToolRun) -> None:
    starts_dir = run.phase_dir("latency")
    count = int(run.config.rate * run.config.duration)
    group = WorkerGroup(starts_dir)
    try:
        group.start(run.tool.worker(run.dsn), run.config.workers, {STARTS_DIR_ENV: str(starts_dir)})
        warm_up(run, group, starts_dir)
        calls = run.tool.enqueue_paced(run.dsn, 0, count, run.config.rate)
        wait_for(lambda: _measured_started(starts_dir) >= count, 30, "all paced jobs started", 0.05)
    finally:
        group.stop()
    starts = read_starts(starts_dir)
    _record_latency(run, starts, count)
    _record_enqueue_share(run, starts, calls)


def _record_enqueue_share(run: ToolRun, starts: dict[int, Start], calls: list[float]) -> None:
    """The enqueue call (its commit) is part of every latency: show it, and what is left."""
    after = sorted(
        (starts[seq].started_at - starts[seq].enqueued_at - call) * 1000
        for seq, call in enumerate(calls)
        if seq in starts
    )
    ms = sorted(call * 1000 for call in calls)
    run.notes["enqueue_call_ms"] = f"p50 {percentile(ms, 0.5):.1f}, p99 {percentile(ms, 0.99):.1f}"
    run.notes["start_after_enqueue_returned_ms"] = (
        f"p50 {percentile(after, 0.5):.1f}, p99 {percentile(after, 0.99):.1f}"
    )


def warm_up(run: ToolRun, group: WorkerGroup, starts_dir: Path) -> None:
    """Wait until both workers are up and listening: a few jobs must have started."""

    def warmed() -> bool:
        group.check_alive()
        return count_starts(starts_dir) >= WARMUP_JOBS

    run.tool.enqueue_paced(run.dsn, WARMUP_SEQ, WARMUP_JOBS, 20.0)
    wait_for(warmed, 60, "warm-up jobs started", 0.05)


def _measured_started(starts_dir: Path) -> int:
    return sum(1 for seq in read_starts(starts_dir) if seq < WARMUP_SEQ)


def _record_latency(run: ToolRun, starts: dict[int, Start], count: int) -> None:
    measured = [start for seq, start in starts.items() if seq < WARMUP_SEQ]
    latencies = sorted((s.started_at - s.enqueued_at) * 1000 for s in measured)
    for name, fraction in (("p50", 0.50), ("p95", 0.95), ("p99", 0.99)):
        run.metrics[f"pickup_{name}_ms"] = percentile(latencies, fraction)
    run.notes["latency_jobs"] = f"{len(latencies)}/{count} jobs at {run.config.rate:g}/s"
