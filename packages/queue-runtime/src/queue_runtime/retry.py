"""Backoff with full jitter, for job retries and transient database errors.

Full jitter (AWS architecture blog): the delay is uniform in
``[0, min(cap, base * 2 ** (attempt - 1))]``, so retries of many jobs that
failed together spread out instead of hammering the database in waves. The
clock and the random source are injectable: tests check the delays exactly.
Retrying a database statement on transient errors is :mod:`queue_runtime.pg.retry`.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TypeVar

from queue_runtime.config import RetryPolicy

T = TypeVar("T")


def backoff_ceiling(attempt: int, base_delay: float, max_delay: float) -> float:
    """The upper bound of the jittered delay after failed attempt ``attempt`` (1-based)."""
    exponent = min(max(attempt - 1, 0), 62)  # 2**62 seconds is "forever"; avoid float overflow
    return min(max_delay, base_delay * 2.0**exponent)


@dataclass(frozen=True)
class Backoff:
    """Computes retry delays and retry times; clock and RNG injectable."""

    rng: random.Random = field(default_factory=random.Random)
    now: Callable[[], datetime] = field(default=lambda: datetime.now(UTC))

    def delay(self, attempt: int, policy: RetryPolicy) -> float:
        ceiling = backoff_ceiling(attempt, policy.base_delay, policy.max_delay)
        return self.rng.uniform(0.0, ceiling)

    def retry_at(self, attempt: int, policy: RetryPolicy) -> datetime | None:
        """When to run again after failed attempt ``attempt``; None when attempts are exhausted."""
        if attempt >= policy.max_attempts:
            return None
        return self.now() + timedelta(seconds=self.delay(attempt, policy))
