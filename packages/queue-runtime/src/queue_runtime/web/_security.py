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
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from queue_runtime.web._http import Request

AUTH_COOKIE = "qr_auth"
SESSION_COOKIE = "qr_session"
DEFAULT_WHO = "dashboard"

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


def new_session() -> str:
    return secrets.token_hex(16)
