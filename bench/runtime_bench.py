"""Benchmark queue_runtime against pgqueuer and procrastinate, side by side.

    .venv/bin/python bench/runtime_bench.py [--jobs 20000] [--rate 200] [--duration 20]

Each tool gets its own fresh database on the same PostgreSQL (created and
dropped here), 2 worker processes running its own worker CLI, and no-op jobs.
See bench/README.md for what each figure means and how it is measured.
"""

from __future__ import annotations

import argparse
import datetime as dt
import functools
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make `bench` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rich.console import Console

from bench._peers import pg
from bench._peers.phases import (
    BenchConfig,
    ToolRun,
    measure_bulk_and_drain,
    measure_latency,
    measure_single,
)
from bench._peers.report import (
    evaluate_targets,
    render_notes,
    render_table,
    render_targets,
    write_json,
)
from bench._peers.tool import Tool

WORK_DIR = Path(__file__).resolve().parent / "_work"

PHASES: tuple[tuple[str, Callable[[ToolRun], None], tuple[str, ...]], ...] = (
    ("install", lambda run: install(run), ()),
    ("one-by-one enqueue", measure_single, ("single_enqueue_jobs_s",)),
    (
        "bulk enqueue + drain",
        measure_bulk_and_drain,
        (
            "bulk_enqueue_jobs_s",
            "drain_jobs_s",
            "wal_bytes_job",
            "wal_bytes_job_own_db",
            "dead_tuples_job",
        ),
    ),
    ("pickup latency", measure_latency, ("pickup_p50_ms", "pickup_p95_ms", "pickup_p99_ms")),
)
ALL_METRICS = tuple(key for _, _, keys in PHASES for key in keys)


def install(run: ToolRun) -> None:
    run.tool.install(run.dsn)
    run.notes["autovacuum off on tables"] = str(pg.disable_autovacuum(run.dsn))


# Each tool's module is imported only when its turn comes: a tool that cannot
# even be imported fails its own column, not the run.
def _ours(args: argparse.Namespace) -> Tool:
    from bench._peers.ours_tool import OursTool

    return OursTool(args.ours_worker_args.split())


def _pgqueuer(args: argparse.Namespace) -> Tool:
    from bench._peers.pgqueuer_tool import PgqueuerTool

    return PgqueuerTool()


def _procrastinate(args: argparse.Namespace) -> Tool:
    from bench._peers.procrastinate_tool import ProcrastinateTool

    return ProcrastinateTool()


TOOLS: dict[str, Callable[[argparse.Namespace], Tool]] = {
    "ours": _ours,
    "pgqueuer": _pgqueuer,
    "procrastinate": _procrastinate,
}


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--jobs", type=int, default=20_000, help="N jobs for bulk enqueue and drain"
    )
    parser.add_argument(
        "--single-jobs", type=int, default=None, help="jobs for one-by-one enqueue (default N)"
    )
    parser.add_argument(
        "--batch", type=int, default=1_000, help="jobs per bulk enqueue call, every tool"
    )
    parser.add_argument(
        "--rate", type=float, default=200.0, help="jobs/s for the pickup latency phase"
    )
    parser.add_argument(
        "--duration", type=float, default=20.0, help="seconds of the pickup latency phase"
    )
    parser.add_argument("--workers", type=int, default=2, help="worker processes per tool")
    parser.add_argument(
        "--repeat", type=int, default=1, help="runs per tool, interleaved; figures are medians"
    )
    parser.add_argument(
        "--tools", default=",".join(TOOLS), help="comma-separated subset of: " + ", ".join(TOOLS)
    )
    parser.add_argument(
        "--ours-worker-args",
        default="",
        help='extra `queue-runtime worker` options, e.g. "--pool batch" (default: none)',
    )
    parser.add_argument("--json", type=Path, default=WORK_DIR / "runtime_bench.json")
    parser.add_argument(
        "--work-dir", type=Path, default=WORK_DIR, help="worker logs and start records go here"
    )
    return parser.parse_args(argv)


def _fail(run: ToolRun, keys: tuple[str, ...], reason: str) -> None:
    for key in keys:
        run.metrics.setdefault(key, reason)


