"""Claimed, leased, not yet started jobs of one pool, and which pools may have work.

The claim loop fills one :class:`Prefetch` per pool; the pool's executor
threads take from it. A job enters the buffer only once its lease is held, so
the heartbeat renews buffered jobs like running ones and the reaper leaves
them alone. On shutdown (or while Redis is down) the buffer is emptied and its
jobs go back to ``pending`` at once, their attempt not consumed.

How much to hold: enough to keep the pool's slots busy during one claim round
trip (``PREFETCH_WINDOW`` seconds of work at the pool's observed pace), at most
``claim_batch``. Slow jobs therefore prefetch nothing beyond the free slots
(one worker does not hoard work that other workers could start now); no-op
jobs prefetch a full ``claim_batch``, and the next claim is made while the
buffer still holds half of it, so claims overlap execution.

The pace is an average: a pool of fast jobs whose slots all get stuck in slow
ones would keep its buffer waiting. A buffer no executor has taken from for
``STALL`` seconds is handed back (other workers can run those jobs now), and
the wait counts as a slow run, so the pool prefetches little until fast runs
bring its pace back.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable

from queue_runtime.store import ClaimedJob

PREFETCH_WINDOW = 0.05  # seconds of work to hold beyond the free slots
EWMA = 0.2  # weight of the newest run in the average run time
STALL = 2.0  # seconds a buffer may wait with no job taken before its jobs go back


class Prefetch:
    """One pool's buffer; thread-safe. ``take`` blocks until a job comes or it is closed."""

    def __init__(
        self,
        pool: str,
        slots: int,
        claim_batch: int,
        wake: Callable[[], None],
        stall: float = STALL,
    ) -> None:
        self.pool, self.slots, self.claim_batch, self.stall = pool, slots, claim_batch, stall
        self._wake = wake  # the claim loop: the buffer ran low, or a slot is idle
        self._jobs: deque[ClaimedJob] = deque()
        self._cond = threading.Condition(threading.Lock())
        self._closed = False
        self._paused = False  # ``queue-runtime pause``: nothing enters, nothing is wanted
        self._idle = 0  # executor threads waiting in take()
        self._busy = 0  # executor threads running a job (stuck timed-out ones included)
        self._run_time: float | None = None  # average seconds per run, None until one ran
        self._moved = time.monotonic()  # last take(), or put() into an empty buffer

    # -- the claim loop's side -------------------------------------------------
    def target(self) -> int:
        """Jobs to hold beyond the free slots, from the pool's observed pace."""
        run_time = self._run_time
        if run_time is None:
            return 0
        pace = self.slots / max(run_time, 1e-6)  # jobs per second with every slot busy
        return min(self.claim_batch, int(pace * PREFETCH_WINDOW))

    def wanted(self) -> int:
        """How many jobs a claim should fetch now (0: enough is held)."""
        with self._cond:
            if self._paused:
                return 0
            free = max(0, self.slots - self._busy)
            want = free + self.target() - len(self._jobs)
            if want <= 0 or len(self._jobs) > self._low_water():
                return 0
            return min(self.claim_batch, want)

    def put(self, jobs: list[ClaimedJob]) -> bool:
        """Hand leased jobs to the executors; False when closed or paused (the caller gives
        them back)."""
        with self._cond:
            if self._closed or self._paused:
                return False
            if not self._jobs:
                self._moved = time.monotonic()
            self._jobs.extend(jobs)
            self._cond.notify(len(jobs))
            return True

    def drain(self) -> list[ClaimedJob]:
        """Take every unstarted job out (they are to be given back)."""
        with self._cond:
            jobs = list(self._jobs)
            self._jobs.clear()
            return jobs

    def drain_if_stalled(self, now: float) -> list[ClaimedJob]:
        """The buffered jobs, taken out, when no executor took one for ``stall`` seconds."""
        with self._cond:
            waited = now - self._moved
            if not self._jobs or waited < self.stall:
                return []
            jobs = list(self._jobs)
            self._jobs.clear()
            self._moved = now
            self._observe(waited)  # the slots are held by runs at least this slow
            return jobs

    def close(self) -> list[ClaimedJob]:
        """No more jobs start; returns the unstarted ones, executors waiting in take() exit."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()
        return self.drain()

    def pause(self) -> list[ClaimedJob]:
        """The pool was paused: take nothing more; returns the unstarted jobs (to give back)."""
        with self._cond:
            self._paused = True
        return self.drain()

    def resume(self) -> None:
        with self._cond:
            self._paused = False

    def tokens(self) -> list[str]:
        with self._cond:
            return [job.token for job in self._jobs]

    def jobs(self) -> list[ClaimedJob]:
        with self._cond:
            return list(self._jobs)

    def discard(self, token: str) -> bool:
        """Drop one buffered job (its lease was lost: another worker holds it)."""
        with self._cond:
            for job in self._jobs:
                if job.token == token:
                    self._jobs.remove(job)
                    return True
            return False

    def __len__(self) -> int:
        with self._cond:
            return len(self._jobs)

    # -- the executors' side ---------------------------------------------------
    def take(self) -> ClaimedJob | None:
        """The next job to start (the caller is then busy); None once closed."""
        with self._cond:
            while not self._jobs:
                if self._closed:
                    return None
                self._idle += 1
                try:
                    self._wake()  # a slot is free and nothing is buffered
                    self._cond.wait()
                finally:
                    self._idle -= 1
            if self._closed:
                return None
            job = self._jobs.popleft()
            self._busy += 1
            self._moved = time.monotonic()
            low = len(self._jobs) == self._low_water()
        if low:
            self._wake()
        return job

    def finished(self, seconds: float | None) -> None:
        """The caller's job returned after ``seconds``; its thread is free again.

        None: it did not run (handed back, deferred by a tenant cap, rejected); such
        quick returns say nothing about the pool's pace and are not counted.
        """
        with self._cond:
            self._busy -= 1
            if seconds is not None:
                self._observe(seconds)

    def _observe(self, seconds: float) -> None:
        previous = self._run_time
        self._run_time = seconds if previous is None else previous + EWMA * (seconds - previous)

    def _low_water(self) -> int:
        return self.target() // 2


class PoolSignals:
    """Which pools may have due jobs: a NOTIFY or a polling tick says so, an empty claim not.

    A pool whose claim came back short is not claimed again until a NOTIFY for
    it arrives or the next polling round, so a busy worker stops spending round
    trips on idle pools. Generations make it race-free: a NOTIFY that arrives
    while a claim is in flight keeps the pool marked.
    """

    def __init__(self, pools: list[str]) -> None:
        self._lock = threading.Lock()
        self._generation = dict.fromkeys(pools, 1)
        self._empty_at = dict.fromkeys(pools, 0)

    def notify(self, pool: str) -> None:
        with self._lock:
            if pool in self._generation:
                self._generation[pool] += 1

    def notify_all(self) -> None:
        with self._lock:
            for pool in self._generation:
                self._generation[pool] += 1

    def generation(self, pool: str) -> int:
        with self._lock:
            return self._generation[pool]

    def may_have_work(self, pool: str) -> bool:
        with self._lock:
            return self._generation[pool] != self._empty_at[pool]

    def found_empty(self, pool: str, generation: int) -> None:
        """A claim started at ``generation`` came back short."""
        with self._lock:
            self._empty_at[pool] = generation
