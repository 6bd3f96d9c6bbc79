"""The held-xmin bench's arithmetic: which job falls in which window, and what each window says."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from bench._peers.phases import WARMUP_SEQ, BenchConfig, ToolRun
from bench._peers.recorder import Start
from bench.held_xmin_bench import Producer, Timeline, record


class _Named:
    name = "ours"


def _run() -> ToolRun:
    config = BenchConfig(0, 0, 0, 10.0, 0.0, 2, Path("."))
    run = ToolRun(_Named(), "postgresql://unused", config)  # type: ignore[arg-type]
    run.metrics["dead_tuples_hold_start"] = 100
    run.metrics["dead_tuples_hold_end"] = 112
    return run


def test_windows_split_jobs_by_enqueue_stamp_and_count_starts_by_start_time() -> None:
    timeline = Timeline(start=0.0, hold_start=10.0, hold_end=20.0, end=30.0, enqueued=5)
    starts = {
        0: Start(1.0, 1.01),  # before: picked up in 10 ms
        1: Start(9.0, 9.02),  # before
        2: Start(11.0, 18.0),  # enqueued during the hold, waited 7 s
        3: Start(19.5, 21.0),  # enqueued during the hold, started after it
        4: Start(25.0, 25.005),
        WARMUP_SEQ + 1: Start(0.5, 0.6),  # warm-up: never measured
    }
    run = _run()
    record(run, starts, timeline)
    assert run.metrics["before_offered_jobs_s"] == pytest.approx(0.2)
    assert run.metrics["hold_offered_jobs_s"] == pytest.approx(0.2)
    assert run.metrics["hold_completed_jobs_s"] == pytest.approx(0.1)  # only job 2 started in it
    assert run.metrics["after_completed_jobs_s"] == pytest.approx(0.2)
    assert run.metrics["hold_pickup_p99_ms"] == pytest.approx(7000.0)
    assert run.metrics["hold_backlog_at_end"] == 1.0  # job 3 waits past the hold's end
    assert run.metrics["after_backlog_at_end"] == 0.0
    # 12 dead tuples grew during the hold, over the one job finished in it
    assert run.metrics["dead_tuples_per_job_hold"] == pytest.approx(12.0)
    assert run.metrics["hold_throughput_vs_before"] == pytest.approx(0.5)
    assert run.notes["jobs"] == "5/5 offered jobs ran"


def test_a_job_that_never_ran_shows_in_the_count() -> None:
    timeline = Timeline(start=0.0, hold_start=1.0, hold_end=2.0, end=3.0, enqueued=2)
    run = _run()
    record(run, {0: Start(0.5, 0.6)}, timeline)
    assert run.notes["jobs"] == "1/2 offered jobs ran"


class _SlowTool:
    """Each batch call takes 50 ms: longer than the 10 ms tick."""

    name = "slow"

    def __init__(self) -> None:
        self.offered = 0

    def enqueue_bulk(self, dsn: str, jobs: list[dict[str, float]], batch: int) -> None:
        time.sleep(0.05)
        self.offered += len(jobs)


def test_a_slow_enqueue_call_does_not_lower_the_offered_rate() -> None:
    tool, timeline = _SlowTool(), Timeline()
    producer = Producer(tool, "postgresql://unused", 1000.0, 0.01, timeline)  # type: ignore[arg-type]
    started = time.monotonic()
    producer.stop_at = time.time() + 1.0
    producer.start()
    producer.join(timeout=5)
    elapsed = time.monotonic() - started
    # credited on the clock: about 1,000 jobs in the second, though only ~20 calls fit in it;
    # credited per tick it would be ~200 (10 a call). The margin is for a loaded machine
    # starting the thread late.
    assert tool.offered == timeline.enqueued
    assert 0.6 * 1000 * (elapsed - 0.05) <= tool.offered <= 1000 * elapsed
    assert timeline.late_ticks > 0 and timeline.errors == []
