"""Rendering: the comparison table (rich), the targets, and the JSON file."""

from __future__ import annotations

import json
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from bench._peers.phases import ToolRun

OURS, PGQUEUER, PROCRASTINATE = "ours", "pgqueuer", "procrastinate"


class Better(StrEnum):
    HIGHER = "higher"
    LOWER = "lower"


@dataclass(frozen=True)
class Metric:
    key: str
    label: str
    better: Better


METRICS = (
    Metric("single_enqueue_jobs_s", "one-by-one enqueue (jobs/s)", Better.HIGHER),
    Metric("bulk_enqueue_jobs_s", "bulk enqueue (jobs/s)", Better.HIGHER),
    Metric("drain_jobs_s", "drain, 2 worker processes (jobs/s)", Better.HIGHER),
    Metric("pickup_p50_ms", "pickup latency p50 (ms)", Better.LOWER),
    Metric("pickup_p95_ms", "pickup latency p95 (ms)", Better.LOWER),
    Metric("pickup_p99_ms", "pickup latency p99 (ms)", Better.LOWER),
    Metric("wal_bytes_job", "WAL bytes/job (LSN diff, whole server)", Better.LOWER),
    Metric("wal_bytes_job_own_db", "WAL bytes/job (records of its own db)", Better.LOWER),
    Metric("dead_tuples_job", "dead tuples/job after drain", Better.LOWER),
)


@dataclass(frozen=True)
class Target:
    """A goal for ours: ``ours <metric>`` compared with a peer's figure times a factor."""

    label: str
    metric: str
    peer: str | None  # None: compare with the absolute ``factor``
    factor: float
    better: Better


TARGETS = (
    Target("drain >= 2x pgqueuer", "drain_jobs_s", PGQUEUER, 2.0, Better.HIGHER),
    Target("pickup p99 <= 10 ms", "pickup_p99_ms", None, 10.0, Better.LOWER),
    Target("bulk enqueue >= 2x pgqueuer", "bulk_enqueue_jobs_s", PGQUEUER, 2.0, Better.HIGHER),
    Target("WAL/job <= 0.5x pgqueuer", "wal_bytes_job", PGQUEUER, 0.5, Better.LOWER),
    Target(
        "WAL/job (own db) <= 0.5x pgqueuer", "wal_bytes_job_own_db", PGQUEUER, 0.5, Better.LOWER
    ),
)


def _cell(value: float | str | None) -> str:
    if value is None:
        return "-"
    if isinstance(value, str):
        return value[:40]  # the whole reason is in the JSON
    return f"{value:,.1f}" if value < 100 else f"{value:,.0f}"


def _ratio(runs: dict[str, ToolRun], key: str, peer: str) -> str:
    ours = runs[OURS].metrics.get(key) if OURS in runs else None
    theirs = runs[peer].metrics.get(key) if peer in runs else None
    if isinstance(ours, float) and isinstance(theirs, float) and theirs:
        return f"{ours / theirs:.2f}"
    return "-"


def render_table(runs: dict[str, ToolRun], console: Console) -> None:
    table = Table(title="queue runtimes, same PostgreSQL and machine")
    for header in ("metric", OURS, PGQUEUER, PROCRASTINATE, "ours/pgqueuer", "ours/procrastinate"):
        table.add_column(header, justify="left" if header == "metric" else "right")
    for metric in METRICS:
        cells = [
            _cell(runs[t].metrics.get(metric.key)) if t in runs else "-"
            for t in (OURS, PGQUEUER, PROCRASTINATE)
        ]
        table.add_row(
            metric.label,
            *cells,
            _ratio(runs, metric.key, PGQUEUER),
            _ratio(runs, metric.key, PROCRASTINATE),
        )
    console.print(table)


def evaluate_targets(runs: dict[str, ToolRun]) -> list[dict[str, Any]]:
    return [_evaluate(target, runs) for target in TARGETS]


def _evaluate(target: Target, runs: dict[str, ToolRun]) -> dict[str, Any]:
    ours = runs[OURS].metrics.get(target.metric) if OURS in runs else None
    if target.peer is None:
        bound: float | str | None = target.factor
    else:
        peer_value = runs[target.peer].metrics.get(target.metric) if target.peer in runs else None
        bound = peer_value * target.factor if isinstance(peer_value, float) else None
    if not isinstance(ours, float) or not isinstance(bound, float):
        return {"target": target.label, "ours": ours, "bound": bound, "met": None}
    met = ours >= bound if target.better is Better.HIGHER else ours <= bound
    return {"target": target.label, "ours": round(ours, 2), "bound": round(bound, 2), "met": met}


def render_targets(results: list[dict[str, Any]], console: Console) -> None:
    for result in results:
        verdict = {True: "[green]met[/]", False: "[red]MISSED[/]", None: "[yellow]n/a[/]"}[
            result["met"]
        ]
        console.print(
            f"  {verdict}  {result['target']}: ours {_cell(result['ours'])}, bound {_cell(result['bound'])}"
        )


def render_notes(runs: dict[str, ToolRun], console: Console) -> None:
    for name, run in runs.items():
        console.print(f"[bold]{name}[/]: bulk = {run.tool.bulk_api}; workers = {run.tool.runner}")
        for key, note in run.notes.items():
            console.print(f"    {key}: {note}")


def write_json(
    path: Path, conditions: dict[str, Any], runs: dict[str, ToolRun], targets: list[dict[str, Any]]
) -> None:
    tools = {
        name: {
            "metrics": run.metrics,
            "notes": run.notes,
            "details": run.details,
            "bulk_api": run.tool.bulk_api,
            "runner": run.tool.runner,
        }
        for name, run in runs.items()
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        json.dumps({"conditions": conditions, "tools": tools, "targets": targets}, indent=2)
    )
