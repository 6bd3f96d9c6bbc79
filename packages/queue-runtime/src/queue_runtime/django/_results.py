"""The runtime's records as Django ``TaskResult`` values: status, times, attempts, errors, value.

What maps to what (docs/django.md):

- status: queued and retrying -> READY ("ready to be executed again"), running ->
  RUNNING, succeeded -> SUCCESSFUL, dead and cancelled -> FAILED;
- ``worker_ids``: one per attempt that ran, from the attempt history (each
  failed attempt's worker) plus the attempt running now or the one that
  succeeded (kept in the stored result, see :data:`ENVELOPE`);
- ``errors``: one ``TaskError`` per failed attempt, with its traceback; the
  class path is read from the traceback's last line, as Python prints it;
- ``started_at`` the first attempt's claim, ``last_attempted_at`` the latest's.

A Django task's stored result is an envelope: the return value, the worker that
ran the successful attempt, and the call's args and kwargs (the history row of
a succeeded job keeps no arguments, and Django's result carries them).
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from queue_runtime.django._compat import TaskError, TaskResult, TaskResultStatus
from queue_runtime.errors import QueueError
from queue_runtime.store import JobRecord, JobStatus


class LeaseLost(QueueError):
    """The worker running the attempt stopped renewing its lease (killed, or cut off): rescued."""


ENVELOPE = "django_task"  # the marker key of a Django task's stored result
STATUS = {
    JobStatus.QUEUED: TaskResultStatus.READY,
    JobStatus.RETRYING: TaskResultStatus.READY,
    JobStatus.RUNNING: TaskResultStatus.RUNNING,
    JobStatus.SUCCEEDED: TaskResultStatus.SUCCESSFUL,
    JobStatus.DEAD: TaskResultStatus.FAILED,
    JobStatus.CANCELLED: TaskResultStatus.FAILED,
}
# Failures the worker records without a Python traceback of the job: their classes.
_NO_TRACEBACK = (
    ("lease lost", "queue_runtime.django.LeaseLost"),
    ("timed out after", "builtins.TimeoutError"),
    ("invalid payload", "queue_runtime.errors.PayloadError"),
    ("unknown job", "queue_runtime.errors.UnknownJob"),
    ("cannot run", "queue_runtime.errors.QueueError"),
)
_DOTTED = re.compile(r"[A-Za-z_][\w.]*")


def envelope(value: Any, worker: str, args: list[Any], kwargs: dict[str, Any]) -> dict[str, Any]:
    return {ENVELOPE: 1, "value": value, "worker": worker, "args": args, "kwargs": kwargs}


def from_record(task: Any, record: JobRecord, backend: str) -> Any:
    """The TaskResult of a stored job (``get_result``), every field from the record."""
    stored = record.result if isinstance(record.result, dict) and ENVELOPE in record.result else {}
    call = stored or record.args
    result = TaskResult(
        task=task,
        id=str(record.id),
        status=STATUS[record.status],
        enqueued_at=record.enqueued_at,
        started_at=_first_start(record),
        finished_at=record.finished_at,
        last_attempted_at=_last_start(record),
        args=list(call.get("args", [])),
        kwargs=dict(call.get("kwargs", {})),
        backend=backend,
        errors=errors(record),
        worker_ids=worker_ids(record, stored.get("worker")),
    )
    if record.status is JobStatus.SUCCEEDED:
        object.__setattr__(result, "_return_value", stored.get("value"))
    return result


def worker_ids(record: JobRecord, succeeded_by: str | None = None) -> list[str]:
    """One worker per attempt that ran: the failed ones', then the running or successful one's."""
    ids = [str(entry.get("worker") or "unknown") for entry in record.history]
    last = record.worker if record.status is JobStatus.RUNNING else succeeded_by
    return ids + ([last] if last else [])


def errors(record: JobRecord) -> list[Any]:
    found = [error(str(e.get("error") or ""), e.get("traceback")) for e in record.history]
    if record.status is JobStatus.CANCELLED:
        found.append(TaskError(exception_class_path=_CANCELLED, traceback=record.error or ""))
    return found


_CANCELLED = "queue_runtime.errors.JobCancelled"


def error(message: str, traceback: str | None) -> Any:
    return TaskError(
        exception_class_path=class_path(message, traceback), traceback=traceback or message
    )


def class_path(message: str, traceback: str | None) -> str:
    """The dotted class of a recorded failure (``module.Class``; builtins as ``builtins.X``).

    The worker records ``Class: message`` and the formatted traceback, whose
    exception line names the class with its module (bare for builtins).
    """
    for prefix, path in _NO_TRACEBACK:
        if message.startswith(prefix) and not traceback:
            return path
    name = message.split(":", 1)[0].strip()
    for line in reversed((traceback or "").splitlines()):
        head = line.split(":", 1)[0]
        if line[:1].isspace() or not _DOTTED.fullmatch(head):
            continue
        if head.rsplit(".", 1)[-1] == name.rsplit(".", 1)[-1]:
            return head if "." in head else f"builtins.{head}"
    return f"builtins.{name}" if name.isidentifier() else "builtins.Exception"


def _first_start(record: JobRecord) -> datetime | None:
    for entry in record.history:
        if entry.get("started"):
            return _when(entry["started"])
    return record.started_at


def _last_start(record: JobRecord) -> datetime | None:
    if record.started_at is not None:
        return record.started_at
    starts = [entry.get("started") for entry in record.history if entry.get("started")]
    return _when(starts[-1]) if starts else None


def _when(value: Any) -> datetime | None:
    if isinstance(value, datetime):
        return value
    return datetime.fromisoformat(value) if isinstance(value, str) else None
