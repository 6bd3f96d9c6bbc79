"""The worker process: claims jobs of its pools and runs them.

Threads of one worker: the claim loop (the caller of :meth:`Worker.run`), the
executor threads (``concurrency`` per pool, for the life of the worker), the
settler (batched acks), the heartbeat (leases, tenant tokens), the watchdog
(sync timeouts), the reaper (rescues attempts of dead workers), the listener
(LISTEN/NOTIFY wake-ups), the periodic ticker (``_periodic``), the control poll
(paused pools and cancel requests, ``_control``), plus one event loop thread for
all async jobs.

Claiming fills a prefetch buffer per pool (``_prefetch``): each claim fetches
the pool's free slots plus what its observed pace needs to stay busy during
the next claim round trip, up to ``claim_batch``; the next claim is made while
the buffer still holds half of that, so claiming overlaps execution. Claimed
jobs are leased (one Redis call per batch) before they enter the buffer.

Claiming is weighted across pools: in each round a pool gets ``weight`` claim
turns (``PoolConfig.weight``; higher-priority pools first). A pool only ever
claims its own jobs. A pool whose claim came back short gets no turn again
until a NOTIFY for it arrives or the next polling tick (``poll_interval``), so
a busy worker does not spend round trips on idle pools; a polling tick makes a
full round. With nothing to claim the loop sleeps until a NOTIFY for one of
its pools, a buffer running low, an idle executor, or the polling tick.

Shutdown (:meth:`stop`, SIGTERM, SIGINT): claiming stops; claimed jobs not yet
started (the prefetch buffers) go back to pending at once; running jobs get
``shutdown_grace`` seconds (a second signal cuts it short); any still running
then are handed back (``defer`` to now: pending, attempt not consumed, to run
again elsewhere; their threads die with the process); acks are flushed; leases
released.
"""

from __future__ import annotations

import logging
import os
import secrets
import signal
import socket
import threading
import time
from collections.abc import Callable
from types import FrameType

from queue_runtime.metrics import WorkerMetrics
from queue_runtime.retry import Backoff
from queue_runtime.runtime import Runtime
from queue_runtime.store import ClaimedJob
from queue_runtime.worker._backoff import TRANSIENT, jitter, retrying
from queue_runtime.worker._periodic import Ticker
from queue_runtime.worker._preflight import check_pools, preflight
from queue_runtime.worker._wiring import WorkerOptions, WorkerParts, claim_schedule

log = logging.getLogger("queue_runtime.worker")


def default_worker_id() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(3)}"


