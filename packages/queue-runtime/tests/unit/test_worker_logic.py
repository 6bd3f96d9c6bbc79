"""Pure worker logic: retry decisions, backoff exponent, claim schedule, status table,
prefetch sizing, pool signals, the throughput window, executor threads."""

from __future__ import annotations

import random
import threading
import time
from contextvars import ContextVar
from datetime import UTC, datetime, timedelta

import pytest

from queue_runtime import Permanent, RetryPolicy, Settings
from queue_runtime.cli import render_status
from queue_runtime.config import PoolConfig
from queue_runtime.errors import ConfigError
from queue_runtime.jobs import JobFunction
from queue_runtime.metrics import _Window
from queue_runtime.retry import Backoff
from queue_runtime.store import ClaimedJob, Completion, Failure, PoolStats
from queue_runtime.worker import claim_schedule, current_job
from queue_runtime.worker._execute import Executor
from queue_runtime.worker._outcome import Outcome, OutcomeKind
from queue_runtime.worker._prefetch import PoolSignals, Prefetch
from queue_runtime.worker._resolve import Invocation, _names
from queue_runtime.worker._settle import Settlement, decide, failed_attempts
from queue_runtime.worker._wiring import pool_capacity

NOW = datetime(2030, 1, 1, tzinfo=UTC)
POLICY = RetryPolicy(max_attempts=5, base_delay=0.5, max_delay=300)


def claimed(attempt: int, max_attempts: int = 5) -> ClaimedJob:
    return ClaimedJob(1, "app.job", "batch", {}, attempt, max_attempts, None, None, NOW)


def settle(job: ClaimedJob, outcome: Outcome, seed: int = 3) -> Completion | Failure:
    backoff = Backoff(rng=random.Random(seed), now=lambda: NOW)
    return decide(Settlement(job, outcome, POLICY, False), backoff)


def test_success_is_a_completion_with_the_result() -> None:
    assert settle(claimed(1), Outcome(OutcomeKind.SUCCEEDED, result=[1])) == Completion(1, 1, [1])


def test_failure_is_retried_with_full_jitter_backoff() -> None:
    record = settle(claimed(3), Outcome(OutcomeKind.FAILED, error="boom"))
    assert isinstance(record, Failure) and record.retry_at is not None
    expected = random.Random(3).uniform(0, 0.5 * 2**2)
    assert (record.retry_at - NOW).total_seconds() == pytest.approx(expected, abs=1e-6)


@pytest.mark.parametrize(
    "outcome",
    [Outcome(OutcomeKind.FAILED, error="x", permanent=True), Outcome.rejected("unknown job")],
)
def test_permanent_failures_and_rejections_go_to_the_dlq_at_once(outcome: Outcome) -> None:
    assert settle(claimed(1), outcome).retry_at is None  # type: ignore[union-attr]


def test_last_attempt_goes_to_the_dlq() -> None:
    record = settle(claimed(5), Outcome.timed_out(2.0))
    assert isinstance(record, Failure)
    assert (record.retry_at, record.error) == (None, "timed out after 2s")


def test_backoff_exponent_ignores_tenant_deferrals() -> None:
    assert failed_attempts(claimed(2, 5), POLICY) == 2
    # Deferred 10 times: attempt 12, max_attempts 15, still the 2nd real attempt.
    assert failed_attempts(claimed(12, 15), POLICY) == 2
    assert failed_attempts(claimed(1, 50), POLICY) == 1  # config shrank since enqueue


def test_permanent_exceptions_match_dotted_or_builtin_names() -> None:
    assert "ValueError" in _names(ValueError) and "builtins.ValueError" in _names(ValueError)
    assert _names(Permanent) == {"queue_runtime.errors.Permanent"}


def test_claim_schedule_orders_by_priority_and_repeats_by_weight() -> None:
    settings = Settings(
        pools={
            "low": PoolConfig(priority=0, weight=1),
            "high": PoolConfig(priority=9, weight=3),
            "mid": PoolConfig(priority=5, weight=2),
        },
        default_pool="low",
    )
    assert claim_schedule(settings, ["low", "mid", "high"]) == ["high"] * 3 + ["mid"] * 2 + ["low"]
    assert claim_schedule(settings, ["low"]) == ["low"]
    with pytest.raises(ConfigError):
        claim_schedule(settings, ["nope"])


