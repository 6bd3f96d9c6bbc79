"""Running one attempt: sync jobs on a thread of their own, async jobs on one event loop.

Each attempt gets a daemon thread (sync) or a task on the worker's single loop
thread (async), so a job that never returns cannot block the process from
exiting after the shutdown grace. Whatever happens, the callback receives a
typed :class:`Outcome`; exceptions never escape an attempt.
"""

from __future__ import annotations

import asyncio
import threading
import traceback
from collections.abc import Callable
from concurrent.futures import Future

from queue_runtime.errors import PayloadError
from queue_runtime.worker._context import set_current
from queue_runtime.worker._outcome import Outcome, OutcomeKind
from queue_runtime.worker._resolve import Invocation

Done = Callable[[Outcome], None]


def _success(inv: Invocation, value: object) -> Outcome:
    try:
        return Outcome(OutcomeKind.SUCCEEDED, result=inv.encode_result(value))
    except PayloadError as exc:
        # Running it again would produce the same unstorable value: straight to the DLQ.
        return Outcome(OutcomeKind.FAILED, error=str(exc), permanent=True)


def _failure(inv: Invocation, exc: BaseException) -> Outcome:
    return Outcome(
        OutcomeKind.FAILED,
        error=f"{type(exc).__name__}: {exc}",
        traceback="".join(traceback.format_exception(exc)),
        permanent=inv.is_permanent(exc),
    )


def _run_sync(inv: Invocation, done: Done) -> None:
    set_current(inv.job)
    try:
        value = inv.func(*inv.args, **inv.kwargs)
    except BaseException as exc:  # the per-job runner; SystemExit too, or the slot would leak
        done(_failure(inv, exc))
        return
    done(_success(inv, value))


async def _run_async(inv: Invocation) -> Outcome:
    set_current(inv.job)  # task-local: each task runs in a copy of the context
    try:
        value = await asyncio.wait_for(inv.func(*inv.args, **inv.kwargs), inv.timeout)
    except TimeoutError:
        return Outcome.timed_out(inv.timeout)
    except Exception as exc:  # the per-job runner: any job error becomes a typed outcome
        return _failure(inv, exc)
    return _success(inv, value)


class Executor:
    """Starts attempts; owns the event loop thread of async jobs (created on first use)."""

    def __init__(self, name: str) -> None:
        self._name = name
        self._loop: asyncio.AbstractEventLoop | None = None
        self._lock = threading.Lock()

    def start(self, inv: Invocation, done: Done, label: str) -> None:
        if inv.is_async:
            future = asyncio.run_coroutine_threadsafe(_run_async(inv), self._event_loop())
            future.add_done_callback(lambda f: done(_from_future(f)))
            return
        thread = threading.Thread(
            target=_run_sync, args=(inv, done), name=f"{self._name}:{label}", daemon=True
        )
        thread.start()

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
