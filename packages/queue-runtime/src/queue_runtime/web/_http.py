"""The few pieces of HTTP the dashboard needs over plain WSGI: a request, a response.

No framework: the dashboard is a handful of pages and three POST actions,
and a WSGI callable is what Flask, Django and every WSGI server mount.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from http import HTTPStatus
from http.cookies import SimpleCookie
from typing import Any
from urllib.parse import parse_qs, quote

StartResponse = Callable[[str, list[tuple[str, str]]], Any]
WsgiApp = Callable[[dict[str, Any], StartResponse], Iterable[bytes]]

MAX_FORM = 1 << 20  # bytes of a POST body: a form of ids and a reason, never more
BIGINT_MAX = 2**63 - 1  # a job id is a PostgreSQL bigint


def whole_number(text: str) -> int | None:
    """``text`` as a non-negative bigint, or None: ASCII digits only (``"²".isdigit()``
    is true and ``int("²")`` raises; ``int`` also refuses more than 4,300 digits)."""
    if not (text.isascii() and text.isdigit()) or len(text) > 19:
        return None
    number = int(text)
    return number if number <= BIGINT_MAX else None


@dataclass(frozen=True, slots=True)
class Request:
    method: str
    path: str  # below the mount point, starting with "/"
    root: str  # the mount point (SCRIPT_NAME), "" at the top
    query: Mapping[str, list[str]]
    form: Mapping[str, list[str]]
    cookies: Mapping[str, str]
    headers: Mapping[str, str]  # lower-case names
    environ: Mapping[str, Any]

    @classmethod
    def from_environ(cls, environ: dict[str, Any]) -> Request:
        method = str(environ.get("REQUEST_METHOD", "GET")).upper()
        cookie = SimpleCookie()
        cookie.load(str(environ.get("HTTP_COOKIE", "")))
        headers = {
            key[5:].replace("_", "-").lower(): str(value)
            for key, value in environ.items()
            if key.startswith("HTTP_")
        }
        return cls(
            method=method,
            path=str(environ.get("PATH_INFO") or "/"),
            root=str(environ.get("SCRIPT_NAME", "")).rstrip("/"),
            query=parse_qs(str(environ.get("QUERY_STRING", ""))),
            form=_form(environ) if method == "POST" else {},
            cookies={name: morsel.value for name, morsel in cookie.items()},
            headers=headers,
            environ=environ,
        )

    def arg(self, name: str) -> str:
        """The first value of a query argument, "" when absent."""
        return (self.query.get(name) or [""])[0].strip()

    def field(self, name: str) -> str:
        """The first value of a form field, "" when absent."""
        return (self.form.get(name) or [""])[0].strip()


def _form(environ: dict[str, Any]) -> dict[str, list[str]]:
    kind = str(environ.get("CONTENT_TYPE", "")).split(";")[0].strip().lower()
    if kind != "application/x-www-form-urlencoded":
        return {}
    try:
        length = min(int(environ.get("CONTENT_LENGTH") or 0), MAX_FORM)
    except ValueError:
        length = 0
    body = environ["wsgi.input"].read(length) if length > 0 else b""
    return parse_qs(body.decode("utf-8", "replace"))


@dataclass(slots=True)
class Response:
    body: str = ""
    status: HTTPStatus = HTTPStatus.OK
    headers: list[tuple[str, str]] = field(default_factory=list)
    content_type: str = "text/html; charset=utf-8"

    def send(self, start_response: StartResponse) -> list[bytes]:
        data = self.body.encode("utf-8")
        headers = [
            ("Content-Type", self.content_type),
            ("Content-Length", str(len(data))),
            *self.headers,
        ]
        start_response(f"{self.status.value} {self.status.phrase}", headers)
        return [data]


def redirect(location: str) -> Response:
    """303 See Other: after a POST, the browser GETs the page it names."""
    return Response(status=HTTPStatus.SEE_OTHER, headers=[("Location", location)])


def set_cookie(name: str, value: str, request: Request) -> tuple[str, str]:
    """An HttpOnly, SameSite=Strict cookie for the dashboard's path (Secure over https)."""
    secure = "; Secure" if request.environ.get("wsgi.url_scheme") == "https" else ""
    return (
        "Set-Cookie",
        f"{name}={quote(value, safe='')}; Path={request.root or '/'}; HttpOnly; "
        f"SameSite=Strict{secure}",
    )
