"""A Flask app in a worker: loaded from ``pkg.module:app`` or a factory, an app context per job.

``server_name`` / ``url_scheme`` become ``SERVER_NAME`` / ``PREFERRED_URL_SCHEME``
so ``url_for(..., _external=True)`` in a job (a link in a mail) builds the link
the request would have built, instead of failing outside a request. With a
server name, each job runs in a blank request context for that host (``/``, no
cookies, no headers): code moved out of a view still reads ``session``,
``request`` and the locale selectors built on them (Flask-Babel's), which answer
as for a first visit. Without one, an app context only: a link fails loudly
instead of pointing at ``localhost``.
"""

from __future__ import annotations

import importlib
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING

from queue_runtime.bootstrap._types import BootstrapError, Framework
from queue_runtime.config import UrlScheme

if TYPE_CHECKING:
    from flask import Flask

# Looked up, in this order, when the target names a module only (as ``flask --app`` does).
_APP_NAMES = ("app", "application")
_FACTORY_NAMES = ("create_app", "make_app")


class FlaskContext:
    framework = Framework.FLASK

    def __init__(self, target: str, server_name: str | None, url_scheme: UrlScheme | None) -> None:
        self.app = locate_app(target)
        self.blank_request = bool(server_name)
        if server_name:
            self.app.config["SERVER_NAME"] = server_name
        if url_scheme:
            self.app.config["PREFERRED_URL_SCHEME"] = url_scheme.value

    def job_scope(self) -> AbstractContextManager[object]:
        # A fresh context per attempt: its teardown handlers (Flask-SQLAlchemy's session
        # removal among them) run when the job ends, as at the end of a request.
        if self.blank_request:
            return self.app.test_request_context("/")
        return self.app.app_context()


def locate_app(target: str) -> Flask:
    """``pkg.module:app`` (an app), ``pkg.module:create_app`` (a factory) or ``pkg.module``."""
    try:
        from flask import Flask
    except ImportError as exc:
        raise BootstrapError(f"flask_app = {target!r}, but Flask is not installed") from exc
    module_name, _, attr = target.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise BootstrapError(f"flask_app {target!r}: cannot import {module_name}: {exc}") from exc
    names = [attr] if attr else [*_APP_NAMES, *_FACTORY_NAMES]
    for name in names:
        found = _as_app(vars(module).get(name), Flask)
        if found is not None:
            return found
    raise BootstrapError(f"flask_app {target!r}: no Flask app or app factory named {names}")


def _as_app(candidate: object, flask: type[Flask]) -> Flask | None:
    if isinstance(candidate, flask):
        return candidate
    if isinstance(candidate, type) or not callable(candidate):
        return None
    built = candidate()  # an app factory takes no argument here, as with `flask --app`
    if not isinstance(built, flask):
        raise BootstrapError(f"the app factory {candidate!r} returned {type(built).__name__}")
    return built
