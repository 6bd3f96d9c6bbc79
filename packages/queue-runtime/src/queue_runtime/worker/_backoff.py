"""Retrying infrastructure calls (PostgreSQL, Redis) with full jitter, never at once."""

from __future__ import annotations

import logging
import random
import threading
from collections.abc import Callable
from typing import TypeVar

from queue_runtime.errors import LeasesUnavailable, StoreError, StoreUnavailable

T = TypeVar("T")
log = logging.getLogger("queue_runtime.worker")

# A store that cannot be reached (connection loss; deadlocks and serialization
# failures that outlived pg's retries in place), Redis away: all pass if simply
# tried again later. The stores translate their drivers' errors into these.
TRANSIENT: tuple[type[BaseException], ...] = (StoreUnavailable, LeasesUnavailable)
# Any failure of the job store.
STORE_ERRORS: tuple[type[BaseException], ...] = (StoreError,)
BASE_DELAY = 0.05
MAX_DELAY = 2.0


def jitter(attempt: int, rng: random.Random | None = None) -> float:
    """Full jitter: uniform(0, min(MAX_DELAY, BASE_DELAY * 2**attempt)), never zero."""
    ceiling = min(MAX_DELAY, BASE_DELAY * 2**attempt)
    return max(0.005, (rng or random).uniform(0, ceiling))


def retrying(
    call: Callable[[], T], stop: threading.Event, what: str, give_up_after: float | None = None
) -> T | None:
    """Run ``call`` until it does not raise a transient error; None if ``stop`` is set first.

    ``give_up_after`` (seconds of retrying) bounds the effort during shutdown.
    """
    attempt, waited = 0, 0.0
    while True:
        try:
            return call()
        except TRANSIENT as exc:
            delay = jitter(attempt)
            log.warning(
                "%s failed (%s: %s); retrying in %.2fs", what, type(exc).__name__, exc, delay
            )
            attempt, waited = attempt + 1, waited + delay
            if give_up_after is not None and waited > give_up_after:
                return None
            if stop.wait(delay):
                return None
