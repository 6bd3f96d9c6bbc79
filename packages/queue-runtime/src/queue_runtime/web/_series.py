"""The charts' last hour, per minute, at a bounded cost per request.

A minute that ended more than a minute ago no longer changes (a job's
``finished_at`` is its transaction's start, so rows of the previous minute
may still commit): it is read once and kept. Each request reads the current
and the previous minute, then fills minutes not read yet, newest first, in
chunks, until its time budget is spent; a cold start (a dashboard just
started on a busy queue) fills the hour over a few refreshes, and the chart
says so meanwhile. Each minute reads at most ``cap`` rows.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from queue_runtime.store import DashboardStore, Minute

MINUTES = 60


@dataclass(frozen=True, slots=True)
class Series:
    """Per minute of the last hour, oldest first (60 values each)."""

    succeeded: list[int]
    lag: list[float]
    capped: list[bool]
    filling: bool  # some minutes of the hour are not read yet (shown as zero)


class SeriesCache:
    def __init__(
        self,
        budget: float = 0.06,
        chunk: int = 3,
        cap: int = 10_000,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._budget, self._chunk, self.cap, self._clock = budget, chunk, cap, clock
        self._done: dict[datetime, Minute] = {}
        self._lock = threading.Lock()

    def series(self, queries: DashboardStore) -> Series:
        deadline = self._clock() + self._budget
        now = queries.now_minute()
        window = [now - timedelta(minutes=ago) for ago in range(MINUTES - 1, -1, -1)]
        live = {m.at: m for m in queries.minutes(window[-2:], self.cap)}
        with self._lock:
            kept = {at: m for at, m in self._done.items() if at in window}
            self._done = kept
        missing = [at for at in reversed(window[:-2]) if at not in kept]
        while missing and self._clock() < deadline:
            chunk, missing = missing[: self._chunk], missing[self._chunk :]
            found = {m.at: m for m in queries.minutes(chunk, self.cap)}
            with self._lock:
                self._done.update(found)
        with self._lock:
            known = {**self._done, **live}
        return _series(window, known, filling=bool(missing))


def _series(window: list[datetime], known: dict[datetime, Minute], filling: bool) -> Series:
    empty = Minute(window[0], 0, 0.0)
    rows = [known.get(at, empty) for at in window]
    return Series(
        [m.succeeded for m in rows],
        [m.lag_seconds for m in rows],
        [m.capped for m in rows],
        filling,
    )
