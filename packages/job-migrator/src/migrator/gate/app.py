"""The runtime and the app a gate or rollout command works on.

The runtime is built from the project's ``[tool.queue_runtime]``, the
``QUEUE_RUNTIME_*`` environment and explicit overrides (as ``migrator plan
--check`` does); fingerprints need the app's job functions, so the app module
named by ``--app`` is imported (its ``@job`` decorators register the jobs),
after the app's framework is set up exactly as ``queue-runtime worker`` does it
(``django_settings`` / ``flask_app`` in ``[tool.queue_runtime]``: see
:mod:`queue_runtime.bootstrap`).
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from migrator.errors import GateError
from migrator.plan.config import load_check_settings
from queue_runtime.bootstrap import BootstrapError, bootstrap
from queue_runtime.config import Settings
from queue_runtime.jobs import JobFunction
from queue_runtime.registry import default_registry
from queue_runtime.runtime import Runtime


@dataclass(frozen=True)
class QueueTarget:
    """Where the queue's tables are: the app's folder and the overrides of its settings."""

    project: Path
    database_url: str | None = None
    redis_url: str | None = None


@contextmanager
def opened(target: QueueTarget) -> Iterator[Runtime]:
    """The target's runtime for one command, closed after it."""
    runtime = open_runtime(target.project, target.database_url, target.redis_url)
    try:
        yield runtime
    finally:
        runtime.close()


def open_runtime(
    project: Path, database_url: str | None = None, redis_url: str | None = None
) -> Runtime:
    """A Runtime (not the process's current one) for the project's queue; close it after use."""
    settings = load_check_settings(project, database_url=database_url, redis_url=redis_url).runtime
    if not settings.database_url:
        raise GateError(
            "no database URL: set [tool.queue_runtime] database_url, "
            "QUEUE_RUNTIME_DATABASE_URL or --database-url"
        )
    if settings.inventory_path and not Path(settings.inventory_path).is_absolute():
        absolute = str((project / settings.inventory_path).resolve())
        settings = settings.model_copy(update={"inventory_path": absolute})
    return Runtime(settings)


def load_app(
    module: str, project: Path, settings: Settings | None = None
) -> dict[str, JobFunction[..., Any]]:
    """Import the app module (from the project folder) and return the registered jobs by name.

    The framework named by ``settings`` (default: the project's) is set up first.
    """
    root = str(project.resolve())
    if root not in sys.path:
        sys.path.insert(0, root)
    try:
        bootstrap(settings or load_check_settings(project).runtime)
    except BootstrapError as exc:
        raise GateError(f"cannot set up the app for --app {module}: {exc}") from exc
    try:
        importlib.import_module(module)
    except Exception as exc:  # the app's own import failing is the user's error to see
        raise GateError(f"cannot import --app {module}: {type(exc).__name__}: {exc}") from exc
    return {name: default_registry.get(name, JobFunction) for name in default_registry.names()}
