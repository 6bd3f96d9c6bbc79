"""``queue-runtime`` with proposed fixes applied in-process, to measure them before they land.

    python -m bench._peers.patched_worker [queue-runtime arguments]

An experiment for the bench (``profile_ours --patched``), never used for the
reported figures. The patch replaces ``queue_runtime.metrics._Window``, whose
``rate()`` sums every completion of the last minute on each completion (O(n)
per job, so a drain slows down as it goes), with a running total (O(1)
amortised). The same change is proposed to the owners of ``metrics.py``.
"""

from __future__ import annotations

import sys
import threading
from collections import deque
from collections.abc import Callable

from queue_runtime import metrics
from queue_runtime.cli import main


class RunningTotalWindow:
    """Completions of the last minute per pool, with the sum kept up to date."""

    def __init__(self, clock: Callable[[], float]) -> None:
        self._clock = clock
        self._events: dict[str, deque[tuple[float, int]]] = {}
        self._totals: dict[str, int] = {}
        self._lock = threading.Lock()

    def add(self, pool: str, count: int) -> None:
        with self._lock:
            self._events.setdefault(pool, deque()).append((self._clock(), count))
            self._totals[pool] = self._totals.get(pool, 0) + count

    def rate(self, pool: str) -> float:
        horizon = self._clock() - metrics.THROUGHPUT_WINDOW
        with self._lock:
            events = self._events.get(pool)
            if not events:
                return 0.0
            while events and events[0][0] < horizon:
                self._totals[pool] -= events.popleft()[1]
            return self._totals[pool] / metrics.THROUGHPUT_WINDOW


if __name__ == "__main__":
    metrics._Window = RunningTotalWindow  # type: ignore[misc]  # the experiment itself
    sys.exit(main())
