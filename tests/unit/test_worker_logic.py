"""Pure worker logic: retry decisions, backoff exponent, claim schedule, status table."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import pytest

from queue_runtime import Permanent, RetryPolicy, Settings
from queue_runtime.cli import render_status
from queue_runtime.config import PoolConfig
from queue_runtime.errors import ConfigError
from queue_runtime.retry import Backoff
from queue_runtime.store import ClaimedJob, Completion, Failure, PoolStats
from queue_runtime.worker import claim_schedule
from queue_runtime.worker._outcome import Outcome, OutcomeKind
from queue_runtime.worker._resolve import _names
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
