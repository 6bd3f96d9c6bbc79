"""Running a database operation again on transient errors, with full jitter, never at once."""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TypeVar

import psycopg
from psycopg import errors as pg_errors
from psycopg_pool import PoolTimeout

from queue_runtime.retry import backoff_ceiling

T = TypeVar("T")

# Transient: the same statement can succeed if simply run again later.
TRANSIENT_ERRORS: tuple[type[BaseException], ...] = (
    pg_errors.DeadlockDetected,
    pg_errors.SerializationFailure,
    pg_errors.LockNotAvailable,
    psycopg.OperationalError,  # connection lost, server restarting, admin shutdown, PoolTimeout
    psycopg.InterfaceError,  # the connection was already closed under us
)


@dataclass(frozen=True)
class TransientRetry:
    """Runs a database operation again on transient errors, with full jitter, never at once."""

    attempts: int = 5
    base_delay: float = 0.05
    max_delay: float = 2.0
    rng: random.Random = field(default_factory=random.Random)
    sleep: Callable[[float], None] = time.sleep

    def __call__(self, fn: Callable[[], T]) -> T:
        for attempt in range(1, self.attempts + 1):
            try:
                return fn()
            except TRANSIENT_ERRORS as exc:
                # No pooled connection within the pool's timeout: waiting again
                # would only multiply the caller's wait.
                if attempt == self.attempts or isinstance(exc, PoolTimeout):
                    raise
                self.sleep(self._delay(attempt))
        raise AssertionError("unreachable: the loop returns or raises")

    async def run_async(self, fn: Callable[[], Awaitable[T]]) -> T:
        """``await fn()`` with the same policy; the waits between attempts are ``asyncio.sleep``."""
        for attempt in range(1, self.attempts + 1):
            try:
                return await fn()
            except TRANSIENT_ERRORS as exc:
                if attempt == self.attempts or isinstance(exc, PoolTimeout):
                    raise
                await asyncio.sleep(self._delay(attempt))
        raise AssertionError("unreachable: the loop returns or raises")

    def _delay(self, attempt: int) -> float:
        # Never zero: an immediate retry of a deadlock usually deadlocks again.
        ceiling = backoff_ceiling(attempt, self.base_delay, self.max_delay)
        return max(self.rng.uniform(0.0, ceiling), ceiling / 100)


def retry_transient(fn: Callable[[], T], policy: TransientRetry | None = None) -> T:
    """``fn()``, retried on deadlocks, serialization failures and lost connections."""
    return (policy or TransientRetry())(fn)
