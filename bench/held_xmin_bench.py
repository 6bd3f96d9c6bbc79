"""Held-xmin resilience: a queue under steady load while one transaction holds vacuum back.

    .venv/bin/python bench/held_xmin_bench.py [--tools ours,pgqueuer] [--rates 800,5000]
        [--before 60] [--hold 180] [--after 30] [--json out.json]

What operators leave PostgreSQL queues over (PgQue's published failure: a SKIP LOCKED
queue at 800 jobs/s fell to 517/s while one long transaction held the xmin horizon for
3 minutes). Per tool and per offered rate, on its own fresh database with autovacuum ON
(as in production; the hold is what defeats it):

1. 2 worker processes start and warm up;
2. a producer offers ``rate`` jobs/s, one batch call every ``--tick`` seconds (a
   single Python thread cannot make 5,000 round trips a second), each job stamped
   with the host clock just before its call;
3. after ``--before`` seconds a REPEATABLE READ transaction in the tool's database
   takes an xid and a snapshot and holds them ``--hold`` seconds (vacuum can remove
   no row version deleted after it), then commits; the producer runs ``--after``
   seconds more, then the workers finish what is queued.

Figures per window (before / during the hold / after), by each job's enqueue stamp:
offered jobs/s, completed jobs/s (starts in the window), pickup p50/p99 (start minus
enqueue stamp) and the backlog at the window's end; and dead tuples (``n_dead_tup``
over the tool's tables) when the hold starts and ends, per job completed during it.
Every job must run: the run fails a tool whose jobs are not all started by the deadline.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make `bench` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import psycopg
from rich.console import Console
from rich.table import Table

from bench._peers import pg
from bench._peers.phases import WARMUP_SEQ, BenchConfig, ToolRun, percentile, wait_for, warm_up
from bench._peers.procs import WorkerGroup
from bench._peers.recorder import STARTS_DIR_ENV, Start, read_starts
from bench._peers.tool import Tool, stamped
from bench._peers.tools import TOOLS

WORK_DIR = Path(__file__).resolve().parent / "_work" / "held_xmin"
WINDOWS = ("before", "hold", "after")


@dataclass
class Timeline:
    """Wall-clock bounds of the three windows, and what the producer offered."""

    start: float = 0.0
    hold_start: float = 0.0
    hold_end: float = 0.0
    end: float = 0.0
    enqueued: int = 0
    late_ticks: int = 0  # ticks whose batch call started after the next tick was due
    errors: list[str] = field(default_factory=list)

    def bounds(self, window: str) -> tuple[float, float]:
        return {
            "before": (self.start, self.hold_start),
            "hold": (self.hold_start, self.hold_end),
            "after": (self.hold_end, self.end),
        }[window]


class Producer(threading.Thread):
    """Offers ``rate`` jobs/s in one batch call per tick until told to stop."""

    def __init__(self, tool: Tool, dsn: str, rate: float, tick: float, timeline: Timeline):
        super().__init__(name="producer", daemon=True)
        self.tool, self.dsn, self.rate, self.tick = tool, dsn, rate, tick
        self.timeline = timeline
        self.stop_at = float("inf")  # wall clock; set by the driver

    def run(self) -> None:
        timeline, seq = self.timeline, 0
        due = last = time.monotonic()
        owed = 0.0  # fractional jobs carried to the next tick (800/s at 20 ms: 16 each)
        try:
            while time.time() < self.stop_at:
                # Credit the offered load on the clock, not per tick: a slow enqueue call
                # makes the next batch larger instead of silently offering less.
                now = time.monotonic()
                owed += self.rate * (now - last)
                last = now
                count, owed = int(owed), owed - int(owed)
                if count:
                    jobs = [stamped(seq + k) for k in range(count)]
                    self.tool.enqueue_bulk(self.dsn, jobs, count)
                    seq += count
                    timeline.enqueued = seq
                due += self.tick
                pause = due - time.monotonic()
                if pause > 0:
                    time.sleep(pause)
                else:  # behind: the clock's credit makes it up, no burst of empty ticks
                    timeline.late_ticks += 1
                    due = time.monotonic()
        except Exception as exc:  # reported in the figures; the driver stops the run
            timeline.errors.append(f"{type(exc).__name__}: {exc}")


@contextmanager
def held_xmin(dsn: str) -> Iterator[dict[str, Any]]:
    """A REPEATABLE READ transaction with an xid and a snapshot, open for the block."""
    facts: dict[str, Any] = {}
    with psycopg.connect(dsn) as conn:
        conn.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ
        row = conn.execute("SELECT txid_current(), pg_backend_pid()").fetchone()
        assert row is not None
        facts["xid"], facts["pid"] = int(row[0]), int(row[1])
        with psycopg.connect(dsn, autocommit=True) as probe:
            held = probe.execute(
                "SELECT backend_xmin IS NOT NULL AND backend_xid IS NOT NULL"
                " FROM pg_stat_activity WHERE pid = %s",
                (facts["pid"],),
            ).fetchone()
        facts["xmin_held"] = bool(held and held[0])
        yield facts
        conn.rollback()


def dead_tuples_now(dsn: str) -> int:
    """n_dead_tup over the tool's tables, as the statistics say right now (no settling)."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        row = conn.execute(
            "SELECT coalesce(sum(n_dead_tup), 0)::bigint FROM pg_stat_user_tables"
        ).fetchone()
    return int(row[0]) if row else 0


