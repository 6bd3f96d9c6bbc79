"""``TaskBackend``: Django's task API (``django.tasks``) on this runtime's queue.

``TASKS = {"default": {"BACKEND": "queue_runtime.django.TaskBackend"}}``: a
task's ``enqueue`` stores a job in the runtime's PostgreSQL queue (the gate and
the runtime's mode decide as for any job), ``queue-runtime worker`` runs it,
``get_result`` reads the job's record. Settings are the runtime's own
(``[tool.queue_runtime]``, the environment, or the app's ``configure()``);
``QUEUES`` lists the queue names tasks may use: ``"default"`` is the
runtime's ``default_pool``, any other name is the pool of that name.
"""

from __future__ import annotations

import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from django.apps import apps
from django.core import checks

from queue_runtime._enqueue import EnqueueOptions, aenqueue_one, enqueue_one
from queue_runtime.config import Mode
from queue_runtime.django import _jobs, _results
from queue_runtime.django._compat import (
    DEFAULT_TASK_QUEUE_NAME,
    BaseTaskBackend,
    InvalidTask,
    TaskResult,
    TaskResultDoesNotExist,
    TaskResultStatus,
    normalize_json,
    task_enqueued,
)
from queue_runtime.django._task import RuntimeTask, check_options
from queue_runtime.errors import ConfigError, JobNotFound
from queue_runtime.handle import InlineHandle, JobHandle
from queue_runtime.registry import default_registry
from queue_runtime.runtime import current
from queue_runtime.store import JobRecord

_ID_LIMIT = 2**63 - 1  # job ids are bigint


class TaskBackend(BaseTaskBackend):  # type: ignore[misc]  # Django ships no type information
    task_class = RuntimeTask
    supports_defer = True
    supports_async_task = True
    supports_get_result = True
    supports_priority = True

    def __init__(self, alias: str, params: dict[str, Any]) -> None:
        super().__init__(alias, params)
        self.default_queue = DEFAULT_TASK_QUEUE_NAME
        # Workers that have not imported a task's module find it by its module path.
        default_registry.add_loader(_load)

    def validate_task(self, task: Any) -> None:
        super().validate_task(task)
        check_options(task)
        _jobs.definition(task, self.default_queue)  # registered as the module is imported

    def enqueue(self, task: Any, args: Any, kwargs: Any) -> Any:
        self.validate_task(task)
        result = self._enqueue(task, normalize_json(args), normalize_json(kwargs))
        task_enqueued.send(type(self), task_result=result)
        return result

    async def aenqueue(self, task: Any, args: Any, kwargs: Any) -> Any:
        """Native: the job is stored on the running loop's own PostgreSQL pool, no thread
        (an inline run, and the few reads that have no async twin, go through one:
        :func:`queue_runtime._enqueue.aenqueue_one`)."""
        self.validate_task(task)
        args, kwargs = normalize_json(args), normalize_json(kwargs)
        job = _jobs.definition(task, self.default_queue)
        with _invalid(task):
            handle = await aenqueue_one(job, (args, kwargs), {}, _options(task))
        if isinstance(handle, InlineHandle):
            result = _inline_result(task, handle, self.alias, args, kwargs)
        else:
            record = await current().store.aget(handle.id)
            result = _results.from_record(task, _found(record, handle.id), self.alias)
        await task_enqueued.asend(type(self), task_result=result)
        return result

    def _enqueue(self, task: Any, args: list[Any], kwargs: dict[str, Any]) -> Any:
        job = _jobs.definition(task, self.default_queue)
        with _invalid(task):
            handle = enqueue_one(job, (args, kwargs), {}, _options(task))
        return self._enqueued(task, handle, args, kwargs)

    def _enqueued(
        self, task: Any, handle: JobHandle, args: list[Any], kwargs: dict[str, Any]
    ) -> Any:
        if isinstance(handle, InlineHandle):  # the runtime's mode or gate ran it in-process
            return _inline_result(task, handle, self.alias, args, kwargs)
        # Read back once: the stored enqueue time (the database's clock) and status, so the
        # result equals what get_result() answers for it.
        return _results.from_record(task, handle.record(), self.alias)

    def get_result(self, result_id: str) -> Any:
        job_id = _job_id(result_id)
        record = current().store.get(job_id)
        task = _jobs.task_named(record.name) if record is not None else None
        if record is None or task is None:
            raise TaskResultDoesNotExist(result_id)
        return _results.from_record(task, record, self.alias)

    async def aget_result(self, result_id: str) -> Any:
        """Native: one read on the running loop's own PostgreSQL pool."""
        record = await current().store.aget(_job_id(result_id))
        task = _jobs.task_named(record.name) if record is not None else None
        if record is None or task is None:
            raise TaskResultDoesNotExist(result_id)
        return _results.from_record(task, record, self.alias)

    def check(self, **kwargs: Any) -> list[checks.CheckMessage]:
        return [*super().check(**kwargs), *_configuration_checks(self)]