class Worker:
    """``Worker(runtime, pools, concurrency).run()`` until :meth:`stop` or a signal."""

    def __init__(
        self,
        runtime: Runtime,
        pools: list[str] | None = None,
        concurrency: int | None = None,
        *,
        worker_id: str | None = None,
        backoff: Backoff | None = None,
        metrics: WorkerMetrics | None = None,
    ) -> None:
        self.settings = runtime.settings
        self._runtime, self._checked = runtime, False
        self.pools = list(pools or self.settings.pools)
        check_pools(runtime, self.pools)  # ConfigError in one line, not a KeyError later
        self.worker_id = worker_id or default_worker_id()
        self.metrics = metrics or WorkerMetrics()
        self.metrics.bind_jobs(runtime.registry)  # the job label: registered names only
        self.concurrency = concurrency
        self.stopping, self._stopped = threading.Event(), threading.Event()
        self._hurry = threading.Event()  # a second signal: skip the rest of the grace
        options = WorkerOptions(
            self.pools,
            concurrency,
            self.worker_id,
            self.metrics,
            self.stopping,
            backoff or Backoff(),
        )
        self._parts = WorkerParts.build(runtime, options)
        self._ticker = Ticker(runtime, self.pools)  # periodic jobs of these pools
        self._wake = self._parts.wake
        self._threads: list[threading.Thread] = []
        self._run_thread: threading.Thread | None = None

    # -- lifecycle -------------------------------------------------------
    def check(self) -> None:
        """Fail now, in one line, when this worker could not work (``_preflight``): an
        unknown pool, PostgreSQL or Redis not answering. :meth:`run` checks first too."""
        preflight(self._runtime, self.pools)
        self._checked = True

    def run(self, install_signals: bool = False) -> None:
        """Serve until stopped; returns after a graceful shutdown.

        Raises before serving when :meth:`check` fails (once per worker).
        """
        if not self._checked:
            self.check()
        if install_signals:
            self._install_signals()
        self._start_threads()
        log.info("worker %s serving pools %s", self.worker_id, self.pools)
        try:
            self._claim_loop()
        finally:
            self._shutdown()

    def start(self) -> Worker:
        """Run in a background thread (tests, embedding); pair with :meth:`stop`.

        :meth:`check` runs here, in the caller: a worker that cannot work raises now.
        """
        if not self._checked:
            self.check()
        self._run_thread = threading.Thread(target=self.run, name="qr-worker", daemon=True)
        self._run_thread.start()
        return self

    def stop(self, wait: bool = True) -> None:
        """Stop claiming and shut down gracefully; with ``wait``, block until done."""
        self.stopping.set()
        self._wake.set()
        if wait and self._run_thread is not None:
            self._run_thread.join()

    @property
    def stopped(self) -> bool:
        return self._stopped.is_set()

    @property
    def paused_for_redis(self) -> bool:
        """True while Redis is unreachable: no new claims; running jobs go on."""
        return self._parts.dispatcher.redis_down.is_set()

    # -- claim loop --------------------------------------------------------
    def _claim_loop(self) -> None:
        schedule = claim_schedule(self.settings, self.pools)
        signals, poll = self._parts.signals, self.settings.poll_interval
        failures = 0
        next_poll = time.monotonic() + poll
        while not self.stopping.is_set():
            self._wake.clear()
            now = time.monotonic()
            if now >= next_poll:  # polling tick: every pool may have due jobs again
                signals.notify_all()
                next_poll = now + poll
            self._give_back_stalled(now)
            try:
                claimed = self._round(schedule)
                failures = 0
            except TRANSIENT as exc:
                failures += 1
                log.warning("claim failed (%s: %s); backing off", type(exc).__name__, exc)
                self.stopping.wait(jitter(failures + 2))
                signals.notify_all()
                continue
            if not claimed:
                self._wake.wait(max(0.0, next_poll - time.monotonic()))

    def _round(self, schedule: list[str]) -> int:
        """One weighted round over the pools; returns the number of jobs claimed."""
        p = self._parts
        if p.dispatcher.redis_down.is_set():
            self._give_back_buffered()
            return 0
        claimed = 0
        # Generations read once, before any claim: a NOTIFY during the round keeps every
        # pool marked, so the next round is a full one.
        turns = {pool: p.signals.generation(pool) for pool in set(schedule)}
        turns = {pool: g for pool, g in turns.items() if p.signals.may_have_work(pool)}
        short: set[str] = set()
        for pool in schedule:
            if self.stopping.is_set():
                break
            want = p.buffers[pool].wanted() if pool in turns else 0
            if want <= 0:
                continue
            jobs = self._claim(pool, want)
            claimed += len(jobs)
            if len(jobs) < want:
                short.add(pool)
            if jobs:
                p.dispatcher.dispatch(jobs)
        for pool in short:
            p.signals.found_empty(pool, turns[pool])
        return claimed

    def _claim(self, pool: str, limit: int) -> list[ClaimedJob]:
        started = time.perf_counter()
        jobs = self._parts.store.claim(pool, limit, self.worker_id)
        self.metrics.claim_latency.labels(pool).observe(time.perf_counter() - started)
        return jobs

    def _give_back_stalled(self, now: float) -> None:
        """Buffers stuck behind slow jobs go back, so idle workers can run them now."""
        p = self._parts
        for buffer in p.buffers.values():
            jobs = buffer.drain_if_stalled(now)
            if jobs:
                log.info(
                    "returning %d prefetched job(s) of %s: its slots are busy",
                    len(jobs),
                    buffer.pool,
                )
                p.dispatcher.give_back(jobs)

    def _give_back_buffered(self, close: bool = False) -> None:
        """Claimed jobs not started yet go back to pending now (attempt not consumed)."""
        p = self._parts
        jobs = [j for b in p.buffers.values() for j in (b.close() if close else b.drain())]
        if jobs:
            log.info("returning %d claimed, unstarted job(s)", len(jobs))
            p.dispatcher.give_back(jobs)

    # -- threads and shutdown ---------------------------------------------
    def _start_threads(self) -> None:
        p = self._parts
        p.control.poll()  # paused pools are honoured from the first claim on
        p.settler.start()
        for buffer in p.buffers.values():
            p.executor.serve(buffer, p.dispatcher.run)
        loops: list[tuple[str, Callable[[threading.Event], None]]] = [
            ("qr-heartbeat", p.heartbeat.run),
            ("qr-watchdog", p.watchdog.run),
            ("qr-reaper", p.reaper.run),
            ("qr-listener", p.listener.run),
            ("qr-stats", self._refresh_stats),
            ("qr-periodic", self._ticker.run),
            ("qr-control", p.control.run),
        ]
        for name, target in loops:
            thread = threading.Thread(target=target, args=(self._stopped,), name=name, daemon=True)
            thread.start()
            self._threads.append(thread)

    def _refresh_stats(self, stop: threading.Event) -> None:
        # Queue-wide gauges (depth, lag, DLQ): one stats query every few seconds.
        while not stop.wait(5.0):
            stats = retrying(self._parts.store.stats, stop, "stats", 1.0)
            if stats is not None:
                self.metrics.observe_stats(stats)

    def _shutdown(self) -> None:
        p = self._parts
        grace = self.settings.shutdown_grace
        self.stopping.set()  # also when the claim loop ended by an exception
        self._give_back_buffered(close=True)
        p.dispatcher.seal()
        if not self._drain(grace):
            self._hand_back_overdue()
        p.settler.close(timeout=max(10.0, grace))
        self._stopped.set()
        for thread in self._threads:
            thread.join(timeout=5)
        p.close()
        log.info("worker %s stopped", self.worker_id)

    def _drain(self, grace: float) -> bool:
        """Wait for running jobs up to ``grace`` (or a second signal); True when none is left."""
        deadline = time.monotonic() + grace
        while not self._hurry.is_set():
            left = deadline - time.monotonic()
            if self._parts.inflight.wait_empty(max(0.0, min(0.2, left))):
                return True
            if left <= 0:
                return False
        return False

    def _hand_back_overdue(self) -> None:
        """Jobs still running after the grace go back to pending (they run again elsewhere)."""
        p = self._parts
        running = [r for r in p.inflight.unsettled() if p.inflight.claim_settlement(r)]
        log.warning("shutdown grace over: handing back %d running job(s)", len(running))
        if not running:
            return
        p.dispatcher.give_back([r.job for r in running])
        p.dispatcher.release(running)

    def _install_signals(self) -> None:
        def handler(signum: int, frame: FrameType | None) -> None:
            name = signal.Signals(signum).name
            if self.stopping.is_set():
                log.warning("second %s: handing running jobs back now", name)
                self._hurry.set()
                return
            log.warning("%s: graceful shutdown (again to hand running jobs back now)", name)
            self.stop(wait=False)

        signal.signal(signal.SIGTERM, handler)
        signal.signal(signal.SIGINT, handler)
