"""``queue-runtime`` with proposed fixes applied in-process, to measure them before they land.

    python -m bench._peers.patched_worker [queue-runtime arguments]

An experiment for the bench (``profile_ours --patched``), never used for the
reported figures. ``$BENCH_PATCHES`` (comma-separated, default all) picks them:

- ``window``: replaces ``queue_runtime.metrics._Window``, whose ``rate()`` sums
  every completion of the last minute on each completion (O(n) per job, so a
  drain slows down as it goes), with a running total (O(1) amortised).
- ``threads``: sync attempts run on reused daemon threads instead of a new
  thread each (``Thread.start`` waits for the new thread to be scheduled: a
  third of the claim loop's time on a busy 2-core box). A thread stuck in a
  timed-out job just stays busy; the next attempt gets another thread.
- ``rounds``: in a claim round, a pool whose claim came back short (it has no
  more due jobs) gets no further turns in that round. With the default pools
  an idle ``transactional`` (weight 4) otherwise costs 4 empty claim
  statements per round, before every claim of ``batch``.

The same changes are proposed to the owners of ``metrics.py`` / ``worker/_execute.py``.
"""

from __future__ import annotations

import os
import queue
import sys
import threading
from collections import deque
from collections.abc import Callable
from typing import Any

from queue_runtime import metrics
from queue_runtime.cli import main
from queue_runtime.worker import _execute

IDLE_EXIT = 30.0  # seconds an idle reused thread waits for work before it exits


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


class ReusedThreads:
    """Daemon threads that run one task after another; a new one only when none is idle."""

    def __init__(self, name: str) -> None:
        self._name = name
        self._work: queue.SimpleQueue[tuple[Callable[..., None], tuple[Any, ...]]] = (
            queue.SimpleQueue()
        )
        self._idle = 0
        self._lock = threading.Lock()

    def submit(self, fn: Callable[..., None], args: tuple[Any, ...]) -> None:
        with self._lock:
            if self._idle:
                self._idle -= 1
                self._work.put((fn, args))
                return
        threading.Thread(target=self._serve, args=(fn, args), name=self._name, daemon=True).start()

    def _serve(self, fn: Callable[..., None], args: tuple[Any, ...]) -> None:
        while True:
            fn(*args)
            with self._lock:
                self._idle += 1
            task = self._next()
            if task is None:
                return
            fn, args = task

    def _next(self) -> tuple[Callable[..., None], tuple[Any, ...]] | None:
        while True:
            try:
                return self._work.get(timeout=IDLE_EXIT)
            except queue.Empty:
                with self._lock:  # a submitter counts on us only while the queue is non-empty
                    if self._work.empty():
                        self._idle -= 1
                        return None


def _start_on_reused_threads(self: Any, inv: Any, done: Any, label: str) -> None:
    if inv.is_async:
        _original_start(self, inv, done, label)
        return
    if not hasattr(self, "_reused"):
        self._reused = ReusedThreads(self._name)
    self._reused.submit(_execute._run_sync, (inv, done))


_original_start = _execute.Executor.start


def _round_skipping_drained_pools(self: Any, schedule: list[str]) -> int:
    """``Worker._round`` with one change: a pool whose claim came back short is done."""
    if self._parts.dispatcher.redis_down.is_set():
        return 0
    claimed, drained = 0, set()
    for pool in schedule:
        if self.stopping.is_set():
            break
        free = self._parts.inflight.free_slots(pool)
        if pool in drained or free <= 0:
            continue
        limit = min(free, self.settings.claim_batch)
        jobs = self._claim(pool, limit)
        claimed += len(jobs)
        if len(jobs) < limit:
            drained.add(pool)
        if jobs:
            self._parts.dispatcher.dispatch(jobs)
    return claimed


if __name__ == "__main__":
    patches = set(os.environ.get("BENCH_PATCHES", "window,threads,rounds").split(","))
    if "window" in patches:
        metrics._Window = RunningTotalWindow  # type: ignore[misc]  # the experiment itself
    if "threads" in patches:
        _execute.Executor.start = _start_on_reused_threads  # type: ignore[method-assign]
    if "rounds" in patches:
        from queue_runtime.worker.worker import Worker

        Worker._round = _round_skipping_drained_pools  # type: ignore[method-assign]
    sys.exit(main())
