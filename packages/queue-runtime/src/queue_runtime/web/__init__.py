"""The web dashboard: the queue and the migration on a page (the ``queue-runtime[web]`` extra).

- :func:`make_wsgi_app` / :func:`make_asgi_app`: mount it under a path of the
  app (``SCRIPT_NAME`` / ``root_path`` are honoured), behind the app's own
  authentication;
- ``queue-runtime dashboard --port 9181``: standalone (:mod:`queue_runtime.web.command`).

Importing this package needs nothing beyond the runtime; building an app
needs Jinja2 (``pip install 'queue-runtime[web]'``), else
:class:`WebExtraMissing`. See docs/dashboard.md.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from queue_runtime.errors import QueueError

if TYPE_CHECKING:
    from queue_runtime.runtime import Runtime
    from queue_runtime.web._asgi import AsgiApp
    from queue_runtime.web._http import WsgiApp
    from queue_runtime.web._security import Who

__all__ = ["WebExtraMissing", "make_asgi_app", "make_wsgi_app"]


class WebExtraMissing(QueueError):
    """The dashboard needs the web extra (Jinja2): pip install 'queue-runtime[web]'."""


def _require_extra() -> None:
    try:
        import jinja2  # noqa: F401
    except ImportError:
        raise WebExtraMissing() from None


def make_wsgi_app(
    runtime: Runtime | None = None,
    *,
    token: str | Mapping[str, str] | None = None,
    read_only: bool = False,
    inventory: str | None = None,
    secret: str | None = None,
    who: Who | None = None,
    allowed_hosts: Sequence[str] = (),
) -> WsgiApp:
    """The dashboard as a WSGI application.

    ``runtime``: the Runtime to show (default: ``queue_runtime.current()`` per
    request). ``token``: required on every request (a ``?token=`` visit sets a
    cookie; ``Authorization: Bearer`` works too); a mapping ``{name: token}``
    records the name as who acted. Without a token the app's own
    authentication is the gate: ``who(environ)`` (default ``REMOTE_USER``,
    else ``"dashboard"``) names who acted. ``read_only``: no forms, every POST
    403. ``inventory``: the inventory JSON for the migration page (default
    ``Settings.inventory_path``). ``secret``: the CSRF key, to share between
    processes serving one dashboard (default: derived from the tokens, else
    random per process). ``allowed_hosts``: answer only requests whose ``Host``
    names one of them (400 otherwise; the first is the address the refusal
    points to), against DNS rebinding when nothing else guards the dashboard;
    empty (the default): the app's server checks ``Host``. A POST whose
    ``Origin`` is another site's is refused (403) in every case.
    """
    _require_extra()
    from queue_runtime.web._app import Dashboard, Options
    from queue_runtime.web._pages import ROUTES, job_page
    from queue_runtime.web._security import Guard

    guard = Guard(token, secret, who, allowed_hosts)
    return Dashboard(runtime, guard, Options(read_only, inventory), ROUTES, job_page)


def make_asgi_app(
    runtime: Runtime | None = None,
    *,
    token: str | Mapping[str, str] | None = None,
    read_only: bool = False,
    inventory: str | None = None,
    secret: str | None = None,
    who: Who | None = None,
    allowed_hosts: Sequence[str] = (),
) -> AsgiApp:
    """The same dashboard as an ASGI application (each request runs in a worker thread)."""
    from queue_runtime.web._asgi import asgi_from_wsgi

    wsgi = make_wsgi_app(
        runtime,
        token=token,
        read_only=read_only,
        inventory=inventory,
        secret=secret,
        who=who,
        allowed_hosts=allowed_hosts,
    )
    return asgi_from_wsgi(wsgi)