@dataclass(frozen=True)
class Scenario:
    rate: float
    tick: float
    before: float
    hold: float
    after: float
    workers: int
    drain_timeout: float


def run_scenario(run: ToolRun, scenario: Scenario, console: Console) -> None:
    """One tool at one rate: workers up, producer on, the hold in the middle, all drained."""
    starts_dir = run.phase_dir(f"rate-{scenario.rate:g}")
    group = WorkerGroup(starts_dir)
    timeline = Timeline()
    producer = Producer(run.tool, run.dsn, scenario.rate, scenario.tick, timeline)
    try:
        group.start(run.tool.worker(run.dsn), scenario.workers, {STARTS_DIR_ENV: str(starts_dir)})
        warm_up(run, group, starts_dir)
        timeline.start = time.time()
        producer.stop_at = timeline.start + scenario.before + scenario.hold + scenario.after
        producer.start()
        _sleep_watching(group, timeline, timeline.start + scenario.before)
        with held_xmin(run.dsn) as facts:
            timeline.hold_start = time.time()
            _note_load(run, "before")
            run.metrics["dead_tuples_hold_start"] = dead_tuples_now(run.dsn)
            _sleep_watching(group, timeline, timeline.hold_start + scenario.hold)
            run.metrics["dead_tuples_hold_end"] = dead_tuples_now(run.dsn)
            timeline.hold_end = time.time()
            _note_load(run, "hold")
        run.notes["xmin held"] = "yes" if facts["xmin_held"] else "NO: the figures are void"
        producer.join(timeout=scenario.after + 30)
        timeline.end = time.time()
        _note_load(run, "after")
        _raise_producer_errors(timeline)
        try:
            wait_for(
                lambda: _all_started(group, starts_dir, timeline.enqueued),
                scenario.drain_timeout,
                "every offered job started",
                0.1,
            )
        except TimeoutError as exc:  # the windows' figures still stand: say what is left
            run.notes["backlog not drained"] = str(exc)
    finally:  # a failed run leaves no producer offering jobs to the next tool's turn
        producer.stop_at = 0.0
        if producer.is_alive():
            producer.join(timeout=30)
        group.stop()
    record(run, read_starts(starts_dir), timeline)


def _note_load(run: ToolRun, window: str) -> None:
    """The machine is shared: how busy it was as each window ended (1-minute load average)."""
    run.notes[f"load at the end of {window}"] = f"{os.getloadavg()[0]:.1f}"


def _sleep_watching(group: WorkerGroup, timeline: Timeline, until: float) -> None:
    while time.time() < until:
        group.check_alive()
        _raise_producer_errors(timeline)
        time.sleep(min(0.5, max(0.0, until - time.time())))


def _raise_producer_errors(timeline: Timeline) -> None:
    if timeline.errors:
        raise RuntimeError(f"the producer failed: {timeline.errors[0]}")


def _all_started(group: WorkerGroup, starts_dir: Path, enqueued: int) -> bool:
    group.check_alive()
    measured = sum(1 for seq in read_starts(starts_dir) if seq < WARMUP_SEQ)
    return measured >= enqueued


def record(run: ToolRun, starts: dict[int, Start], timeline: Timeline) -> None:
    measured = {seq: s for seq, s in starts.items() if seq < WARMUP_SEQ}
    for window in WINDOWS:
        low, high = timeline.bounds(window)
        length = max(high - low, 1e-9)
        offered = [s for s in measured.values() if low <= s.enqueued_at < high]
        started = sum(1 for s in measured.values() if low <= s.started_at < high)
        waits = sorted((s.started_at - s.enqueued_at) * 1000 for s in offered)
        enqueued_by_end = sum(1 for s in measured.values() if s.enqueued_at < high)
        started_by_end = sum(1 for s in measured.values() if s.started_at < high)
        run.metrics[f"{window}_offered_jobs_s"] = len(offered) / length
        run.metrics[f"{window}_completed_jobs_s"] = started / length
        run.metrics[f"{window}_pickup_p50_ms"] = percentile(waits, 0.5) if waits else 0.0
        run.metrics[f"{window}_pickup_p99_ms"] = percentile(waits, 0.99) if waits else 0.0
        run.metrics[f"{window}_backlog_at_end"] = float(enqueued_by_end - started_by_end)
    hold_low, hold_high = timeline.bounds("hold")
    finished_in_hold = sum(1 for s in measured.values() if hold_low <= s.started_at < hold_high)
    grown = run.metrics["dead_tuples_hold_end"] - run.metrics["dead_tuples_hold_start"]
    run.metrics["dead_tuples_per_job_hold"] = grown / max(finished_in_hold, 1)
    before = run.metrics["before_completed_jobs_s"]
    run.metrics["hold_throughput_vs_before"] = (
        run.metrics["hold_completed_jobs_s"] / before if before else 0.0
    )
    run.notes["jobs"] = f"{len(measured)}/{timeline.enqueued} offered jobs ran"
    run.notes["late producer ticks"] = str(timeline.late_ticks)


