"""A Django project in a worker: ``django.setup()`` first, connections recycled around each job.

Django's request cycle calls ``close_old_connections()`` when a request starts
and when it ends (connections past ``CONN_MAX_AGE`` or left unusable are
closed; with the default ``CONN_MAX_AGE = 0`` every one is). A job is a request
that came through the queue: the same happens around it, in the executor
thread that runs it (Django's connections are per thread).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager

from queue_runtime.bootstrap._types import BootstrapError, Framework


class DjangoContext:
    framework = Framework.DJANGO

    def __init__(self, settings_module: str) -> None:
        try:
            import django
        except ImportError as exc:
            raise BootstrapError(
                f"django_settings = {settings_module!r}, but Django is not installed"
            ) from exc
        # The configured module wins over an inherited DJANGO_SETTINGS_MODULE: it is what
        # the worker was told to run.
        os.environ["DJANGO_SETTINGS_MODULE"] = settings_module
        try:
            django.setup()
        except ImportError as exc:
            raise BootstrapError(f"django_settings {settings_module!r}: {exc}") from exc
        self.settings_module = settings_module
        _load_task_backends(settings_module)

    def job_scope(self) -> AbstractContextManager[object]:
        return _recycled_connections()


def _load_task_backends(settings_module: str) -> None:
    """Create the project's task backends (``TASKS``), as Django's system checks do.

    A backend may prepare the worker on creation: ``queue_runtime.django.TaskBackend``
    lets the worker find tasks of modules it has not imported. Django before 6.0 has
    no ``django.tasks``: the ``django-tasks`` backport's backends then, if installed.
    """
    try:
        from django.tasks import task_backends
    except ImportError:
        try:  # the django-tasks backport, on Django before 6.0
            from django_tasks import task_backends  # type: ignore[import-not-found]
        except ImportError:
            return
    from django.core.exceptions import ImproperlyConfigured

    try:
        task_backends.all()
    except (ImportError, ImproperlyConfigured) as exc:  # TASKS names a backend that is not there
        raise BootstrapError(f"django_settings {settings_module!r}: TASKS: {exc}") from exc


@contextmanager
def _recycled_connections() -> Iterator[None]:
    from django.db import close_old_connections

    # On the event loop thread Django refuses synchronous connection calls; async jobs
    # manage their connections through Django's async API (sync_to_async closes them).
    sync = not _on_event_loop()
    if sync:
        close_old_connections()
    try:
        yield
    finally:
        if sync:
            close_old_connections()


def _on_event_loop() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True
