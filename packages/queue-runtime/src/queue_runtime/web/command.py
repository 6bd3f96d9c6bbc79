"""``queue-runtime dashboard``: the dashboard on its own port (standard library server).

Without a token it binds to a loopback address only, and says so; asked to
bind elsewhere without a token it refuses (exit 2). Without a token it also
answers only requests whose ``Host`` is a loopback name (DNS rebinding). The token comes from
``--token`` or ``QUEUE_RUNTIME_DASHBOARD_TOKEN``. This module imports only the
standard library at import time: ``queue-runtime --help`` works without the
web extra, and ``dashboard`` without it says what to install.
"""

from __future__ import annotations

import argparse
import ipaddress
import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from queue_runtime.runtime import Runtime

RuntimeFor = Callable[[argparse.Namespace], "Runtime"]
ImportApp = Callable[[str], None]

TOKEN_ENV = "QUEUE_RUNTIME_DASHBOARD_TOKEN"
DEFAULT_PORT = 9181


def add_parser(sub: Any, runtime: RuntimeFor, import_app: ImportApp) -> None:
    """Register ``dashboard`` on the ``queue-runtime`` subcommands.

    ``runtime`` builds the Runtime from the parsed flags, ``import_app`` imports
    ``--app`` (both the CLI's own: the same errors as every command).
    """
    p = sub.add_parser("dashboard", help="serve the web dashboard (needs queue-runtime[web])")
    p.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"default {DEFAULT_PORT}")
    p.add_argument("--host", default="127.0.0.1", help="default 127.0.0.1 (this machine only)")
    p.add_argument("--token", help=f"required on every request (default: ${TOKEN_ENV})")
    p.add_argument("--read-only", action="store_true", help="no actions: every POST is refused")
    p.add_argument("--inventory", metavar="FILE", help="inventory JSON for the migration page")
    p.add_argument("--app", metavar="APP_MODULE", help="import it: its jobs and periodic jobs")
    p.set_defaults(command=lambda args: cmd_dashboard(args, runtime, import_app))


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def loopback_names(host: str) -> tuple[str, ...]:
    """The names a token-less dashboard on ``host`` answers to: the bound address first.

    A DNS-rebinding page sends its own name as ``Host``; these are the names
    only this machine uses for itself.
    """
    bound = host.strip("[]").lower()
    return (bound, *(n for n in ("127.0.0.1", "localhost", "::1") if n != bound))


def cmd_dashboard(args: argparse.Namespace, runtime: RuntimeFor, import_app: ImportApp) -> int:
    token = args.token or os.environ.get(TOKEN_ENV) or None
    if token is None and not is_loopback(args.host):
        print(
            f"error: refusing to serve the dashboard on {args.host} without a token: "
            f"pass --token or set {TOKEN_ENV} (or keep --host 127.0.0.1)",
            file=sys.stderr,
        )
        return 2
    from queue_runtime.web import make_wsgi_app
    from queue_runtime.web._serve import serve

    if args.app:
        import_app(args.app)  # its @job functions: the migration and periodic pages
    app = make_wsgi_app(
        runtime(args),
        token=token,
        read_only=args.read_only,
        inventory=args.inventory,
        allowed_hosts=() if token else loopback_names(args.host),
    )
    where = f"http://{args.host}:{args.port}/"
    if token is None:
        print(f"no token given: serving the dashboard on {where} for this machine only (localhost)")
    else:
        print(f"serving the dashboard on {where} (open {where}?token=... once)")
    try:
        serve(app, args.host, args.port)
    except OSError as exc:
        print(
            f"error: cannot listen on {args.host}:{args.port}: {exc.strerror or exc}",
            file=sys.stderr,
        )
        return 2
    return 0
