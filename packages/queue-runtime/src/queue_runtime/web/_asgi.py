"""The WSGI dashboard as an ASGI app: a 50-line adapter instead of a dependency.

Each request's body is read first (the dashboard's forms are small), the
WSGI app runs in a worker thread (its database calls block), and the whole
response is sent at once. ``root_path`` (the mount point) becomes
``SCRIPT_NAME``; a ``path`` that still starts with it (Starlette's ``Mount``,
uvicorn's ``--root-path``) has it removed.
"""

from __future__ import annotations

import asyncio
import io
import sys
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from queue_runtime.web._http import WsgiApp

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
AsgiApp = Callable[[Scope, Receive, Send], Awaitable[None]]


def asgi_from_wsgi(app: WsgiApp) -> AsgiApp:
    async def asgi(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await _lifespan(receive, send)
            return
        if scope["type"] != "http":
            return  # websockets: nothing to serve
        body = await _body(receive)
        status, headers, chunks = await asyncio.to_thread(_call, app, _environ(scope, body))
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": b"".join(chunks)})

    return asgi


async def _lifespan(receive: Receive, send: Send) -> None:
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return


async def _body(receive: Receive) -> bytes:
    parts: list[bytes] = []
    while True:
        message = await receive()
        parts.append(message.get("body", b""))
        if not message.get("more_body"):
            return b"".join(parts)


def _environ(scope: Scope, body: bytes) -> dict[str, Any]:
    root = str(scope.get("root_path", "")).rstrip("/")
    path = str(scope.get("path", "/"))
    if root and (path == root or path.startswith(root + "/")):
        path = path[len(root) :] or "/"
    server = scope.get("server") or ("localhost", 80)
    environ: dict[str, Any] = {
        "REQUEST_METHOD": scope.get("method", "GET"),
        "SCRIPT_NAME": root,
        "PATH_INFO": path,
        "QUERY_STRING": bytes(scope.get("query_string", b"")).decode("latin-1"),
        "SERVER_NAME": str(server[0]),
        "SERVER_PORT": str(server[1]),
        "SERVER_PROTOCOL": f"HTTP/{scope.get('http_version', '1.1')}",
        "CONTENT_LENGTH": str(len(body)),
        "wsgi.version": (1, 0),
        "wsgi.url_scheme": scope.get("scheme", "http"),
        "wsgi.input": io.BytesIO(body),
        "wsgi.errors": sys.stderr,
        "wsgi.multithread": True,
        "wsgi.multiprocess": False,
        "wsgi.run_once": False,
    }
    for raw_name, raw_value in scope.get("headers", []):
        name, value = raw_name.decode("latin-1").lower(), raw_value.decode("latin-1")
        if name == "content-type":
            environ["CONTENT_TYPE"] = value
        elif name != "content-length":
            key = "HTTP_" + name.upper().replace("-", "_")
            joiner = "; " if name == "cookie" else ","
            environ[key] = f"{environ[key]}{joiner}{value}" if key in environ else value
    return environ


def _call(
    app: WsgiApp, environ: dict[str, Any]
) -> tuple[int, list[tuple[bytes, bytes]], list[bytes]]:
    started: list[Any] = []

    def start_response(status: str, headers: list[tuple[str, str]], *_: Any) -> None:
        started[:] = [status, headers]

    chunks = list(app(environ, start_response))
    status, headers = started
    encoded = [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in headers]
    return int(status.split(" ", 1)[0]), encoded, chunks
