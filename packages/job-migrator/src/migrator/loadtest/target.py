"""Where a passing load test certifies: the app's own gate, not the sandbox's.

The certification is what opens the *app's* gate, so it goes where the app's
processes (and ``migrator gate status``) read it: the ``[tool.queue_runtime]``
settings of the folder the load test runs in (environment variables included,
as every ``migrator`` command reads them). ``--certify-into URL`` names the
app's database instead, with the app's schema. Only when the app configures
no ``database_url`` does the certification go into the sandbox's schema, and
the output says so.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from migrator.plan.config import load_check_settings
from queue_runtime import Settings

APP_SETTINGS = "the app's settings"
EXPLICIT = "--certify-into"
SANDBOX = (
    "the sandbox: the app has no [tool.queue_runtime] database_url here;"
    " --certify-into URL names its database"
)


@dataclass(frozen=True, slots=True)
class CertifyTarget:
    """The settings a pass certifies into (None: the sandbox's) and why those."""

    settings: Settings | None
    source: str

    def where(self, sandbox: Settings) -> str:
        """``<database>/<schema> (<why>)``, as the output says it."""
        settings = self.settings or sandbox
        return f"{database_label(settings.database_url)}/{settings.schema_name} ({self.source})"


def certify_target(project: Path, url: str | None = None) -> CertifyTarget:
    """The app's settings in ``project`` (``url`` as its database when given)."""
    app = load_check_settings(project, database_url=url).runtime
    if url:
        return CertifyTarget(app, EXPLICIT)
    if app.database_url:
        return CertifyTarget(app, APP_SETTINGS)
    return CertifyTarget(None, SANDBOX)


def database_label(url: str | None) -> str:
    """The database's name (and host) of a URL or key=value DSN, never its credentials."""
    if not url:
        return "?"
    if "://" in url:
        parts = urlsplit(url)
        name = parts.path.lstrip("/") or "?"
        host = parts.hostname or ""
        port = f":{parts.port}" if parts.port else ""
        return f"{host}{port}/{name}" if host else name
    found = re.search(r"(?:^|\s)dbname=(\S+)", url)
    return found.group(1).strip("'\"") if found else "?"
