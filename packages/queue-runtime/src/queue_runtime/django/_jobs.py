"""Django tasks as the runtime's jobs: one job definition per task, named by its module path.

The job's function is :func:`~queue_runtime.django._run.run_sync` (or
``run_async``) bound to the task; its stored arguments are ``{"args": [...],
"kwargs": {...}}`` exactly as Django's API took them (JSON, normalised as
Django does), so a ``TaskResult`` gives them back as given. The function
reports the task's own code to the gate's fingerprint (``__wrapped__``) and
its own signature to the payload codec (``__signature__``).

Workers find a task by name in the registry: registered when the task is
created (``validate_task`` runs as the module defining it is imported), or, for
a module the worker has not imported, by :func:`load`, which imports the
module path as Django's own database worker does, only inside the project's
installed apps and only if it names a task of this backend.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import threading
from collections.abc import Callable
from typing import Any

from queue_runtime.definition import JobDefinition
from queue_runtime.django import _run
from queue_runtime.django._task import retry_policy
from queue_runtime.registry import Registry, default_registry

_lock = threading.RLock()
# The task's module path and its runtime options -> its definition (``.using()`` copies share one).
_definitions: dict[tuple[Any, ...], JobDefinition] = {}
_tasks: dict[str, Any] = {}  # module path -> the task (what a TaskResult names)


def pool_of(task: Any, default_queue: str) -> str | None:
    """The pool a task runs in: its ``pool=``, else its queue (the default queue: default_pool)."""
    pool = getattr(task, "pool", None)
    if pool:
        return str(pool)
    return None if task.queue_name == default_queue else str(task.queue_name)


def definition(
    task: Any, default_queue: str, registry: Registry = default_registry
) -> JobDefinition:
    """The task's job definition, made once per task and options; registered under its name."""
    pool = pool_of(task, default_queue)
    key = (task.module_path, pool, *(getattr(task, o, None) for o in _KEYED))
    found = _definitions.get(key)  # the enqueue path: a dict lookup
    if found is None:
        with _lock:  # reentrant: registering may look a name up, which may load a task
            found = _definitions.get(key)
            if found is None:
                found = _definitions[key] = _declare(task, pool)
                _tasks.setdefault(task.module_path, task)
                registry.add(found)
    return found


def task_named(name: str, registry: Registry = default_registry) -> Any:
    """The Django task a stored job name stands for; None for a job that is not one of ours."""
    if name not in _tasks and name not in registry:  # the lookup may load (import) it
        return None
    return _tasks.get(name)


_KEYED = ("retries", "backoff", "max_backoff", "timeout", "idempotency", "idempotent")


def _declare(task: Any, pool: str | None) -> JobDefinition:
    return JobDefinition.declare(
        _runner(task),
        task.module_path,
        pool,
        retry=retry_policy(task),
        timeout=getattr(task, "timeout", None),
        idempotent=getattr(task, "idempotent", None),
        idempotency=getattr(task, "idempotency", None),
    )


def _runner(task: Any) -> Callable[..., Any]:
    if inspect.iscoroutinefunction(task.func):

        async def run_async(args: Any, kwargs: Any) -> Any:
            return await _run.run_async(task, args, kwargs)

        run: Callable[..., Any] = run_async
    else:

        def run_sync(args: Any, kwargs: Any) -> Any:
            return _run.run_sync(task, args, kwargs)

        run = run_sync
    signature = inspect.signature(run)
    functools.update_wrapper(run, task.func)  # name, module, docs; __wrapped__ for the gate
    run.__annotations__ = {}  # the task's would type the envelope: the payload codec's are none
    run.__signature__ = signature  # type: ignore[attr-defined]  # the payload's shape, not the task's
    return run


def load(name: str, installed: frozenset[str]) -> JobDefinition | None:
    """The definition of the task at module path ``name``; None when it names no task of ours.

    Only a module inside an installed app's top-level package is imported: a
    name in the queue never makes a worker import arbitrary code.
    """
    module_name, _, attr = name.rpartition(".")
    if not module_name or module_name.split(".", 1)[0] not in installed:
        return None
    try:
        module = importlib.import_module(module_name)
    except ImportError:
        return None
    found = getattr(module, attr, None)
    if found is None or not hasattr(found, "module_path") or found.module_path != name:
        return None
    backend = found.get_backend()
    default_queue = getattr(backend, "default_queue", None)
    if default_queue is None:  # a task of another backend: not ours to run
        return None
    return definition(found, default_queue)