def test_pool_capacity_is_per_pool_unless_overridden() -> None:
    settings = Settings()
    assert pool_capacity(settings, ["transactional", "batch"], None) == {
        "transactional": 8,
        "batch": 4,
    }
    assert pool_capacity(settings, ["batch"], 2) == {"batch": 2}


def test_status_table_aligns_columns() -> None:
    stats = [
        PoolStats(
            "transactional",
            depth=12,
            scheduled=0,
            running=3,
            lag_seconds=1.3,
            dead=0,
            succeeded_last_minute=600,
        ),
        PoolStats(
            "batch",
            depth=0,
            scheduled=4,
            running=0,
            lag_seconds=0.0,
            dead=2,
            succeeded_last_minute=0,
        ),
    ]
    assert render_status(stats).splitlines() == [
        "pool           depth  scheduled  lag   throughput/min  running  dlq",
        "transactional  12     0          1.3s  600             3        0",
        "batch          0      4          0.0s  0               0        2",
    ]


def test_retry_at_is_relative_to_the_injected_clock() -> None:
    record = settle(claimed(1), Outcome(OutcomeKind.FAILED, error="boom"), seed=9)
    assert isinstance(record, Failure) and record.retry_at is not None
    assert NOW <= record.retry_at <= NOW + timedelta(seconds=0.5)


def job_no(n: int) -> ClaimedJob:
    return ClaimedJob(n, "app.job", "batch", {}, 1, 5, None, None, NOW)


def test_prefetch_claims_free_slots_until_the_pace_is_known_then_a_window_of_work() -> None:
    wakes: list[int] = []
    buffer = Prefetch("batch", slots=4, claim_batch=32, wake=lambda: wakes.append(1))
    assert (buffer.target(), buffer.wanted()) == (0, 4)  # no pace yet: free slots only
    buffer.put([job_no(1)])
    assert buffer.take() == job_no(1)
    buffer.finished(0.0001)  # fast jobs: hold a full claim_batch beyond the free slots
    assert (buffer.target(), buffer.wanted()) == (32, 32)
    buffer.put([job_no(n) for n in range(2, 20)])  # 18 held: above half the target
    assert buffer.wanted() == 0
    while len(buffer) > 16:
        buffer.take()
        buffer.finished(0.0001)
    assert wakes  # reaching the low-water mark wakes the claim loop
    assert buffer.wanted() == 20  # claimed while half is still held: claims overlap runs


def test_prefetch_holds_nothing_beyond_free_slots_for_slow_jobs() -> None:
    buffer = Prefetch("batch", slots=4, claim_batch=32, wake=lambda: None)
    buffer.put([job_no(1), job_no(2)])
    buffer.take()
    buffer.finished(2.0)  # 4 slots / 2 s: 0.1 job in a 50 ms window
    assert buffer.target() == 0
    assert buffer.wanted() == 0  # one job still waits for a free slot: claim nothing
    buffer.take()  # busy: 1 of 4 slots
    assert buffer.wanted() == 3


def test_prefetch_pace_ignores_jobs_that_did_not_run() -> None:
    buffer = Prefetch("batch", slots=4, claim_batch=32, wake=lambda: None)
    buffer.put([job_no(n) for n in range(3)])
    buffer.take()
    buffer.finished(1.0)  # ran for a second: slow jobs
    for _ in range(2):  # deferred by a tenant cap, or rejected: back at once
        buffer.take()
        buffer.finished(None)
    assert buffer.target() == 0  # still paced as slow: no hoarding of capped jobs
    assert buffer.wanted() == 4