def _options(task: Any) -> EnqueueOptions:
    # after_commit=False: Django's task API promises an id at enqueue (on_commit is the caller's).
    return EnqueueOptions(run_at=task.run_after, priority=task.priority, after_commit=False)


@contextmanager
def _invalid(task: Any) -> Iterator[None]:
    """A pool the runtime does not know, and the like, is Django's InvalidTask."""
    try:
        yield
    except ConfigError as exc:
        raise InvalidTask(f"{task.module_path}: {exc}") from exc


def _found(record: JobRecord | None, job_id: int) -> JobRecord:
    if record is None:  # purged between the enqueue and the read: as handle.record()
        raise JobNotFound(str(job_id))
    return record


def _job_id(result_id: Any) -> int:
    text = str(result_id)
    if not text.isdigit() or int(text) > _ID_LIMIT:
        raise TaskResultDoesNotExist(result_id)
    return int(text)


def _inline_result(
    task: Any, handle: InlineHandle, alias: str, args: list[Any], kwargs: dict[str, Any]
) -> Any:
    record = handle.record()
    stored = record.result if isinstance(record.result, dict) else {}
    failed = handle.error is not None
    result = TaskResult(
        task=task,
        id=f"inline{handle.id}",
        status=TaskResultStatus.FAILED if failed else TaskResultStatus.SUCCESSFUL,
        enqueued_at=None,
        started_at=None,
        finished_at=None,
        last_attempted_at=None,
        args=args,
        kwargs=kwargs,
        backend=alias,
        errors=[_results.error(str(record.error), _traceback(handle))] if failed else [],
        worker_ids=[str(stored.get("worker", "inline"))],
    )
    object.__setattr__(result, "_return_value", stored.get("value"))
    return result


def _traceback(handle: InlineHandle) -> str:
    return "".join(traceback.format_exception(handle.error)) if handle.error else ""


def _load(name: str) -> Any:
    """The registry's loader: a task of this project's installed apps, by module path.

    The installed apps are read when a name is looked up, never when the backend is
    created: a ``@task`` in a module imported while Django loads its apps creates the
    backend before the app registry is ready.
    """
    if not apps.ready:
        return None
    installed = frozenset(config.name.split(".", 1)[0] for config in apps.get_app_configs())
    return _jobs.load(name, installed)


def _configuration_checks(backend: TaskBackend) -> list[checks.CheckMessage]:
    settings = current().settings
    found: list[checks.CheckMessage] = []
    if settings.effective_mode is Mode.INLINE:
        found.append(
            checks.Warning(
                "queue_runtime runs in inline mode: tasks run in-process at enqueue",
                hint="Set QUEUE_RUNTIME_DATABASE_URL (or database_url under [tool.queue_runtime]).",
                id="queue_runtime.W001",
            )
        )
    unknown = sorted(
        q for q in backend.queues if q != backend.default_queue and q not in settings.pools
    )
    if unknown:
        found.append(
            checks.Error(
                f"QUEUES names {unknown}, which are not pools of the runtime",
                hint=f"Configure them under [tool.queue_runtime.pools] (known: {sorted(settings.pools)}).",
                id="queue_runtime.E001",
            )
        )
    return found
