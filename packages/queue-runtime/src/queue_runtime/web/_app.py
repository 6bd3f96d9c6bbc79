"""The dashboard as one WSGI callable: identify, check, route, render.

Every request: a Host the dashboard answers to when it names them (400
otherwise: DNS rebinding), the auth token when one is required (401 without
it), a session cookie, and for a POST write access (403 in read-only mode),
an Origin that is the dashboard's own when one is sent (403 from another
site) and the CSRF token bound to that session (403 without it). A NUL in a
query argument or form field is a bad request (400): PostgreSQL text cannot
hold one. Pages render through Jinja2 with autoescaping on for every
template; each response carries a Content-Security-Policy whose nonce is the
only way a script or style runs.
"""

from __future__ import annotations

import re
import secrets
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from http import HTTPStatus
from typing import Any
from urllib.parse import quote, urlencode

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape

from queue_runtime.errors import QueueError
from queue_runtime.runtime import Runtime
from queue_runtime.store import DashboardStore
from queue_runtime.web._http import (
    Request,
    Response,
    StartResponse,
    redirect,
    set_cookie,
    whole_number,
)
from queue_runtime.web._security import (
    AUTH_COOKIE,
    SESSION_COOKIE,
    Guard,
    new_session,
    origin_ok,
)
from queue_runtime.web._series import SeriesCache

