"""Handlers registered by a call rather than a decorator.

``Route("/", homepage)`` (Starlette), ``app.add_api_route("/x", endpoint)``
(FastAPI), ``app.add_url_rule("/", view_func=index)`` (Flask),
``path("x/", view)`` (Django) and a route decorator applied by hand
(``bp.route("/x", methods=["POST"])(view)``, Flask-Security's style) make a
function of the same file a request handler.
"""

from __future__ import annotations

import ast

from inventory._extract._resolve import Resolver
from inventory._extract.detectors._handlers import decorator_framework
from inventory._extract.detectors._site_common import argument_node
from inventory.models import Framework

# registering call -> (index of the endpoint, its keyword, framework)
REGISTRARS = {
    "starlette.routing.Route": (1, "endpoint", Framework.STARLETTE),
    "starlette.routing.WebSocketRoute": (1, "endpoint", Framework.STARLETTE),
    "fastapi.FastAPI.add_api_route": (1, "endpoint", Framework.FASTAPI),
    "fastapi.APIRouter.add_api_route": (1, "endpoint", Framework.FASTAPI),
    "fastapi.routing.APIRouter.add_api_route": (1, "endpoint", Framework.FASTAPI),
    "starlette.applications.Starlette.add_route": (1, "route", Framework.STARLETTE),
    "flask.Flask.add_url_rule": (2, "view_func", Framework.FLASK),
    "flask.Blueprint.add_url_rule": (2, "view_func", Framework.FLASK),
    "django.urls.path": (1, "view", Framework.DJANGO),
    "django.urls.re_path": (1, "view", Framework.DJANGO),
}


def registered_endpoint(
    call: ast.Call, target: str, resolver: Resolver
) -> tuple[str, Framework] | None:
    """(qualname of the endpoint, framework) when ``call`` registers a handler."""
    spec = REGISTRARS.get(target)
    if spec is None:
        return None
    endpoint = argument_node(call, spec[0], spec[1])
    dotted = resolver.dotted(endpoint) if endpoint is not None else None
    return (dotted, spec[2]) if dotted else None


def decorated_endpoint(
    call: ast.Call, resolver: Resolver, imported: set[Framework]
) -> tuple[str, Framework] | None:
    """``bp.route("/x")(view)``: a route decorator called on a function of this file."""
    inner = call.func
    if not isinstance(inner, ast.Call) or len(call.args) != 1 or call.keywords:
        return None
    framework = decorator_framework(resolver.expr(inner.func).target, imported)
    dotted = resolver.dotted(call.args[0]) if framework is not None else None
    return (dotted, framework) if dotted and framework else None
