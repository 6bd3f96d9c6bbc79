"""The dashboard's pure parts: address checks, the inventory's phases, charts, the series cache."""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from queue_runtime.config import Idempotency, RolloutMode
from queue_runtime.store import JobStatus, ListState, Minute, Rollout
from queue_runtime.web import WebExtraMissing, make_wsgi_app
from queue_runtime.web._charts import bar_chart, hbar_chart, jobs_per_minute, nice_ticks, percent
from queue_runtime.web._migration import MigrationRow, read_inventory
from queue_runtime.web._series import SeriesCache
from queue_runtime.web.command import is_loopback

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("host", "local"),
    [
        ("127.0.0.1", True),
        ("localhost", True),
        ("::1", True),
        ("127.0.0.2", True),
        ("0.0.0.0", False),
        ("10.1.2.3", False),
        ("example.org", False),
        ("::", False),
    ],
)
def test_only_loopback_addresses_count_as_local(host: str, local: bool) -> None:
    assert is_loopback(host) is local


def test_inventory_phases_follow_the_plan(tmp_path: Path) -> None:
    jobs = [
        {"qualname": "a", "idempotency": "idempotent"},
        {"qualname": "b", "idempotency": "non_idempotent", "fast_track": True},
        {"qualname": "c", "idempotency": "needs_key", "keyless_idempotency": "non_idempotent"},
        {"qualname": "d", "idempotency": "unsafe"},
        {"qualname": "e", "idempotency": "unknown", "phase": "phase 9"},
        {"no": "qualname"},
    ]
    path = tmp_path / "inventory.json"
    path.write_text(json.dumps({"jobs": jobs}), encoding="utf-8")
    found = {name: (v.verdict, v.phase) for name, v in read_inventory(str(path)).items()}
    assert found == {
        "a": ("idempotent", "phase 1"),
        "b": ("non_idempotent", "phase 2"),
        "c": ("needs_key", "phase 3"),
        "d": ("unsafe", "phase 4"),
        "e": ("unknown", "phase 9"),
    }
    assert read_inventory(None) == {}


def test_chart_escapes_its_texts_and_marks_capped_minutes() -> None:
    svg = str(bar_chart("chart-x", "<b>t</b>", [0, 5, 10], jobs_per_minute, [False, False, True]))
    assert svg.startswith('<svg id="chart-x"') and "<b>" not in svg and "&lt;b&gt;" in svg
    assert svg.count("<rect") == 3 and "this minute: at least 10/min" in svg


@pytest.mark.parametrize(
    ("peak", "ticks"),
    [
        (0, [0.0, 1.0]),
        (0.25, [0.0, 0.1, 0.2, 0.30000000000000004]),
        (7, [0, 2, 4, 6, 8]),
        (21, [0, 10, 20, 30]),
        (100, [0, 25, 50, 75, 100]),
    ],
)
def test_axis_ticks_are_round_and_reach_the_peak(peak: float, ticks: list[float]) -> None:
    assert nice_ticks(peak) == pytest.approx(ticks)


def test_a_horizontal_chart_labels_its_axis_and_escapes_names() -> None:
    svg = str(hbar_chart("c", "t", [("<b>job</b>", 0.25), ("ok", 0.0)], percent))
    assert "&lt;b&gt;job&lt;/b&gt;" in svg and "<b>" not in svg
    ticks = [t.split(">")[-1] for t in svg.split("</text>") if 'class="tick"' in t]
    assert ticks == ["0%", "10%", "20%", "30%"] and svg.count("<rect") == 2


class FakeQueries:
    """Answers ``minutes`` with one job per minute and counts what was read."""

    def __init__(self) -> None:
        self.read: list[datetime] = []

    def now_minute(self) -> datetime:
        return NOW

    def minutes(self, starts: list[datetime], cap: int) -> list[Minute]:
        self.read += starts
        return [Minute(at, 1, 2.0) for at in starts]


def test_series_fills_the_hour_within_a_budget_and_keeps_closed_minutes() -> None:
    ticks = iter(range(1000))
    cache = SeriesCache(budget=2.5, chunk=10, clock=lambda: float(next(ticks)))
    queries = FakeQueries()
    first = cache.series(queries)  # type: ignore[arg-type]
    assert first.filling and len(queries.read) == 2 + 2 * 10  # live minutes, 2 chunks in budget
    while cache.series(queries).filling:  # type: ignore[arg-type]
        pass
    queries.read.clear()
    full = cache.series(queries)  # type: ignore[arg-type]
    assert queries.read == [NOW - timedelta(minutes=1), NOW]  # only the two live minutes
    assert full.succeeded == [1] * 60 and not full.filling


def test_a_missing_web_extra_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "jinja2", None)
    with pytest.raises(WebExtraMissing, match=r"pip install 'queue-runtime\[web\]'"):
        make_wsgi_app()


def test_every_runtime_status_is_a_filter_of_the_jobs_page() -> None:
    """``ListState`` repeats the runtime's statuses (an enum cannot extend another) and adds
    ``scheduled``: a status added to ``JobStatus`` without a filter would leave its jobs
    unlistable on the jobs page."""
    assert {s.value for s in JobStatus} | {"scheduled"} == {s.value for s in ListState}


@pytest.mark.parametrize(
    ("declared", "level", "runs"),
    [
        (Idempotency.UNKNOWN, Idempotency.UNKNOWN, "inline"),  # moved undecided: held
        (Idempotency.UNKNOWN, Idempotency.NEEDS_KEY, "inline"),  # decided, but not idempotent
        (Idempotency.UNKNOWN, Idempotency.IDEMPOTENT, "async"),  # decided idempotent: opened
        (None, Idempotency.UNKNOWN, "async"),  # nobody classified it: the gate is not asked
    ],
)
def test_the_jobs_page_says_a_job_moved_undecided_runs_inline_until_decided(
    declared: Idempotency | None, level: Idempotency | None, runs: str
) -> None:
    row = MigrationRow(
        job="app.refresh",
        verdict=None,
        certification=None,
        rollout=Rollout(job="app.refresh", mode=RolloutMode.ASYNC),
        stored=True,
        current="f" * 64,
        level=level,
        declared=declared,
    )
    assert row.runs[0] == runs
    assert row.gated is (runs == "inline")
