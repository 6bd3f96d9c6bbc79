"""The standalone server: the standard library's WSGI server, one thread per request.

Enough for a dashboard a few operators look at (each page is a few small
queries); put it behind the app's own server by mounting the WSGI or ASGI
app instead when more is needed.
"""

from __future__ import annotations

import contextlib
import logging
from socketserver import ThreadingMixIn
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from queue_runtime.web._http import WsgiApp

log = logging.getLogger("queue_runtime.web")


class _ThreadingServer(ThreadingMixIn, WSGIServer):
    daemon_threads = True
    allow_reuse_address = True


class _QuietHandler(WSGIRequestHandler):
    """Request lines go to logging (DEBUG), never to stderr; the URL may hold the token."""

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("%s %s", self.address_string(), format % args)


def bind(app: WsgiApp, host: str, port: int) -> WSGIServer:
    """A server listening on ``host:port`` (raises OSError: the port is taken, the host unknown)."""
    return make_server(host, port, app, server_class=_ThreadingServer, handler_class=_QuietHandler)


def serve(server: WSGIServer) -> None:
    """Serve until interrupted (Ctrl-C ends it quietly), then close the socket."""
    with server, contextlib.suppress(KeyboardInterrupt):
        server.serve_forever()