NAV = (
    ("/", "Overview"),
    ("/jobs", "Jobs"),
    ("/stats", "By job"),
    ("/dead", "Dead letters"),
    ("/migration", "Migration"),
    ("/workers", "Workers"),
    ("/periodic", "Periodic"),
)
CSP = (
    "default-src 'none'; script-src 'nonce-{n}'; style-src 'nonce-{n}'; connect-src 'self';"
    " img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)
JOB_PATH = re.compile(r"/jobs/([0-9]{1,19})")


class HttpError(Exception):
    """A request the page cannot answer (bad filter, unknown job): its status and one line."""

    def __init__(self, status: HTTPStatus, message: str) -> None:
        super().__init__(message)
        self.status = status


MAX_IDS = 1000  # jobs per action from a page (replay, purge, cancel, retry now)


def job_ids(texts: list[str]) -> list[int]:
    """A form's ``ids``: at most MAX_IDS job ids (bigints), or 400 and nothing done."""
    ids = [whole_number(t) for t in texts]
    if len(texts) > MAX_IDS or None in ids:
        raise HttpError(HTTPStatus.BAD_REQUEST, f"ids: up to {MAX_IDS} job ids")
    return sorted({i for i in ids if i is not None})


def when(value: datetime | None) -> str:
    return value.strftime("%Y-%m-%d %H:%M:%S") if value is not None else ""


def short(text: str | None, width: int = 80) -> str:
    line = (text or "").strip().splitlines()[0] if (text or "").strip() else ""
    return line if len(line) <= width else line[: width - 1] + "…"


def _templates() -> Environment:
    env = Environment(
        loader=PackageLoader("queue_runtime.web", "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["when"] = when
    env.filters["short"] = short
    return env


@dataclass(frozen=True, slots=True)
class Options:
    read_only: bool
    inventory: str | None


@dataclass(slots=True)
class View:
    """One request being answered: who asks, their session, the page's nonce."""

    app: Dashboard
    request: Request
    who: str
    session: str
    nonce: str

    @property
    def root(self) -> str:
        return self.request.root

    def render(
        self, template: str, title: str, status: HTTPStatus = HTTPStatus.OK, **context: Any
    ) -> Response:
        body = self.app.templates.get_template(template).render(
            title=title,
            here=_section(self.request.path),
            nav=NAV,
            root=self.root,
            nonce=self.nonce,
            csrf=self.app.guard.csrf(self.session),
            read_only=self.app.options.read_only,
            flashes=context.pop("flashes", []),
            **context,
        )
        return Response(body, status)

    def fragment(self, template: str, **context: Any) -> Response:
        body = self.app.templates.get_template(template).render(root=self.root, **context)
        return Response(body)

    def go(self, path: str, **query: str) -> Response:
        return redirect(self.root + path + (f"?{urlencode(query)}" if query else ""))


def _section(path: str) -> str:
    for href, _ in reversed(NAV):
        if href != "/" and (path == href or path.startswith(href + "/")):
            return href
    return "/"


Handler = Callable[[View], Response]


class Dashboard:
    """The WSGI application (``make_wsgi_app`` builds it)."""

    def __init__(
        self,
        runtime: Runtime | None,
        guard: Guard,
        options: Options,
        routes: dict[tuple[str, str], Handler],
        job_page: Callable[[View, int], Response],
    ) -> None:
        self._runtime = runtime
        self.guard = guard
        self.options = options
        self.templates = _templates()
        self._routes = routes
        self._job_page = job_page
        self._queries: DashboardStore | None = None
        self.series = SeriesCache()
        self._lock = threading.Lock()

    @property
    def runtime(self) -> Runtime:
        if self._runtime is None:
            from queue_runtime.runtime import current

            return current()
        return self._runtime

    @property
    def queries(self) -> DashboardStore:
        """What the pages read: the Runtime picks the store (PostgreSQL, or the given ones)."""
        with self._lock:
            if self._queries is None:
                self._queries = self.runtime.open_dashboard()
            return self._queries

    def close(self) -> None:
        with self._lock:
            found, self._queries = self._queries, None
        if found is not None:
            found.close()

    def __call__(self, environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        return self.respond(Request.from_environ(environ)).send(start_response)

    def respond(self, request: Request) -> Response:
        nonce = secrets.token_urlsafe(12)
        session = request.cookies.get(SESSION_COOKIE) or ""
        view = View(self, request, "", session or new_session(), nonce)
        response = self._checked(view)
        if not session:
            response.headers.append(set_cookie(SESSION_COOKIE, view.session, request))
        response.headers.extend(_security_headers(nonce))
        return response

    def _checked(self, view: View) -> Response:
        request = view.request
        if not self.guard.host_ok(request):
            return self._refuse(view, HTTPStatus.BAD_REQUEST, _host_help(request, self.guard))
        identity = self.guard.identify(request)
        if identity is None:
            return self._refuse(view, HTTPStatus.UNAUTHORIZED, _token_help(request))
        view.who = identity.who
        if identity.via_query:
            return _drop_token(view)
        if request.method == "POST":
            refusal = self._write_refusal(request)
            if refusal:
                return self._refuse(view, HTTPStatus.FORBIDDEN, refusal)
        try:
            _no_nul(request)
            return self._route(view)
        except HttpError as exc:
            return self._refuse(view, exc.status, str(exc))
        except QueueError as exc:
            return self._refuse(view, HTTPStatus.SERVICE_UNAVAILABLE, f"{exc}")

    def _write_refusal(self, request: Request) -> str:
        """Why this POST may not act ("" when it may)."""
        if self.options.read_only:
            return "the dashboard is read-only"
        if not origin_ok(request):
            origin = request.headers.get("origin", "")
            return f"a form sent from another site (Origin {origin!r}) cannot act here"
        if not self.guard.csrf_ok(request):
            return "bad or missing CSRF token: reload the page"
        return ""

    def _route(self, view: View) -> Response:
        request = view.request
        handler = self._routes.get((request.method, request.path.rstrip("/") or "/"))
        if handler is not None:
            return handler(view)
        match = JOB_PATH.fullmatch(request.path)
        job_id = whole_number(match.group(1)) if match else None
        if job_id is not None and request.method == "GET":
            return self._job_page(view, job_id)
        if any(path == request.path for _, path in self._routes):
            return self._refuse(view, HTTPStatus.METHOD_NOT_ALLOWED, "method not allowed")
        return self._refuse(view, HTTPStatus.NOT_FOUND, f"no page {request.path}")

    def _refuse(self, view: View, status: HTTPStatus, message: str) -> Response:
        title = f"{status.value} {status.phrase}"
        return view.render("error.html", title, status, heading=title, message=message)


def _token_help(request: Request) -> str:
    if request.arg("token") or request.headers.get("authorization"):
        return "wrong token"
    return "a token is required: open this page as /?token=YOUR_TOKEN"


def _host_help(request: Request, guard: Guard) -> str:
    host = request.headers.get("host", "")
    home = guard.hosts[0]
    home = f"[{home}]" if ":" in home else home
    port = request.environ.get("SERVER_PORT", "")
    return (
        f"this dashboard answers only to {', '.join(guard.hosts)}, not to Host {host!r}: "
        f"open http://{home}:{port}/ (a dashboard without a token serves this machine only)"
    )


def _no_nul(request: Request) -> None:
    """PostgreSQL text cannot hold NUL: say so here, before a query fails on it."""
    for source, kind in ((request.query, "query argument"), (request.form, "form field")):
        for name, values in source.items():
            if "\x00" in name or any("\x00" in value for value in values):
                raise HttpError(
                    HTTPStatus.BAD_REQUEST, f"the {kind} {name!r} holds a NUL character"
                )


def _local(path: str) -> str:
    """``path`` as a location on this site: never ``//host`` or ``/\\host``, which browsers
    read as another site; the path's bytes percent-encoded (PEP 3333 hands them as latin-1,
    an ASGI server as decoded text)."""
    try:
        raw = path.encode("latin-1")
    except UnicodeEncodeError:
        raw = path.encode("utf-8")
    return "/" + quote(raw.lstrip(b"/"), safe="/:@!$&'()*+,;=")


def _drop_token(view: View) -> Response:
    """The token came in the URL: keep it in an HttpOnly cookie and take it out of the URL."""
    request = view.request
    rest = {k: v for k, v in request.query.items() if k != "token"}
    query = urlencode(rest, doseq=True)
    response = redirect(request.root + _local(request.path) + (f"?{query}" if query else ""))
    cookie = view.app.guard.auth_cookie_value(request)
    response.headers.append(set_cookie(AUTH_COOKIE, cookie, request))
    return response


def _security_headers(nonce: str) -> list[tuple[str, str]]:
    return [
        ("Content-Security-Policy", CSP.format(n=nonce)),
        ("X-Content-Type-Options", "nosniff"),
        ("X-Frame-Options", "DENY"),
        (
            "Referrer-Policy",
            "same-origin",
        ),  # no-referrer would make our own forms send Origin: null
        ("Cache-Control", "no-store"),
    ]
