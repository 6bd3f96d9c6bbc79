"""Inline runs: the job runs in-process at enqueue, exactly as a worker would run it.

The arguments go through the same JSON round trip as in queue mode (the job
sees what a worker would see), and so does the result. The job's own failure
becomes the handle's outcome, as it would become the job's status in a queue.

An inline run keeps the shape the call site had before the migration
(:class:`InlineShape`): a site that started a thread, submitted to an executor
or created a task still runs the job in the background while the gate keeps
it inline, and never in the request; a direct call stays a direct call.

:func:`run_original` is the fallback of a call whose arguments cannot be
stored (:mod:`queue_runtime.fallbacks`): the same shapes, with the caller's own
objects and the job's own return value, no JSON round trip.

A run with a :class:`ShadowProbe` (every inline run of a runtime with a
database) checks the round trip of its arguments before the job sees them and
counts it as shadow evidence (:mod:`queue_runtime.shadow`).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import threading
import time
from collections.abc import Callable, Coroutine
from concurrent.futures import Executor
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from queue_runtime.config import Mode
from queue_runtime.definition import JobDefinition
from queue_runtime.errors import JobTimeout, Unencodable
from queue_runtime.gate._decide import current_fingerprint
from queue_runtime.gate._guard import guarded_callable, run_guarded
from queue_runtime.handle import InlineHandle
from queue_runtime.runtime import Runtime
from queue_runtime.shadow import Decoded, ShadowRecorder, recorder_for, round_trip
from queue_runtime.store import JobStatus

log = logging.getLogger("queue_runtime")

Outcome = tuple[Any, BaseException | None]  # (the encoded result, the job's failure)


class InlineShape(StrEnum):
    """How the call site ran the job before it enqueued it: how an inline run runs it."""

    CALL = "call"  # in the caller, to completion (a direct call)
    THREAD = "thread"  # in a daemon thread of its own (threading.Thread, Process)
    EXECUTOR = "executor"  # submitted to an executor (executor.submit, run_in_executor)
    TASK = "task"  # a task on the running event loop (create_task, ensure_future)


@dataclass(frozen=True, slots=True)
class KeyGuard:
    """A keyed run goes through the execution guard of ``key`` (``queue_runtime.gate._guard``)."""

    runtime: Runtime
    key: str
    digest: str | None = None  # the call the key names (queue_runtime.store.args_digest)


@dataclass(frozen=True, slots=True)
class ShadowProbe:
    """Where an inline run counts its arguments' round trip: the job's code, the recorder."""

    recorder: ShadowRecorder
    fingerprint: str
    max_bytes: int

    def check(self, job: JobDefinition, payload: dict[str, Any]) -> Decoded | None:
        """Count the round trip of ``payload``; the decoded arguments (None: decoding failed)."""
        failure, decoded = round_trip(job, payload, self.max_bytes)
        self.recorder.checked(job.name, self.fingerprint, failure)
        return decoded

    def fallback(self, job: JobDefinition, error: Unencodable) -> None:
        self.recorder.unencodable(job.name, self.fingerprint, error)


def shadow_probe(runtime: Runtime, job: JobDefinition) -> ShadowProbe | None:
    """The probe of ``job``'s inline runs; None when the runtime has no store to keep evidence."""
    settings = runtime.settings
    if runtime.mode is Mode.INLINE and not settings.database_url:
        return None
    recorder = recorder_for(
        runtime,
        lambda: ShadowRecorder(
            lambda: runtime.gate_store, settings.shadow_flush_calls, settings.shadow_flush_seconds
        ),
    )
    return ShadowProbe(recorder, current_fingerprint(job), settings.max_payload_bytes)


@dataclass(frozen=True, slots=True)
class InlineRun:
    """An inline run's shape, its executor (EXECUTOR; None: the loop's default), guard, probe."""

    shape: InlineShape = InlineShape.CALL
    executor: Executor | None = None
    guard: KeyGuard | None = None
    shadow: ShadowProbe | None = None


CALL = InlineRun()


