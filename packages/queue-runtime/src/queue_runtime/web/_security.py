"""Who may look, who may act: the auth token, the session, the CSRF token.

- The auth token (standalone mode): ``Authorization: Bearer T``, or a first
  visit with ``?token=T`` that sets the ``qr_auth`` cookie (HttpOnly,
  SameSite=Strict, holding a digest of the token, never the token). Several
  named tokens may be given (``{"alice": "T1"}``): the name is who acted.
- The session: a random ``qr_session`` cookie, set on the first page.
- CSRF: every form carries ``csrf`` = HMAC(key, session); a POST whose
  ``csrf`` does not match its session cookie is refused (403). The key is
  ``secret`` when given (share it between processes behind one load
  balancer), else derived from the tokens, else random per process.
- Host (DNS rebinding): a dashboard given ``hosts`` (the standalone one
  without a token, on a loopback address) answers only requests whose
  ``Host`` names one of them. A page of ``evil.example`` whose name an
  attacker re-pointed at 127.0.0.1 sends ``Host: evil.example``; without
  this check it could read every page and post every form.
- Origin: a POST whose ``Origin`` is not the dashboard's own (another site,
  or ``null``) is refused, token or not. No ``Origin`` (old clients, curl)
  leaves the CSRF token as the check.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import SplitResult, urlsplit

from queue_runtime.web._http import Request

AUTH_COOKIE = "qr_auth"
SESSION_COOKIE = "qr_session"
DEFAULT_WHO = "dashboard"
DEFAULT_PORTS = {"http": 80, "https": 443}

Who = Callable[[Mapping[str, Any]], "str | None"]


def _digest(token: str) -> str:
    return hashlib.sha256(b"queue-runtime-dashboard:" + token.encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class Identity:
    who: str
    via_query: bool = False  # authenticated by ``?token=``: set the cookie, drop it from the URL


class Guard:
    def __init__(
        self,
        token: str | Mapping[str, str] | None,
        secret: str | None = None,
        who: Who | None = None,
        hosts: Sequence[str] = (),
    ) -> None:
        tokens = {DEFAULT_WHO: token} if isinstance(token, str) else dict(token or {})
        self._digests = {_digest(t): name for name, t in tokens.items() if t}
        if secret:
            key = secret.encode()
        elif self._digests:
            key = hashlib.sha256("".join(sorted(self._digests)).encode()).digest()
        else:
            key = secrets.token_bytes(32)
        self._key = key
        self._who = who
        self.hosts = tuple(h.strip("[]").lower() for h in hosts)  # the first: where to go

    @property
    def needs_token(self) -> bool:
        return bool(self._digests)

    def identify(self, request: Request) -> Identity | None:
        """Who is asking; None: a token is required and none (or a wrong one) was given."""
        if not self._digests:
            return Identity(self._mounted_who(request))
        bearer = request.headers.get("authorization", "")
        if bearer.lower().startswith("bearer "):
            return self._known(_digest(bearer[7:].strip()))
        given = request.arg("token")
        if given:
            found = self._known(_digest(given))
            return Identity(found.who, via_query=True) if found else None
        return self._known(request.cookies.get(AUTH_COOKIE, ""))

    def _known(self, digest: str) -> Identity | None:
        for known, name in self._digests.items():
            if hmac.compare_digest(known, digest):
                return Identity(name)
        return None

    def _mounted_who(self, request: Request) -> str:
        found = self._who(request.environ) if self._who else None
        return found or str(request.environ.get("REMOTE_USER") or DEFAULT_WHO)

    def auth_cookie_value(self, request: Request) -> str:
        return _digest(request.arg("token"))

    def csrf(self, session: str) -> str:
        return hmac.new(self._key, session.encode(), hashlib.sha256).hexdigest()

    def csrf_ok(self, request: Request) -> bool:
        session = request.cookies.get(SESSION_COOKIE, "")
        given = request.field("csrf")
        return bool(session and given) and hmac.compare_digest(self.csrf(session), given)

    def host_ok(self, request: Request) -> bool:
        """True unless the dashboard answers to named hosts only and ``Host`` is not one."""
        if not self.hosts:
            return True
        found = _split_host(request.headers.get("host", ""))
        return found is not None and (found.hostname or "") in self.hosts


def origin_ok(request: Request) -> bool:
    """False when the request names an ``Origin`` other than the host it was sent to.

    The host is ``Host`` or, behind a proxy that rewrites it, ``X-Forwarded-Host``
    (a page on another site can set neither on a form it posts). A port left
    out counts as the default of the Origin's scheme, so ``https://dash.example``
    matches ``Host: dash.example`` behind a TLS-terminating proxy.
    """
    origin = request.headers.get("origin")
    if origin is None:
        return True
    try:
        parts = urlsplit(origin.strip())
        port = parts.port or DEFAULT_PORTS.get(parts.scheme)
    except ValueError:
        return False
    if port is None or not parts.hostname:
        return False  # "null" (a sandboxed frame, a file), or no scheme we serve
    wanted = (parts.hostname, port)
    hosts = (request.headers.get(h, "") for h in ("host", "x-forwarded-host"))
    return any(_authority(h.split(",")[0], parts.scheme) == wanted for h in hosts if h)


def _split_host(host: str) -> SplitResult | None:
    try:
        parts = urlsplit("//" + host.strip())
        parts.port  # noqa: B018 - a port that is not a number raises here
    except ValueError:
        return None
    return parts if parts.hostname else None


def _authority(host: str, scheme: str) -> tuple[str, int] | None:
    parts = _split_host(host)
    if parts is None or parts.hostname is None:
        return None
    return parts.hostname, parts.port or DEFAULT_PORTS[scheme]


def new_session() -> str:
    return secrets.token_hex(16)