def _tool(name: str) -> Tool:
    if name not in TOOLS:
        raise SystemExit(f"unknown tool {name!r}: choose among {', '.join(TOOLS)}")
    return TOOLS[name]("")


def run_tool(name: str, scenario: Scenario, work_dir: Path, console: Console) -> ToolRun:
    database = f"bench_xmin_{name}_{os.getpid()}"
    dsn = pg.create_database(database)
    config = BenchConfig(0, 0, 0, scenario.rate, 0.0, scenario.workers, work_dir)
    tool = _tool(name)
    run = ToolRun(tool, dsn, config)
    try:
        tool.install(dsn)
        console.print(f"[bold]{name}[/] at {scenario.rate:g} jobs/s ...")
        run_scenario(run, scenario, console)
    except Exception as exc:  # one tool's failure is its row, not the run's end
        run.notes["failed"] = f"{type(exc).__name__}: {exc}".replace("\n", " ")[:400]
        console.print(f"  [red]{run.notes['failed']}[/]")
    finally:
        tool.cleanup()
        pg.drop_database(database)
    return run


ROWS = (
    ("offered, jobs/s", "offered_jobs_s", "{:,.0f}"),
    ("completed, jobs/s", "completed_jobs_s", "{:,.0f}"),
    ("pickup p50, ms", "pickup_p50_ms", "{:,.1f}"),
    ("pickup p99, ms", "pickup_p99_ms", "{:,.1f}"),
    ("backlog at window end", "backlog_at_end", "{:,.0f}"),
)


def render(runs: list[tuple[float, ToolRun]], console: Console) -> None:
    table = Table(title="Held xmin: before / during the hold / after")
    table.add_column("tool @ rate")
    table.add_column("figure")
    for window in WINDOWS:
        table.add_column(window, justify="right")
    table.add_column("dead tuples / job (hold)", justify="right")
    for rate, run in runs:
        label = f"{run.tool.name} @ {rate:g}/s"
        if "backlog not drained" in run.notes:
            label += f" ({run.notes['jobs']} by the deadline)"
        if "failed" in run.notes:
            table.add_row(label, "failed", run.notes["failed"][:80], "", "", "")
            continue
        for index, (title, key, fmt) in enumerate(ROWS):
            cells = [fmt.format(run.metrics[f"{w}_{key}"]) for w in WINDOWS]
            dead = f"{run.metrics['dead_tuples_per_job_hold']:.2f}" if index == 0 else ""
            table.add_row(label if index == 0 else "", title, *cells, dead)
        table.add_section()
    console.print(table)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--tools", default="ours", help="comma-separated: ours,pgqueuer,...")
    parser.add_argument("--rates", default="800,5000", help="offered jobs/s, comma-separated")
    parser.add_argument("--tick", type=float, default=0.02, help="seconds between batch calls")
    parser.add_argument("--before", type=float, default=60.0, help="seconds before the hold")
    parser.add_argument("--hold", type=float, default=180.0, help="seconds xmin is held")
    parser.add_argument("--after", type=float, default=30.0, help="seconds after the hold")
    parser.add_argument("--workers", type=int, default=2, help="worker processes per tool")
    parser.add_argument(
        "--drain-timeout", type=float, default=300.0, help="seconds to finish the backlog"
    )
    parser.add_argument("--json", type=Path, default=Path("held_xmin.json"))
    parser.add_argument("--work-dir", type=Path, default=WORK_DIR)
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    console = Console(width=max(Console().width, 130))
    started = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
    work_dir = args.work_dir / str(os.getpid())
    runs: list[tuple[float, ToolRun]] = []
    for rate in (float(r) for r in args.rates.split(",")):
        scenario = Scenario(
            rate, args.tick, args.before, args.hold, args.after, args.workers, args.drain_timeout
        )
        for name in args.tools.split(","):
            runs.append((rate, run_tool(name, scenario, work_dir, console)))
    render(runs, console)
    payload = {
        "conditions": {
            "started": started,
            "finished": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
            "tick_s": args.tick,
            "windows_s": {"before": args.before, "hold": args.hold, "after": args.after},
            "workers_per_tool": args.workers,
            "cpus": os.cpu_count(),
            "load_average_at_end": os.getloadavg(),
            "python": platform.python_version(),
            "postgres": pg.scalar_text(pg.ADMIN_DSN, "SHOW server_version"),
            "autovacuum": "on (server default): the held snapshot is what stops it",
        },
        "runs": [
            {"tool": run.tool.name, "rate": rate, "metrics": run.metrics, "notes": run.notes}
            for rate, run in runs
        ],
    }
    args.json.write_text(json.dumps(payload, indent=2) + "\n")
    console.print(f"JSON written to {args.json}")
    return 1 if any("failed" in run.notes for _, run in runs) else 0


if __name__ == "__main__":
    sys.exit(main())
