"""What a migrated app's workers need, told from its source text (nothing is imported or run).

``migrator apply`` prints it and puts it in the PR text: a moved Flask job dies
in a worker without an app context, a Django job without ``django.setup()``,
and nothing in the rewritten call sites says so.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from queue_runtime._settings_load import from_pyproject
from queue_runtime.bootstrap._load import FrameworkSpec
from queue_runtime.bootstrap._types import Framework
from queue_runtime.config import UrlScheme

_DJANGO_IMPORT = re.compile(r"^[ \t]*(?:from[ \t]+django[. \t]|import[ \t]+django\b)", re.MULTILINE)
_DJANGO_SETTINGS = re.compile(r"""DJANGO_SETTINGS_MODULE["']\s*,\s*["']([\w.]+)["']""")
_FLASK_FACTORY = re.compile(r"^def (create_app|make_app)\(", re.MULTILINE)
_FLASK_APP = re.compile(r"^(\w+)\s*=\s*Flask\(", re.MULTILINE)
_EXTERNAL_URL = re.compile(r"_external\s*=\s*True")  # url_for's keyword, in code or templates
_TEMPLATES = (".html", ".txt", ".j2", ".jinja")
_SKIPPED_DIRS = {".venv", "venv", ".git", "node_modules", "site-packages", "__pycache__", ".tox"}
SERVER_NAME_HINT = "HOST"  # placeholder in the suggested command: the app's public host name
SETTINGS_HINT = "SETTINGS_MODULE"  # placeholder: a reusable Django app names no settings itself


@dataclass(frozen=True)
class WorkerBootstrap:
    """The framework context the app's workers need, and where that was learnt."""

    spec: FrameworkSpec
    configured: bool  # already in [tool.queue_runtime]: the worker sets it up as it is
    external_links: list[str] = field(default_factory=list)  # files with url_for(_external=True)

    @property
    def framework(self) -> Framework:
        return self.spec.framework

    def describe(self) -> str:
        if self.framework is Framework.NONE:
            return "Workers need no framework context: `queue-runtime worker APP_MODULE`."
        if self.configured:
            return (
                f"Workers set up the {self.framework.value.capitalize()} app from "
                f"[tool.queue_runtime] ({self._toml_inline()}): `queue-runtime worker APP_MODULE`."
                + self._scope_sentence()
            )
        if self.spec.django_settings == SETTINGS_HINT:
            return (
                "Workers need Django: this code imports Django but names no settings module"
                " (no manage.py, wsgi.py or asgi.py sets DJANGO_SETTINGS_MODULE): run"
                f" `queue-runtime worker APP_MODULE --django-settings {SETTINGS_HINT}` with the"
                " settings of the project that installs it, or set django_settings under"
                " [tool.queue_runtime]." + self._scope_sentence()
            )
        return (
            f"Workers need the {self.framework.value.capitalize()} app: run "
            f"`queue-runtime worker APP_MODULE {' '.join(self.flags())}`, or set "
            f"{self._toml_inline()} under [tool.queue_runtime]." + self._scope_sentence()
        )

    def flags(self) -> list[str]:
        return self.spec.worker_flags()

    def _toml_inline(self) -> str:
        pairs = [(flag[2:].replace("-", "_"), value) for flag, value in _pairs(self.flags())]
        return ", ".join(f'{key} = "{value}"' for key, value in pairs)

    def _scope_sentence(self) -> str:
        if self.framework is Framework.DJANGO:
            return (
                " Each job then runs after django.setup(), with the database connections"
                " closed around it as Django's request cycle does."
            )
        text = " Each job runs in its own Flask application context."
        if self.external_links:
            where = ", ".join(self.external_links[:5])
            text += (
                f" The app builds external links (url_for(..., _external=True) in {where}):"
                " server_name must be the host the app is served from, or those links fail"
                " in the worker."
            )
        return text


def _pairs(flags: list[str]) -> Iterator[tuple[str, str]]:
    return zip(flags[::2], flags[1::2], strict=True)


def describe_worker_bootstrap(project_root: Path) -> str:
    """One paragraph for ``migrator apply``: what ``queue-runtime worker`` needs for this app."""
    return detect(project_root).describe()


def detect(project_root: Path) -> WorkerBootstrap:
    """The configured framework context, else the one the app's source shows."""
    root = project_root.resolve()
    sources = list(_sources(root))
    links = [str(p.relative_to(root)) for p, text in sources if _EXTERNAL_URL.search(text)]
    configured = _configured(root)
    if configured.framework is not Framework.NONE:
        return WorkerBootstrap(configured, True, links)
    django = _django_settings(sources)
    if django:
        return WorkerBootstrap(FrameworkSpec(django_settings=django), False, links)
    if any(p.suffix == ".py" and _DJANGO_IMPORT.search(text) for p, text in sources):
        # Django code without manage.py / wsgi.py (a reusable app): the project that
        # installs it has the settings; a placeholder, never a guess.
        return WorkerBootstrap(FrameworkSpec(django_settings=SETTINGS_HINT), False, links)
    flask = _flask_target(sources, root)
    if flask is None:
        return WorkerBootstrap(FrameworkSpec(), False, links)
    # Links in mails need the public host: a placeholder the user replaces, never a guess.
    server, scheme = (SERVER_NAME_HINT, UrlScheme.HTTPS) if links else (None, None)
    spec = FrameworkSpec(flask_app=flask, server_name=server, url_scheme=scheme)
    return WorkerBootstrap(spec, False, links)


def _configured(root: Path) -> FrameworkSpec:
    pyproject = root / "pyproject.toml"
    table = from_pyproject(pyproject if pyproject.is_file() else None)
    values = {key.replace("-", "_"): value for key, value in table.items()}
    scheme = values.get("url_scheme")
    return FrameworkSpec(
        values.get("django_settings"),
        values.get("flask_app"),
        values.get("server_name"),
        UrlScheme(scheme) if scheme else None,
    )


Sources = list[tuple[Path, str]]


def _django_settings(sources: Sources) -> str | None:
    for path, text in sources:
        if path.name in {"manage.py", "wsgi.py", "asgi.py"}:  # .py only by name
            found = _DJANGO_SETTINGS.search(text)
            if found:
                return found.group(1)
    return None


def _flask_target(sources: Sources, root: Path) -> str | None:
    apps: list[str] = []
    for path, text in sources:
        if path.suffix != ".py" or "flask" not in text.lower():
            continue
        factory = _FLASK_FACTORY.search(text)
        if factory:
            return f"{_module_of(path, root)}:{factory.group(1)}"
        app = _FLASK_APP.search(text)
        if app:
            apps.append(f"{_module_of(path, root)}:{app.group(1)}")
    return apps[0] if apps else None


def _module_of(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts and parts[0] == "src":
        parts = parts[1:]
    if parts and parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _sources(root: Path) -> Iterator[tuple[Path, str]]:
    """The app's Python files and templates (not tests or environments), sorted, with text."""
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in _SKIPPED_DIRS and not d.startswith("test"))
        for name in sorted(files):
            if name.endswith((".py", *_TEMPLATES)) and not name.startswith("test"):
                path = Path(folder) / name
                try:
                    yield path, path.read_text(encoding="utf-8", errors="replace")
                except OSError:
                    continue
