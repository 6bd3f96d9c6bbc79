"""Backoff delays, checked exactly with an injected clock and random source."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import psycopg
import pytest
from psycopg import errors as pg_errors

from queue_runtime.config import RetryPolicy
from queue_runtime.pg.retry import TransientRetry, retry_transient
from queue_runtime.retry import Backoff, backoff_ceiling

NOW = datetime(2030, 1, 1, tzinfo=UTC)


class Top(random.Random):
    """Always draws the top of the interval: delays equal their ceiling."""

    def uniform(self, a: float, b: float) -> float:
        return b


def test_ceiling_doubles_from_base_and_caps() -> None:
    assert [backoff_ceiling(a, 0.5, 5.0) for a in range(1, 7)] == [0.5, 1.0, 2.0, 4.0, 5.0, 5.0]
    assert backoff_ceiling(10_000, 0.5, 300.0) == 300.0  # no overflow for huge attempts


def test_retry_at_is_now_plus_the_jittered_delay() -> None:
    policy = RetryPolicy(max_attempts=5, base_delay=0.5, max_delay=300)
    backoff = Backoff(rng=Top(), now=lambda: NOW)
    assert [backoff.retry_at(a, policy) for a in (1, 2, 3)] == [
        NOW + timedelta(seconds=0.5),
        NOW + timedelta(seconds=1.0),
        NOW + timedelta(seconds=2.0),
    ]
    assert backoff.retry_at(5, policy) is None  # attempts exhausted: dead-letter


def test_full_jitter_spreads_delays_over_the_whole_interval() -> None:
    backoff = Backoff(rng=random.Random(7), now=lambda: NOW)
    policy = RetryPolicy(base_delay=1.0, max_delay=8.0)
    delays = [backoff.delay(4, policy) for _ in range(2000)]
    assert 0 <= min(delays) < 0.5 and 7.5 < max(delays) <= 8.0
    assert 3.5 < sum(delays) / len(delays) < 4.5


def test_seeded_rng_gives_reproducible_delays() -> None:
    policy = RetryPolicy()
    first = [Backoff(rng=random.Random(1)).delay(a, policy) for a in range(1, 5)]
    again = [Backoff(rng=random.Random(1)).delay(a, policy) for a in range(1, 5)]
    assert first == again


def _flaky(errors: list[BaseException], result: str = "ok"):  # type: ignore[no-untyped-def]
    calls = {"n": 0}

    def fn() -> str:
        calls["n"] += 1
        if errors:
            raise errors.pop(0)
        return result

    return fn, calls


def test_transient_errors_are_retried_after_a_nonzero_jittered_pause() -> None:
    slept: list[float] = []
    fn, calls = _flaky([pg_errors.DeadlockDetected(), psycopg.OperationalError("gone")])
    policy = TransientRetry(attempts=5, base_delay=0.1, rng=random.Random(3), sleep=slept.append)
    assert retry_transient(fn, policy) == "ok"
    assert calls["n"] == 3 and len(slept) == 2
    assert all(0 < s <= 0.1 * 2**i for i, s in enumerate(slept))


def test_transient_retries_give_up_with_the_last_error() -> None:
    fn, calls = _flaky([pg_errors.SerializationFailure() for _ in range(3)])
    with pytest.raises(pg_errors.SerializationFailure):
        retry_transient(fn, TransientRetry(attempts=3, sleep=lambda s: None))
    assert calls["n"] == 3


def test_other_errors_are_not_retried() -> None:
    fn, calls = _flaky([pg_errors.UniqueViolation()])
    with pytest.raises(pg_errors.UniqueViolation):
        retry_transient(fn, TransientRetry(sleep=lambda s: None))
    assert calls["n"] == 1


def test_pool_timeouts_are_not_waited_for_twice() -> None:
    from psycopg_pool import PoolTimeout

    fn, calls = _flaky([PoolTimeout("no connection in 10 s")])
    with pytest.raises(PoolTimeout):
        retry_transient(fn, TransientRetry(sleep=lambda s: None))
    assert calls["n"] == 1
