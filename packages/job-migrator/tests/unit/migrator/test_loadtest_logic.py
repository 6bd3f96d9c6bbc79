"""migrator loadtest without servers: burst profiles, the schedule, the ledger analysis,
the pass/fail rules, the renderers, default arguments, the chaos plan."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest
from rich.console import Console

from migrator.loadtest import (
    Burst,
    ChaosEvent,
    ChaosKind,
    Execution,
    LoadTestReport,
    LoadTestSpec,
    SpecError,
    evaluate,
    parse_burst,
    parse_chaos,
    parse_duration,
)
from migrator.loadtest.chaos import plan
from migrator.loadtest.ledger import (
    duplicate_completions,
    duplicate_deliveries,
    with_application_name,
)
from migrator.loadtest.load import as_call, signature_generator
from migrator.loadtest.report import Latency, latency_of, percentile
from migrator.loadtest.spec import schedule
from migrator.render.loadtest import render_json, render_markdown, render_terminal
from queue_runtime.jobs import job
from queue_runtime.registry import Registry

T0 = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)


# -- burst profiles and durations ----------------------------------------------
@pytest.mark.parametrize(
    ("text", "seconds"),
    [("30s", 30.0), ("250ms", 0.25), ("2m", 120.0), ("12", 12.0), (" 1.5s ", 1.5), (3, 3.0)],
)
def test_durations(text: str | int, seconds: float) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "abc", "5h", "-1s", "0"])
def test_bad_durations(text: str) -> None:
    with pytest.raises(SpecError):
        parse_duration(text)


def test_burst_profiles() -> None:
    assert parse_burst(None) == [] and parse_burst("  ") == []
    assert parse_burst("10x:30s") == [Burst(factor=10, seconds=30)]
    assert parse_burst("10X : 30s @ 5s, 2.5x:500ms") == [
        Burst(factor=10, seconds=30, start=5),
        Burst(factor=2.5, seconds=0.5),
    ]


@pytest.mark.parametrize("text", ["10", "x:30s", "10x", "10x:", "10x:30s@", "ten x:3s", "10x:30h"])
def test_bad_burst_profiles(text: str) -> None:
    with pytest.raises(SpecError, match=r"burst|duration"):
        parse_burst(text)


def test_a_burst_without_start_is_centred_and_must_fit_the_run() -> None:
    assert Burst(factor=10, seconds=30).window(90) == (30.0, 60.0)
    assert Burst(factor=2, seconds=5, start=1).window(90) == (1.0, 6.0)
    with pytest.raises(ValueError, match="ends after"):
        LoadTestSpec(job="j", sandbox="s", rate=1, duration=10, bursts=parse_burst("2x:5s@6s"))


def test_rate_and_schedule_follow_the_bursts() -> None:
    spec = LoadTestSpec(job="j", sandbox="s", rate=10, duration=4, bursts=parse_burst("3x:1s@1s"))
    assert spec.rate_at(0.5) == 10 and spec.rate_at(1.0) == 30 and spec.rate_at(2.0) == 10
    offsets = schedule(spec)
    assert len(offsets) == spec.planned_jobs() == 60  # 3 s at 10/s + 1 s at 30/s
    assert sum(1 <= o < 2 for o in offsets) == 30
    assert offsets == sorted(offsets) and offsets[-1] < 4


def test_chaos_kinds() -> None:
    assert parse_chaos("kill-workers, pg-terminate,kill-workers") == [
        ChaosKind.KILL_WORKERS,
        ChaosKind.PG_TERMINATE,
    ]
    assert parse_chaos(None) == []
    with pytest.raises(SpecError, match="unknown chaos kind 'flood'"):
        parse_chaos("flood")


def test_chaos_plan_spreads_events_over_the_middle_of_the_run() -> None:
    spec = LoadTestSpec(
        job="j", sandbox="s", rate=1, duration=10, chaos=parse_chaos("kill-workers,redis-restart")
    )
    events = plan(spec)
    assert [k for _, k in events] == [
        ChaosKind.KILL_WORKERS,
        ChaosKind.KILL_WORKERS,
        ChaosKind.REDIS_RESTART,
    ]
    assert [o for o, _ in events] == [1.5, 5.0, 8.5]


def test_generator_must_be_module_colon_function() -> None:
    with pytest.raises(ValueError, match="MODULE:FUNCTION"):
        LoadTestSpec(job="j", sandbox="s", rate=1, duration=1, args="module.function")


# -- arguments -------------------------------------------------------------------
def test_default_arguments_come_from_the_signature() -> None:
    registry = Registry()

    @job(registry=registry)
    def charge(order_id: int, customer: str, amount: float, live: bool, note: str = "x") -> None:
        pass

    generate = signature_generator(charge)
    assert generate(3) == (
        (),
        {"order_id": 3, "customer": "customer-3", "amount": 3.0, "live": False},
    )


def test_an_argument_that_cannot_be_derived_asks_for_a_generator() -> None:
    registry = Registry()

    @job(registry=registry)
    def ship(when: datetime) -> None:
        pass

    with pytest.raises(SpecError, match="--args"):
        signature_generator(ship)


def test_generator_answers() -> None:
    assert as_call({"n": 1}) == ((), {"n": 1})
    assert as_call([1, 2]) == ((1, 2), {})
    assert as_call(((1,), {"n": 2})) == ((1,), {"n": 2})
    assert as_call(7) == ((7,), {})


def test_application_name_is_set_once() -> None:
    url = "postgresql://u@h:5432/db?sslmode=disable&application_name=old"
    assert with_application_name(url, "w1") == (
        "postgresql://u@h:5432/db?sslmode=disable&application_name=w1"
    )
    assert with_application_name("postgresql://h/db", "w") == "postgresql://h/db?application_name=w"


# -- the ledger ----------------------------------------------------------------------
def run(job_id: int, attempt: int, pid: int, done: bool = True, failed: bool = False) -> Execution:
    start = T0 + timedelta(seconds=attempt)
    return Execution(
        job_id=job_id,
        attempt=attempt,
        pid=pid,
        started_at=start,
        finished_at=start + timedelta(seconds=0.2) if done else None,
        failed=failed,
    )


def test_duplicate_completions_count_bodies_that_ran_to_completion() -> None:
    rows = [
        (run(1, 1, 10), None),  # completed, then redelivered and completed again: duplicate
        (run(1, 2, 11), None),
        (run(2, 1, 10, done=False), None),  # cut short by the kill, then completed: fine
        (run(2, 2, 11), None),
        (run(3, 1, 10, failed=True), "k3"),  # raised, then completed: fine
        (run(3, 2, 11), "k3"),
        (run(4, 1, 10), "k4"),  # one key, two jobs, both completed: duplicate
        (run(5, 1, 11), "k4"),
        (run(6, 1, 11), "k6"),
    ]
    found = duplicate_completions(rows)
    assert [(d.key, d.keyed, d.completions) for d in found] == [("1", False, 2), ("k4", True, 2)]
    assert [e.job_id for e in found[1].executions] == [4, 5]
    assert duplicate_deliveries(rows) == 3  # jobs 1, 2 and 3 started twice


# -- the rules ------------------------------------------------------------------------
def report(**changes: object) -> LoadTestReport:
    spec = LoadTestSpec(
        job="app.jobs.charge",
        sandbox="app.sandbox",
        rate=10,
        duration=5,
        chaos=parse_chaos("kill-workers"),
        sla_p99_ms=250,
    )
    base = LoadTestReport(
        job=spec.job,
        run_id="abcd1234",
        fingerprint="f" * 64,
        spec=spec,
        started_at=T0,
        finished_at=T0 + timedelta(seconds=9),
        enqueued=50,
        succeeded=50,
        throughput=9.5,
        latency=Latency(p50_ms=5, p95_ms=40, p99_ms=120, max_ms=130),
        executions=52,
        duplicate_deliveries=2,
        chaos_events=[
            ChaosEvent(kind=ChaosKind.KILL_WORKERS, at=T0, offset=1.2, detail="SIGKILL worker 0")
        ],
    )
    return base.model_copy(update=changes)


def test_a_clean_run_passes() -> None:
    assert evaluate(report()) == (True, [])


@pytest.mark.parametrize(
    ("changes", "reason"),
    [
        ({"lost": 1, "succeeded": 49}, "1 job(s) lost"),
        ({"unfinished": 3}, "3 job(s) not finished 60s after the load"),
        ({"dead": 1}, "1 job(s) dead-lettered (allowed: 0)"),
        ({"latency": Latency(p99_ms=251)}, "p99 dispatch latency 251 ms > SLA 250 ms"),
        ({"latency": Latency()}, "no dispatch latency measured"),
        ({"chaos_events": []}, "chaos kill-workers was asked for and did not happen"),
        ({"enqueued": 0}, "no job was enqueued"),
    ],
)
def test_each_rule_fails_a_run(changes: dict[str, object], reason: str) -> None:
    passed, reasons = evaluate(report(**changes))
    assert not passed
    assert any(r.startswith(reason) for r in reasons), reasons


def test_duplicate_completions_fail_a_run_and_are_shown() -> None:
    rows = [(run(7, 1, 10), None), (run(7, 2, 11), None)]
    failed = report(duplicate_completions=duplicate_completions(rows))
    failed.passed, failed.reasons = evaluate(failed)
    assert failed.reasons == ["1 key(s) completed more than once (2 completions)"]
    console = Console(record=True, width=200)
    render_terminal(failed, console)
    text = console.export_text()
    assert "FAILED: 1 key(s) completed more than once" in text
    assert "job 7 (no key): completed 2 times" in text
    markdown = render_markdown(failed)
    assert "## Duplicate completions" in markdown and "job 7 attempt 2 pid 11 completed" in markdown
    assert json.loads(render_json(failed))["duplicate_completions"][0]["key"] == "7"


def test_a_pass_renders_its_certification_and_figures() -> None:
    passed = report(passed=True, certified=True, certified_by="alice")
    console = Console(record=True, width=200)
    render_terminal(passed, console)
    assert "PASSED; certified by alice at fingerprint ffffffffffff" in console.export_text()
    markdown = render_markdown(passed)
    assert "| dispatch latency p99 | 120.0 ms (SLA 250 ms) |" in markdown
    assert "| 1.2s (" in markdown and "kill-workers | SIGKILL worker 0 |" in markdown
    figures = passed.figures()
    assert figures["p99_ms"] == 120 and figures["duplicate_completions"] == 0
    assert figures["chaos"] == ["kill-workers"]
    assert LoadTestReport.model_validate_json(render_json(passed)) == passed


def test_percentiles_are_nearest_rank() -> None:
    values = [float(v) for v in range(1, 101)]
    assert percentile(values, 50) == 50 and percentile(values, 99) == 99
    assert percentile([3.0], 99) == 3.0 and percentile([], 50) is None
    assert latency_of([1.0, 2.0, 3.0]).max_ms == 3.0