def run_phases(run: ToolRun, console: Console) -> None:
    """Each phase guarded: a failure is recorded in the table, and later phases still run."""
    for index, (name, step, keys) in enumerate(PHASES):
        console.print(f"  {run.tool.name}: {name} ...")
        started = time.monotonic()
        try:
            step(run)
        except Exception as exc:  # per-phase runner: becomes a "failed" cell
            reason = f"failed: {type(exc).__name__}: {exc}".replace("\n", " ")
            console.print(f"    [red]{reason[:300]}[/]")
            _fail(run, keys, reason)
            if index == 0:  # nothing can run without the schema
                _fail(run, ALL_METRICS, "skipped: install failed")
                return
        load = os.getloadavg()[0]  # the machine is shared: say how busy it was
        run.notes[f"{name} took"] = f"{time.monotonic() - started:.1f}s, load avg 1 min {load:.1f}"


def run_tool(
    name: str, factory: Callable[[], Tool], config: BenchConfig, console: Console
) -> ToolRun:
    database = f"bench_{name}_{os.getpid()}"
    dsn = pg.create_database(database)
    try:
        tool = factory()
    except Exception as exc:  # the tool cannot even load: report it as a failed column
        pg.drop_database(database)
        run = ToolRun(_Unavailable(name), dsn, config)
        _fail(run, ALL_METRICS, f"failed: cannot load: {type(exc).__name__}: {exc}")
        return run
    run = ToolRun(tool, dsn, config)
    try:
        run_phases(run, console)
    finally:
        tool.cleanup()
        pg.drop_database(database)
    return run


class _Unavailable:
    """Stands in for a tool whose module failed to import, so its column says why."""

    bulk_api = runner = "-"
    remaining_sql = ""

    def __init__(self, name: str) -> None:
        self.name = name


def conditions(args: argparse.Namespace, config: BenchConfig, started: str) -> dict[str, Any]:
    return {
        "started": started,
        "finished": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "jobs": config.jobs,
        "single_jobs": config.single_jobs,
        "batch": config.batch,
        "rate": config.rate,
        "duration": config.duration,
        "workers_per_tool": config.workers,
        "repeat": args.repeat,
        "ours_worker_args": args.ours_worker_args,
        "cpus": os.cpu_count(),
        "load_average_at_end": os.getloadavg(),
        "python": platform.python_version(),
        "postgres": pg.scalar_text(pg.ADMIN_DSN, "SHOW server_version"),
        "autovacuum": "disabled on every bench table (ALTER TABLE ... SET autovacuum_enabled = false)",
    }


def config_from(args: argparse.Namespace) -> BenchConfig:
    return BenchConfig(
        jobs=args.jobs,
        single_jobs=args.single_jobs or args.jobs,
        batch=args.batch,
        rate=args.rate,
        duration=args.duration,
        workers=args.workers,
        work_dir=args.work_dir / str(os.getpid()),
    )


def report(
    args: argparse.Namespace, runs: dict[str, ToolRun], started: str, console: Console
) -> None:
    targets = evaluate_targets(runs)
    render_table(runs, console)
    render_targets(targets, console)
    render_notes(runs, console)
    write_json(args.json, conditions(args, config_from(args), started), runs, targets)
    console.print(f"JSON written to {args.json}")


def merge_repeats(runs: list[ToolRun]) -> ToolRun:
    """The median of each figure over the repeats; a figure that failed once shows the failure."""
    last = runs[-1]
    if len(runs) == 1:
        return last
    merged = ToolRun(
        last.tool, last.dsn, last.config, notes=dict(last.notes), details=dict(last.details)
    )
    for key in dict.fromkeys(k for run in runs for k in run.metrics):
        values = [run.metrics.get(key, "failed: missing") for run in runs]
        failures = [v for v in values if not isinstance(v, float)]
        merged.metrics[key] = failures[0] if failures else statistics.median(values)  # type: ignore[type-var]
        merged.details[f"repeats {key}"] = [
            f"{v:.1f}" if isinstance(v, float) else v for v in values
        ]
    return merged


def run_all(args: argparse.Namespace, config: BenchConfig, console: Console) -> dict[str, ToolRun]:
    """Tools in turn, ``--repeat`` times interleaved (ours, peers, ours, ...) against drift."""
    names = args.tools.split(",")
    repeats: dict[str, list[ToolRun]] = {name: [] for name in names}
    for index in range(args.repeat):
        work = config.work_dir / f"r{index}" if args.repeat > 1 else config.work_dir
        for name in names:
            console.print(f"[bold]{name}[/] (run {index + 1}/{args.repeat})")
            factory = functools.partial(TOOLS[name], args)
            repeats[name].append(run_tool(name, factory, replace(config, work_dir=work), console))
    return {name: merge_repeats(runs) for name, runs in repeats.items()}


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    started = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
    console = Console(width=max(Console().width, 150))
    runs = run_all(args, config_from(args), console)
    report(args, runs, started, console)
    return 0


if __name__ == "__main__":
    sys.exit(main())
