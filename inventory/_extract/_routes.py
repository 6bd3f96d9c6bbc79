"""Handlers registered by a call rather than a decorator.

``Route("/", homepage)`` (Starlette), ``app.add_api_route("/x", endpoint)``
(FastAPI), ``app.add_url_rule("/", view_func=index)`` (Flask) and
``path("x/", view)`` (Django) make a function of the same file a request handler.
"""

from __future__ import annotations

import ast

from inventory._extract._resolve import Resolver
from inventory._extract._site_common import argument_node
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
