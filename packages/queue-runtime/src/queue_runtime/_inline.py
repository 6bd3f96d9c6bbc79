"""Inline mode: the job runs in-process at enqueue, exactly as a worker would run it.

The arguments go through the same JSON round trip as in queue mode (the job
sees what a worker would see), and so does the result. The job's own failure
becomes the handle's outcome, as it would become the job's status in a queue.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
from collections.abc import Callable, Coroutine
from typing import Any

from queue_runtime.definition import JobDefinition
from queue_runtime.handle import InlineHandle

log = logging.getLogger("queue_runtime")


def run_inline(
    job: JobDefinition,
    payload: dict[str, Any],
    guard: Callable[[Callable[[], Any]], Any] | None = None,
) -> InlineHandle:
    """Run the job now; ``guard`` (the execution guard of a keyed run) wraps the call."""
    try:
        args, kwargs = job.codec.decode(payload)

        def call() -> Any:
            value = job.fn(*args, **kwargs)
            return run_coroutine(value) if job.is_async else value

        value = call() if guard is None else guard(call)
        result = job.codec.encode_result(value)
    except Exception as exc:  # the per-job runner: any failure is the job's outcome
        # Logged too: fire-and-forget callers never look at the handle, and the
        # failure must not vanish (a thread would at least have printed it).
        log.error("job %s failed inline: %s", job.name, exc, exc_info=exc)
        return InlineHandle(job.name, error=exc)
    return InlineHandle(job.name, result=result)


def run_coroutine(coro: Coroutine[Any, Any, Any]) -> Any:
    """Run to completion from sync code, also when this thread already runs an event loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    # Inside a running loop (an async web handler): a loop of its own, in another thread.
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coro).result()
