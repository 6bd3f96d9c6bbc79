"""The runtime benchmark's own arithmetic: percentiles, start records, pacing, targets."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from bench._peers.phases import BenchConfig, ToolRun, percentile
from bench._peers.recorder import Start, count_starts, read_starts
from bench._peers.report import OURS, PGQUEUER, _ratio, evaluate_targets
from bench._peers.tool import paced_slots, payloads


def test_percentile_is_nearest_rank() -> None:
    values = [float(v) for v in range(1, 101)]
    assert percentile(values, 0.50) == 50.0
    assert percentile(values, 0.99) == 99.0
    assert percentile([7.0], 0.99) == 7.0


def test_start_records_keep_the_first_run_and_skip_a_partial_line(tmp_path: Path) -> None:
    (tmp_path / "starts-1.txt").write_text("1 10.0 10.5\n2 11.0 11.2\n")
    (tmp_path / "starts-2.txt").write_text("1 10.0 12.0\n3 12.0")  # 1 ran twice; 3 is cut
    assert read_starts(tmp_path) == {1: Start(10.0, 10.5), 2: Start(11.0, 11.2)}
    assert count_starts(tmp_path) == 3  # complete lines, duplicates included


def test_paced_slots_are_evenly_spaced_at_the_rate() -> None:
    slots = list(paced_slots(5, rate=200.0))
    gaps = [b - a for (_, a), (_, b) in itertools.pairwise(slots)]
    assert [index for index, _ in slots] == [0, 1, 2, 3, 4]
    assert gaps == pytest.approx([0.005] * 4)


def test_payloads_are_numbered_from_the_first_sequence() -> None:
    assert payloads(3, 2) == [{"i": 3, "t": 0.0}, {"i": 4, "t": 0.0}]


class _Named:
    def __init__(self, name: str) -> None:
        self.name = name


def _run(name: str, **metrics: float | str) -> ToolRun:
    config = BenchConfig(10, 10, 10, 200.0, 1.0, 2, Path("."))
    return ToolRun(_Named(name), "dsn", config, dict(metrics))  # type: ignore[arg-type]


def test_targets_compare_ours_with_pgqueuer_and_absolute_bounds() -> None:
    runs = {
        OURS: _run(OURS, drain_jobs_s=9000.0, pickup_p99_ms=12.0, wal_bytes_job=800.0),
        PGQUEUER: _run(PGQUEUER, drain_jobs_s=4000.0, wal_bytes_job=2400.0),
    }
    verdicts = {t["target"]: t["met"] for t in evaluate_targets(runs)}
    assert verdicts["drain >= 2x pgqueuer"] is True
    assert verdicts["pickup p99 <= 10 ms"] is False
    assert verdicts["WAL/job <= 0.5x pgqueuer"] is True
    assert verdicts["bulk enqueue >= 2x pgqueuer"] is None  # no figures: not judged


def test_a_failed_figure_gives_no_ratio() -> None:
    runs = {
        OURS: _run(OURS, drain_jobs_s="failed: boom"),
        PGQUEUER: _run(PGQUEUER, drain_jobs_s=1.0),
    }
    assert _ratio(runs, "drain_jobs_s", PGQUEUER) == "-"