class BackgroundHandle(InlineHandle):
    """An inline run still going on in the background: running until its outcome is in."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self._done = threading.Event()

    def __repr__(self) -> str:
        return f"BackgroundHandle(name={self.name!r}, status={self.status()})"

    def settle(self, outcome: Outcome) -> None:
        self._result, self.error = outcome
        self._done.set()

    def status(self) -> JobStatus:
        return super().status() if self._done.is_set() else JobStatus.RUNNING

    def wait(
        self, timeout: float | None = None, sleep: Callable[[float], None] = time.sleep
    ) -> JobStatus:
        if not self._done.wait(timeout):
            raise JobTimeout(f"{self.name} is still running in the background after {timeout}s")
        return self.status()

    def result(self, timeout: float | None = None) -> Any:
        self.wait(timeout)
        return super().result()


@dataclass(frozen=True, slots=True)
class _Work:
    """What an inline run calls: stored arguments (a round trip) or the caller's own objects."""

    job: JobDefinition
    payload: dict[str, Any] | None
    args: tuple[Any, ...] = ()
    kwargs: dict[str, Any] | None = None
    shadow: ShadowProbe | None = None

    def arguments(self) -> tuple[Any, dict[str, Any]]:
        if self.payload is None:
            return self.args, dict(self.kwargs or {})
        if self.shadow is not None:  # before the job runs: it may change what it was given
            decoded = self.shadow.check(self.job, self.payload)
            if decoded is not None:
                return decoded
        return self.job.codec.decode(self.payload)  # raises what the round trip met: the outcome

    def result(self, value: Any) -> Any:
        return value if self.payload is None else self.job.codec.encode_result(value)


def run_inline(job: JobDefinition, payload: dict[str, Any], run: InlineRun = CALL) -> InlineHandle:
    """Run the job now, in the shape ``run`` says; a background shape returns at once."""
    return _run(_Work(job, payload, shadow=run.shadow), run)


def run_original(
    job: JobDefinition, args: tuple[Any, ...], kwargs: dict[str, Any], run: InlineRun = CALL
) -> InlineHandle:
    """Run the job with the caller's objects, in the site's shape (no guard: nothing is stored)."""
    return _run(_Work(job, None, args, kwargs), InlineRun(run.shape, run.executor))


def _run(work: _Work, run: InlineRun) -> InlineHandle:
    if run.shape is InlineShape.CALL:
        result, error = _outcome(work, run.guard)
        return InlineHandle(work.job.name, result=result, error=error)
    handle = BackgroundHandle(work.job.name)
    _start(work, run, handle)
    return handle


def _start(work: _Work, run: InlineRun, handle: BackgroundHandle) -> None:
    """Hand the run to a thread, the executor or the loop, as the site used to."""
    job = work.job

    def background() -> None:
        handle.settle(_outcome(work, run.guard))

    loop = _running_loop()
    if run.shape is InlineShape.TASK and loop is not None and job.is_async:
        _spawn_task(loop, _outcome_async(work, run.guard), handle)
    elif run.shape is InlineShape.EXECUTOR and run.executor is not None:
        run.executor.submit(background)
    elif run.shape is not InlineShape.THREAD and loop is not None:
        loop.run_in_executor(None, background)  # the loop's default executor (None)
    else:
        # THREAD, or a loop's hand-off with no loop running here: a thread is what remains.
        threading.Thread(target=background, name=f"inline {job.name}", daemon=True).start()


def _outcome(work: _Work, guard: KeyGuard | None) -> Outcome:
    job = work.job
    try:
        args, kwargs = work.arguments()

        def call() -> Any:
            value = job.fn(*args, **kwargs)
            return run_coroutine(value) if job.is_async else value

        value = (
            call()
            if guard is None
            else run_guarded(guard.runtime, job, guard.key, None, call, guard.digest)
        )
        return work.result(value), None
    except Exception as exc:  # the per-job runner: any failure is the job's outcome
        return None, _logged(job, exc)


async def _outcome_async(work: _Work, guard: KeyGuard | None) -> Outcome:
    job = work.job
    try:
        args, kwargs = work.arguments()
        fn = (
            job.fn
            if guard is None
            else guarded_callable(guard.runtime, job, guard.key, None, guard.digest)
        )
        return work.result(await fn(*args, **kwargs)), None
    except Exception as exc:  # the per-job runner: any failure is the job's outcome
        return None, _logged(job, exc)


def _logged(job: JobDefinition, exc: Exception) -> Exception:
    # Logged too: fire-and-forget callers never look at the handle, and the
    # failure must not vanish (a thread would at least have printed it).
    log.error("job %s failed inline: %s", job.name, exc, exc_info=exc)
    return exc


_tasks: set[asyncio.Task[None]] = set()  # the loop keeps only weak references to tasks


def _spawn_task(
    loop: asyncio.AbstractEventLoop, outcome: Coroutine[Any, Any, Outcome], handle: BackgroundHandle
) -> None:
    async def settle() -> None:
        handle.settle(await outcome)

    task = loop.create_task(settle())
    _tasks.add(task)
    task.add_done_callback(_tasks.discard)


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


def run_coroutine(coro: Coroutine[Any, Any, Any]) -> Any:
    """Run to completion from sync code, also when this thread already runs an event loop."""
    if _running_loop() is None:
        return asyncio.run(coro)
    # Inside a running loop (an async web handler): a loop of its own, in another thread.
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coro).result()
