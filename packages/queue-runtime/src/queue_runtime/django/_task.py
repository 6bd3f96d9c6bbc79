"""``RuntimeTask``: Django's ``Task`` with the runtime's options, and the ``@task`` that sets them.

Django 6.1 forwards ``@task(**kwargs)`` to the backend's ``task_class``, so
``@task(retries=3, timeout=30)`` works with Django's own decorator there; on
Django 6.0 (whose decorator takes only Django's keywords) this module's
:func:`task` does the same. ``.using(...)`` keeps the options (a dataclass copy).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from queue_runtime.config import Idempotency, RetryPolicy
from queue_runtime.django._compat import (
    DEFAULT_TASK_PRIORITY,
    DEFAULT_TASK_QUEUE_NAME,
    InvalidTask,
    Task,
    task_backends,
)


@dataclass(frozen=True, slots=True, kw_only=True)
class RuntimeTask(Task):  # type: ignore[misc]  # Django ships no type information
    """A Django task carrying the runtime's options (None: the runtime's defaults and config)."""

    pool: str | None = None  # None: the queue_name's pool ("default" -> default_pool)
    retries: int | None = None  # attempts after the first; None: Settings.retry
    backoff: float | None = None  # seconds: the first retry's backoff ceiling (full jitter)
    max_backoff: float | None = None  # seconds: the backoff cap
    timeout: float | None = None  # seconds per attempt; None: Settings.job_timeout
    idempotency: str | None = None  # a declared verdict: idempotent, needs_key, non_idempotent...
    idempotent: bool | None = None  # True / False: as @job(idempotent=...)


RUNTIME_OPTIONS = ("pool", "retries", "backoff", "max_backoff", "timeout", "idempotency")


def check_options(task: Any) -> None:
    """InvalidTask for an option the runtime would refuse (one line, naming the option)."""
    where = getattr(task, "module_path", "task")
    retries, timeout = getattr(task, "retries", None), getattr(task, "timeout", None)
    if retries is not None and (not isinstance(retries, int) or retries < 0):
        raise InvalidTask(f"{where}: retries must be a whole number >= 0, not {retries!r}")
    for name in ("backoff", "max_backoff"):
        value = getattr(task, name, None)
        if value is not None and not (isinstance(value, int | float) and value > 0):
            raise InvalidTask(f"{where}: {name} must be a number of seconds > 0, not {value!r}")
    if timeout is not None and not (isinstance(timeout, int | float) and timeout > 0):
        raise InvalidTask(f"{where}: timeout must be a number of seconds > 0, not {timeout!r}")
    verdict = getattr(task, "idempotency", None)
    if verdict is not None and verdict not in {v.value for v in Idempotency}:
        known = ", ".join(v.value for v in Idempotency)
        raise InvalidTask(f"{where}: idempotency={verdict!r}; expected one of {known}")


def retry_policy(task: Any) -> RetryPolicy | None:
    """The task's retry options as a RetryPolicy; None when it sets none (the runtime's applies)."""
    retries = getattr(task, "retries", None)
    backoff, cap = getattr(task, "backoff", None), getattr(task, "max_backoff", None)
    if retries is None and backoff is None and cap is None:
        return None
    fields: dict[str, Any] = {}
    if retries is not None:
        fields["max_attempts"] = retries + 1
    if backoff is not None:
        fields["base_delay"] = float(backoff)
    if cap is not None:
        fields["max_delay"] = float(cap)
    return RetryPolicy(**fields)


def task(
    function: Callable[..., Any] | None = None,
    *,
    priority: int = DEFAULT_TASK_PRIORITY,
    queue_name: str = DEFAULT_TASK_QUEUE_NAME,
    backend: str = "default",
    takes_context: bool = False,
    **options: Any,
) -> Any:
    """Django's ``@task`` with the runtime's options on Django 6.0 too (``retries=``, ``pool=``, ...).

    The backend's ``task_class`` builds the task, as Django's decorator does; a
    backend that is not this runtime's refuses the options (TypeError).
    """

    def wrapper(func: Callable[..., Any]) -> Any:
        return task_backends[backend].task_class(
            priority=priority,
            func=func,
            queue_name=queue_name,
            backend=backend,
            takes_context=takes_context,
            run_after=None,
            **options,
        )

    return wrapper(function) if function is not None else wrapper
