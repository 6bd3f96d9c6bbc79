"""``queue-runtime dashboard``: the dashboard on its own port (standard library server).

Without a token it binds to a loopback address only, and says so; asked to
bind elsewhere without a token it refuses (exit 2). Without a token it also
answers only requests whose ``Host`` is a loopback name (DNS rebinding). The token comes from
``--token`` or ``QUEUE_RUNTIME_DASHBOARD_TOKEN``; ``--tokens FILE`` gives one token per
operator (a TOML file of ``name = "token"`` lines), so the audit names who acted. Before
it says "serving", the inventory given with ``--inventory`` has been read and the port
bound: either failing is one line on stderr and exit 2. This module imports only the
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
    p.add_argument(
        "--tokens",
        metavar="FILE",
        help='one token per operator: a TOML file of name = "token" lines (the name is audited)',
    )
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


class StartError(Exception):
    """The dashboard cannot start: the message is the one line printed."""


def cmd_dashboard(args: argparse.Namespace, runtime: RuntimeFor, import_app: ImportApp) -> int:
    try:
        return _start(args, runtime, import_app)
    except StartError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


def _start(args: argparse.Namespace, runtime: RuntimeFor, import_app: ImportApp) -> int:
    token = _tokens(args)
    if token is None and not is_loopback(args.host):
        raise StartError(
            f"refusing to serve the dashboard on {args.host} without a token: "
            f"pass --token or --tokens, or set {TOKEN_ENV} (or keep --host 127.0.0.1)"
        )
    from queue_runtime.errors import ConfigError
    from queue_runtime.web import make_wsgi_app
    from queue_runtime.web._migration import read_inventory
    from queue_runtime.web._serve import bind, serve

    if args.inventory:
        try:
            read_inventory(args.inventory)
        except ConfigError as exc:
            raise StartError(str(exc).splitlines()[0]) from None
    if args.app:
        import_app(args.app)  # its @job functions: the migration and periodic pages
    app = make_wsgi_app(
        runtime(args),
        token=token,
        read_only=args.read_only,
        inventory=args.inventory,
        allowed_hosts=() if token else loopback_names(args.host),
    )
    try:
        server = bind(app, args.host, args.port)
    except OSError as exc:
        raise StartError(
            f"cannot listen on {args.host}:{args.port}: {exc.strerror or exc}"
        ) from None
    where = f"http://{args.host}:{args.port}/"
    if token is None:
        print(
            f"no token given: serving the dashboard on {where} for this machine only (localhost)",
            flush=True,
        )
    else:
        print(f"serving the dashboard on {where} (open {where}?token=... once)", flush=True)
    serve(server)
    return 0


def _tokens(args: argparse.Namespace) -> str | dict[str, str] | None:
    """``--tokens FILE`` (one per operator), else ``--token`` / the environment, else None."""
    single = args.token or os.environ.get(TOKEN_ENV) or None
    if not args.tokens:
        return single
    if args.token:
        raise StartError("give --token or --tokens, not both")
    return read_tokens(args.tokens)


def read_tokens(path: str) -> dict[str, str]:
    """Operator name -> token from a TOML file of ``name = "token"`` lines (StartError if bad)."""
    import tomllib

    try:
        with open(path, "rb") as file:
            data = tomllib.load(file)
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise StartError(f"--tokens {path}: cannot read it as TOML: {exc}") from None
    bad = [str(k) for k, v in data.items() if not isinstance(v, str) or not v.strip()]
    if bad:
        raise StartError(f'--tokens {path}: {bad[0]!r} is not name = "token"')
    if not data:
        raise StartError(f'--tokens {path}: no operator in it (name = "token" lines)')
    if len(set(data.values())) < len(data):
        raise StartError(f"--tokens {path}: two operators share a token (the audit could not tell)")
    return {str(k): str(v).strip() for k, v in data.items()}
