"""Running attempts: a fixed set of executor threads per pool, async jobs on one event loop.

Each pool gets ``concurrency`` daemon threads for the life of the worker; each
takes the next job from the pool's prefetch buffer and runs it: a sync job in
the thread itself, an async job as a task on the worker's single loop thread
(the executor thread waits for it, so the pool's concurrency bounds both). No
thread is started per attempt. A sync job that never returns keeps its thread
(and so its slot), as before; daemon threads cannot block the process from
exiting after the shutdown grace. Whatever happens, the callback receives a
typed :class:`Outcome`; exceptions never escape an attempt.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import threading
import time
import traceback
from collections.abc import Callable
from concurrent.futures import Future

from queue_runtime.errors import JobCancelled, PayloadError
from queue_runtime.store import ClaimedJob
from queue_runtime.worker._context import CancelSource, set_current
from queue_runtime.worker._outcome import Outcome, OutcomeKind
from queue_runtime.worker._prefetch import Prefetch
from queue_runtime.worker._resolve import Invocation

Done = Callable[[Outcome], None]
log = logging.getLogger("queue_runtime.worker")


def _success(inv: Invocation, value: object) -> Outcome:
    try:
        return Outcome(OutcomeKind.SUCCEEDED, result=inv.encode_result(value))
    except PayloadError as exc:
        # Running it again would produce the same unstorable value: straight to the DLQ.
        return Outcome(OutcomeKind.FAILED, error=str(exc), permanent=True)


def _failure(inv: Invocation, exc: BaseException) -> Outcome:
    if isinstance(exc, JobCancelled):  # the job honoured a cancel request: not a failure
        return Outcome.cancelled(str(exc))
    return Outcome(
        OutcomeKind.FAILED,
        error=f"{type(exc).__name__}: {exc}",
        traceback="".join(traceback.format_exception(exc)),
        permanent=inv.is_permanent(exc),
    )


def _run_sync(inv: Invocation, done: Done, cancels: CancelSource | None, worker: str) -> None:
    set_current(inv.job, cancels, worker)
    try:
        with inv.scope():
            try:
                args, kwargs = inv.arguments()
            except PayloadError as exc:  # references that no longer fit: as in Resolver
                done(Outcome.rejected(f"invalid payload: {exc}"))
                return
            value = inv.func(*args, **kwargs)
    except BaseException as exc:  # the per-job runner; SystemExit too, or the slot would leak
        done(_failure(inv, exc))
        return
    done(_success(inv, value))


async def _run_async(inv: Invocation, cancels: CancelSource | None, worker: str) -> Outcome:
    set_current(inv.job, cancels, worker)  # task-local: each task runs in a copy of the context
    try:
        with inv.scope():
            value = await asyncio.wait_for(inv.func(*inv.args, **inv.kwargs), inv.timeout)
    except TimeoutError:
        return Outcome.timed_out(inv.timeout)
    except Exception as exc:  # the per-job runner: any job error becomes a typed outcome
        return _failure(inv, exc)
    return _success(inv, value)


class Executor:
    """Executor threads per pool; owns the event loop thread of async jobs (created on first use)."""

    def __init__(self, name: str, cancels: CancelSource | None = None, worker_id: str = "") -> None:
        self._name = name
        self._cancels = cancels  # what JobContext.cancel_requested reads
        self._worker_id = worker_id  # what JobContext.worker_id reads
        self._loop: asyncio.AbstractEventLoop | None = None
        self._lock = threading.Lock()
        self._threads: list[threading.Thread] = []

    def serve(self, buffer: Prefetch, handle: Callable[[ClaimedJob], bool]) -> None:
        """Start the pool's executor threads: each runs ``handle(job)`` for job after job.

        ``handle`` returns whether the job ran (its time then counts in the pool's pace).
        """
        for index in range(buffer.slots):
            thread = threading.Thread(
                target=_serve_pool,
                args=(buffer, handle),
                name=f"{self._name}:{buffer.pool}:{index}",
                daemon=True,
            )
            thread.start()
            self._threads.append(thread)

    def join(self, timeout: float) -> None:
        """Wait (bounded) for executor threads that are not stuck in a job to exit."""
        deadline = time.monotonic() + timeout
        for thread in self._threads:
            thread.join(max(0.0, deadline - time.monotonic()))

    def run(self, inv: Invocation, done: Done) -> None:
        """Run one attempt in the calling executor thread; returns once ``done`` was called."""
        if not inv.is_async:
            # A fresh, empty context per attempt, as a new thread would have: context
            # variables a job sets (current_job included) do not leak into the next one.
            contextvars.Context().run(_run_sync, inv, done, self._cancels, self._worker_id)
            return
        finished = threading.Event()

        def report(f: Future[Outcome]) -> None:
            try:
                done(_from_future(f))
            finally:
                finished.set()

        future = asyncio.run_coroutine_threadsafe(
            _run_async(inv, self._cancels, self._worker_id), self._event_loop()
        )
        future.add_done_callback(report)
        finished.wait()

    def close(self) -> None:
        with self._lock:
            if self._loop is not None:
                self._loop.call_soon_threadsafe(self._loop.stop)
                self._loop = None

    def _event_loop(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None:
                self._loop = asyncio.new_event_loop()
                threading.Thread(
                    target=_serve, args=(self._loop,), name=f"{self._name}:loop", daemon=True
                ).start()
            return self._loop


def _serve_pool(buffer: Prefetch, handle: Callable[[ClaimedJob], bool]) -> None:
    while (job := buffer.take()) is not None:
        started, ran = time.perf_counter(), False
        try:
            ran = handle(job)
        except Exception:  # the executor must outlive any bug in dispatching one job
            log.exception("could not run %s", job.token)
        finally:
            buffer.finished(time.perf_counter() - started if ran else None)


def _from_future(future: Future[Outcome]) -> Outcome:
    if future.cancelled():
        return Outcome(OutcomeKind.FAILED, error="cancelled: the worker's event loop stopped")
    exc = future.exception()  # a BaseException _run_async does not turn into an outcome
    if exc is not None:
        return Outcome(OutcomeKind.FAILED, error=f"{type(exc).__name__}: {exc}")
    return future.result()


def _serve(loop: asyncio.AbstractEventLoop) -> None:
    asyncio.set_event_loop(loop)
    try:
        loop.run_forever()
    finally:
        # Jobs still running past the shutdown grace are cancelled, then the loop closes.
        pending = asyncio.all_tasks(loop)
        for task in pending:
            task.cancel()
        loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
        loop.close()