def test_a_buffer_no_executor_takes_from_goes_back_and_slows_the_pace() -> None:
    buffer = Prefetch("batch", slots=4, claim_batch=32, wake=lambda: None, stall=2.0)
    buffer.put([job_no(1)])
    buffer.take()
    buffer.finished(0.0001)
    buffer.put([job_no(n) for n in range(2, 6)])
    now = time.monotonic()
    assert buffer.drain_if_stalled(now + 1.0) == []  # not stalled yet
    assert buffer.drain_if_stalled(now + 2.5) == [job_no(n) for n in range(2, 6)]
    assert buffer.drain_if_stalled(now + 5.0) == []  # empty: nothing to hand back
    assert buffer.target() == 0  # waiting 2.5 s counted as a slow run


def test_prefetch_close_returns_unstarted_jobs_and_releases_waiting_executors() -> None:
    buffer = Prefetch("batch", slots=2, claim_batch=32, wake=lambda: None)
    taken: list[ClaimedJob | None] = []
    waiter = threading.Thread(target=lambda: taken.append(buffer.take()))
    waiter.start()
    buffer.put([job_no(1)])
    waiter.join(5)
    assert taken == [job_no(1)]
    buffer.put([job_no(2), job_no(3)])
    assert buffer.tokens() == ["2:1", "3:1"]
    assert buffer.discard("2:1") and not buffer.discard("2:1")
    waiter = threading.Thread(target=lambda: taken.append(buffer.take()))
    assert buffer.close() == [job_no(3)]
    waiter.start()
    waiter.join(5)
    assert taken[-1] is None and not buffer.put([job_no(4)])


def test_pool_signals_keep_a_pool_marked_when_notified_during_its_claim() -> None:
    signals = PoolSignals(["batch", "transactional"])
    assert signals.may_have_work("batch")  # at start every pool may have work
    seen = signals.generation("batch")
    signals.found_empty("batch", seen)
    assert not signals.may_have_work("batch")
    assert signals.may_have_work("transactional")
    seen = signals.generation("batch")
    signals.notify("batch")  # arrives while the claim is in flight
    signals.found_empty("batch", seen)
    assert signals.may_have_work("batch")
    signals.found_empty("batch", signals.generation("batch"))
    signals.notify_all()  # the polling tick
    assert signals.may_have_work("batch")
    signals.notify("unknown")  # another worker's pool: ignored


def test_throughput_window_is_a_running_total_of_the_last_minute() -> None:
    now = [0.0]
    window = _Window(lambda: now[0])
    for _ in range(3):
        window.add("batch", 2)
        now[0] += 10
    assert window.rate("batch") == pytest.approx(6 / 60)
    now[0] = 65.0  # the first event (t=0) has left the window
    assert window.rate("batch") == pytest.approx(4 / 60)
    now[0] = 200.0
    assert window.rate("batch") == 0.0 and window.rate("other") == 0.0


def test_executor_threads_are_reused_and_each_attempt_gets_a_fresh_context() -> None:
    marker: ContextVar[str] = ContextVar("marker", default="clean")
    seen: list[tuple[str, str, int | None]] = []

    def job(n: int) -> None:
        current = current_job()
        seen.append((threading.current_thread().name, marker.get(), current and current.id))
        marker.set("dirty")

    function = JobFunction(job, "app.job", "batch")
    executor = Executor("test")
    buffer = Prefetch("batch", slots=1, claim_batch=32, wake=lambda: None)
    outcomes: list[Outcome] = []

    def handle(claimed: ClaimedJob) -> bool:
        inv = Invocation(claimed, function, function.spec(Settings()), [claimed.id], {})
        executor.run(inv, outcomes.append)
        return True

    executor.serve(buffer, handle)
    buffer.put([job_no(1), job_no(2), job_no(3)])
    deadline = time.monotonic() + 5
    while len(outcomes) < 3 and time.monotonic() < deadline:
        time.sleep(0.01)
    buffer.close()
    executor.join(5)
    assert [o.kind for o in outcomes] == [OutcomeKind.SUCCEEDED] * 3
    assert len({name for name, _, _ in seen}) == 1  # one thread ran all three
    assert [(m, i) for _, m, i in seen] == [("clean", 1), ("clean", 2), ("clean", 3)]
    assert current_job() is None
