"""Benchmark queue_runtime against pgqueuer and procrastinate, side by side.

    .venv/bin/python bench/runtime_bench.py [--jobs 20000] [--rate 200] [--duration 20]

Each tool gets its own fresh database on the same PostgreSQL (created and
dropped here), 2 worker processes running its own worker CLI, and no-op jobs.
See bench/README.md for what each figure means and how it is measured.

``--codecs N`` measures instead what the argument codecs cost per enqueue, in
process, with no database: encoding plain JSON (annotated: the fast path;
unannotated), a batch for ``enqueue_many``, a Django model reference, and a
whole ``enqueue`` into the in-memory store. ``--baseline-src DIR`` (a
``packages/queue-runtime/src`` of another tree, e.g. from ``git archive``)
runs the same figures on that tree too, side by side in one run.
"""

from __future__ import annotations

import argparse
import datetime as dt
import functools
import json
import os
import platform
import statistics
import subprocess
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
from bench._peers.tools import TOOLS

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
    parser.add_argument(
        "--codecs", type=int, default=0, help="N calls: per-enqueue cost of the argument codecs"
    )
    parser.add_argument(
        "--baseline-src", type=Path, default=None, help="with --codecs: another tree's runtime src"
    )
    parser.add_argument("--codecs-json", action="store_true", help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def _micro(call: Callable[[], object], n: int) -> float:
    """Microseconds per call: the best of 5 rounds of ``n`` calls (the least disturbed)."""
    best = float("inf")
    for _ in range(5):
        started = time.perf_counter()
        for _ in range(n):
            call()
        best = min(best, (time.perf_counter() - started) / n)
    return best * 1e6


def _django_group() -> object:
    import django
    from django.conf import settings

    settings.configure(
        INSTALLED_APPS=["django.contrib.contenttypes", "django.contrib.auth"],
        DATABASES={"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": ":memory:"}},
    )
    django.setup()
    from django.contrib.auth.models import Group

    return Group(pk=7, name="staff")  # saved as far as a reference is concerned: it has a pk


def codec_costs(n: int) -> dict[str, float | str]:
    """Per-call microseconds of this process's queue_runtime (see the module docstring)."""
    from queue_runtime import Mode, Settings, configure, job
    from queue_runtime.errors import PayloadError
    from queue_runtime.payload import PayloadCodec
    from queue_runtime.registry import Registry
    from queue_runtime.testing import memory_stores

    def typed(i: int, t: float) -> None: ...
    def untyped(i, t):  # type: ignore[no-untyped-def]
        ...

    fast, loose = PayloadCodec(typed, "b.typed"), PayloadCodec(untyped, "b.untyped")
    group, batch = _django_group(), [((), {"i": k, "t": 0.5}) for k in range(500)]
    out: dict[str, float | str] = {
        "plain_annotated_us": _micro(lambda: fast.encode((), {"i": 1, "t": 0.5}, 1 << 20), n),
        "plain_unannotated_us": _micro(lambda: loose.encode((1, 0.5), {}, 1 << 20), n),
        "bulk_500_per_call_us": _micro(lambda: fast.encode_many(batch, 1 << 20), max(1, n // 500))
        / 500,
    }
    settings = Settings(mode=Mode.QUEUE)
    configure(settings, stores=memory_stores(settings))
    plain = job(name="b.plain", pool="batch", registry=Registry())(typed)
    out["enqueue_plain_memory_us"] = _micro(lambda: plain.enqueue(1, 0.5), n)
    try:
        out["model_ref_encode_us"] = _micro(lambda: loose.encode((group, 0.5), {}, 1 << 20), n)
        ref = job(name="b.ref", pool="batch", registry=Registry())(untyped)
        out["enqueue_model_ref_memory_us"] = _micro(lambda: ref.enqueue(group, 0.5), n)
    except PayloadError as exc:
        out["model_ref_encode_us"] = out["enqueue_model_ref_memory_us"] = f"refused: {exc}"[:60]
    return out


def compare_codecs(args: argparse.Namespace, console: Console) -> int:
    """This tree's codec costs, and ``--baseline-src``'s: fresh processes, interleaved
    ``--repeat`` times (at least 3), the best figure of each kept against drift."""
    sides = {"this tree": None, "baseline": args.baseline_src}
    if args.baseline_src is None:
        del sides["baseline"]
    columns: dict[str, dict[str, Any]] = {name: {} for name in sides}
    for _ in range(max(3, args.repeat)):
        for name, src in sides.items():
            for key, value in _codec_run(args.codecs, src).items():
                seen = columns[name].get(key)
                best = isinstance(value, str) or seen is None or value < seen
                columns[name][key] = value if best else seen
    for key in columns["this tree"]:
        console.print(f"{key:30} " + "  ".join(f"{name}: {c[key]}" for name, c in columns.items()))
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(columns, indent=2))
    return 0


def _codec_run(calls: int, src: Path | None) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    if src is not None:
        env["PYTHONPATH"] = str(src.resolve())
    command = [sys.executable, __file__, "--codecs", str(calls), "--codecs-json"]
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
    found: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    return found


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
            factory = functools.partial(TOOLS[name], args.ours_worker_args)
            repeats[name].append(run_tool(name, factory, replace(config, work_dir=work), console))
    return {name: merge_repeats(runs) for name, runs in repeats.items()}


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.codecs and args.codecs_json:
        print(
            json.dumps(
                {
                    k: v if isinstance(v, str) else round(v, 3)
                    for k, v in codec_costs(args.codecs).items()
                }
            )
        )
        return 0
    started = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
    console = Console(width=max(Console().width, 150))
    if args.codecs:
        return compare_codecs(args, console)
    runs = run_all(args, config_from(args), console)
    report(args, runs, started, console)
    return 0


if __name__ == "__main__":
    sys.exit(main())
