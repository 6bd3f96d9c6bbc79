"""Setting a framework up once per process, and the scope each job runs in."""

from __future__ import annotations

import threading
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from queue_runtime._settings_load import load_settings
from queue_runtime.bootstrap._types import Framework
from queue_runtime.config import Settings, UrlScheme

JobScope = Callable[[], AbstractContextManager[object]]


@dataclass(frozen=True, slots=True)
class FrameworkSpec:
    """Which framework to set up, and how; hashable: one set-up per process and spec."""

    django_settings: str | None = None
    flask_app: str | None = None
    server_name: str | None = None
    url_scheme: UrlScheme | None = None

    @classmethod
    def of(cls, settings: Settings) -> FrameworkSpec:
        return cls(
            settings.django_settings, settings.flask_app, settings.server_name, settings.url_scheme
        )

    @property
    def framework(self) -> Framework:
        if self.django_settings:
            return Framework.DJANGO
        return Framework.FLASK if self.flask_app else Framework.NONE

    def worker_flags(self) -> list[str]:
        """The ``queue-runtime worker`` options that set this framework up."""
        if self.django_settings:
            return ["--django-settings", self.django_settings]
        if not self.flask_app:
            return []
        flags = ["--flask-app", self.flask_app]
        if self.server_name:
            flags += ["--server-name", self.server_name]
        return flags + (["--url-scheme", self.url_scheme.value] if self.url_scheme else [])


class AppContext(Protocol):
    """A framework once set up: what every job attempt runs inside."""

    @property
    def framework(self) -> Framework: ...

    def job_scope(self) -> AbstractContextManager[object]: ...


class _Plain:
    framework = Framework.NONE

    def job_scope(self) -> AbstractContextManager[object]:
        return nullcontext()


# A framework is process state (Django's settings are global; a Flask factory called twice
# builds two apps whose extensions disagree), so each spec is set up once per process.
_loaded: dict[FrameworkSpec, AppContext] = {}
_lock = threading.Lock()


def bootstrap(spec: FrameworkSpec | Settings) -> AppContext:
    """The framework of ``spec`` set up in this process (the first call does it)."""
    if isinstance(spec, Settings):
        spec = FrameworkSpec.of(spec)
    with _lock:
        if spec not in _loaded:
            _loaded[spec] = _set_up(spec)
        return _loaded[spec]


def bootstrap_project(cwd: Path) -> AppContext:
    """The framework the config sources name for a project run from ``cwd`` (as a worker's)."""
    return bootstrap(load_settings(cwd=cwd))


def job_scope(settings: Settings) -> JobScope:
    """What a worker wraps each attempt in: the framework's per-job scope."""
    return bootstrap(settings).job_scope


def _set_up(spec: FrameworkSpec) -> AppContext:
    # Imported here: each framework module imports its framework, which may not be installed.
    if spec.framework is Framework.DJANGO and spec.django_settings:
        from queue_runtime.bootstrap._django import DjangoContext

        return DjangoContext(spec.django_settings)
    if spec.framework is Framework.FLASK and spec.flask_app:
        from queue_runtime.bootstrap._flask import FlaskContext

        return FlaskContext(spec.flask_app, spec.server_name, spec.url_scheme)
    return _Plain()
