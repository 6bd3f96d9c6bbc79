"""A Django task's attempt in a worker: its TaskResult, the signals, the context, the call.

The runtime's worker calls the job function :mod:`queue_runtime.django._jobs`
registers for the task; that function is :func:`run_sync` or :func:`run_async`.
``task_started`` is sent before the call, ``task_finished`` after a success or
after the failure that ends the task (its last attempt, or an exception the
retry policy calls permanent); a failed attempt that will be retried sends
nothing more, since the task is not finished. The runtime then records the
outcome, retries or dead-letters, as for any job.
"""

from __future__ import annotations

import os
import traceback
from datetime import UTC, datetime
from typing import Any

from queue_runtime.django import _results
from queue_runtime.django._compat import (
    TaskContext,
    TaskError,
    TaskResult,
    TaskResultStatus,
    normalize_json,
    task_finished,
    task_started,
)
from queue_runtime.errors import Permanent
from queue_runtime.runtime import current
from queue_runtime.store import ClaimedJob
from queue_runtime.worker import current_context


def run_sync(task: Any, args: list[Any], kwargs: dict[str, Any]) -> dict[str, Any]:
    result, worker = attempt_result(task, args, kwargs)
    sender = type(task.get_backend())
    task_started.send(sender=sender, task_result=result)
    try:
        value = task.call(*_context(task, result), *args, **kwargs)
        return _succeeded(result, sender, value, worker)
    except BaseException as exc:  # reported to Django's receivers, then the runtime's to settle
        _failed(result, sender, exc)
        raise


async def run_async(task: Any, args: list[Any], kwargs: dict[str, Any]) -> dict[str, Any]:
    result, worker = attempt_result(task, args, kwargs)
    sender = type(task.get_backend())
    await task_started.asend(sender=sender, task_result=result)
    try:
        value = await task.acall(*_context(task, result), *args, **kwargs)
    except BaseException as exc:  # as in run_sync
        if _ends(exc):
            _finish_failed(result, exc)
            await task_finished.asend(sender=sender, task_result=result)
        raise
    envelope = _record_success(result, value, worker)
    await task_finished.asend(sender=sender, task_result=result)
    return envelope


def attempt_result(task: Any, args: list[Any], kwargs: dict[str, Any]) -> tuple[Any, str]:
    """The RUNNING TaskResult of this attempt, and the worker's id.

    A first attempt is built from the claim alone (no query); a later one reads
    the job's record for the earlier attempts' workers and errors.
    """
    context = current_context()
    job, worker = context.job, context.worker_id or f"inline:{os.getpid()}"
    now = datetime.now(UTC)
    if job is not None and job.attempt > 1:
        record = current().store.get(job.id)
        if record is not None:
            found = _results.from_record(task, record, task.backend)
            object.__setattr__(found, "last_attempted_at", found.last_attempted_at or now)
            return found, worker
    result = TaskResult(
        task=task,
        id=_id(job),
        status=TaskResultStatus.RUNNING,
        enqueued_at=job.enqueued_at if job else now,
        started_at=now,
        finished_at=None,
        last_attempted_at=now,
        args=args,
        kwargs=kwargs,
        backend=task.backend,
        errors=[],
        worker_ids=[worker],
    )
    return result, worker


def _id(job: ClaimedJob | None) -> str:
    return str(job.id) if job is not None else f"inline-{os.getpid()}"


def _context(task: Any, result: Any) -> tuple[Any, ...]:
    return (TaskContext(task_result=result),) if task.takes_context else ()


def _succeeded(result: Any, sender: type, value: Any, worker: str) -> dict[str, Any]:
    envelope = _record_success(result, value, worker)
    task_finished.send(sender=sender, task_result=result)
    return envelope


def _record_success(result: Any, value: Any, worker: str) -> dict[str, Any]:
    plain = normalize_json(value)  # Django's rule: a return value must be JSON
    object.__setattr__(result, "status", TaskResultStatus.SUCCESSFUL)
    object.__setattr__(result, "finished_at", datetime.now(UTC))
    object.__setattr__(result, "_return_value", plain)
    return _results.envelope(plain, worker, list(result.args), dict(result.kwargs))


def _failed(result: Any, sender: type, exc: BaseException) -> None:
    if _ends(exc):
        _finish_failed(result, exc)
        task_finished.send(sender=sender, task_result=result)


def _finish_failed(result: Any, exc: BaseException) -> None:
    cls = type(exc)
    error = TaskError(
        exception_class_path=f"{cls.__module__}.{cls.__qualname__}",
        traceback="".join(traceback.format_exception(exc)),
    )
    result.errors.append(error)
    object.__setattr__(result, "status", TaskResultStatus.FAILED)
    object.__setattr__(result, "finished_at", datetime.now(UTC))


def _ends(exc: BaseException) -> bool:
    """Whether this failure ends the task: its last attempt, or permanent (no retry follows)."""
    job = current_context().job
    if job is None or isinstance(exc, Permanent) or job.attempt >= job.max_attempts:
        return True
    runtime = current()
    names = set(runtime.spec(runtime.registry.definition(job.name)).retry.permanent_exceptions)
    return any(_names(cls) & names for cls in type(exc).__mro__)


def _names(cls: type) -> set[str]:
    """As the worker names a class for ``permanent_exceptions``: dotted; builtins also bare."""
    dotted = f"{cls.__module__}.{cls.__qualname__}"
    return {dotted, cls.__qualname__} if cls.__module__ == "builtins" else {dotted}
