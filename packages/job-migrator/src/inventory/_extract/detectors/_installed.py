"""What a Django settings module installs to run inside every request, named by dotted path.

Django's settings name code by its import path, and Django (or DRF) calls it while it
handles a request, so it is a request handler like a view, though no URLconf names it:

* ``MIDDLEWARE`` (and the old ``MIDDLEWARE_CLASSES``): "a list of middleware to use", each
  a class whose instance is called with each request (``__call__``, and the hooks
  ``process_view``, ``process_exception``, ``process_template_response``; ``process_request``
  and ``process_response`` under ``MiddlewareMixin``), or a factory function whose inner
  function is (docs.djangoproject.com, topics/http/middleware).
* ``TEMPLATES[...]["OPTIONS"]["context_processors"]``: "callables that take a request ...
  and return a dict of items to be merged into the context", called whenever a template
  renders with a request (ref/templates/api).
* ``AUTHENTICATION_BACKENDS``: classes whose ``authenticate(request, **credentials)`` runs at
  login and ``get_user(user_id)`` on every request of a logged-in user (topics/auth/customizing).
* DRF's ``REST_FRAMEWORK``: ``DEFAULT_AUTHENTICATION_CLASSES`` (``authenticate(request)``),
  ``DEFAULT_PERMISSION_CLASSES`` (``has_permission``, ``has_object_permission``),
  ``DEFAULT_THROTTLE_CLASSES`` (``allow_request``) and the ``EXCEPTION_HANDLER`` function
  (www.django-rest-framework.org, api-guide/authentication, permissions, throttling,
  exceptions), each run in every API request.

Only module-level statements count (also under ``if DEBUG:`` or ``try:``): an assignment,
``+=``, or ``append`` / ``insert`` / ``extend`` on the setting; only string literals name
code. The classifier resolves each name across the project (``_classify._registered``);
a library's middleware (``django.middleware.csrf.CsrfViewMiddleware``) resolves to no
project code and adds nothing.
"""

from __future__ import annotations

import ast
from enum import StrEnum

from inventory.models import Framework


class Installed(StrEnum):
    """What Django does with the code a setting names; ``HOOKS`` gives its methods."""

    MIDDLEWARE = "middleware"
    CONTEXT_PROCESSOR = "context_processor"
    AUTH_BACKEND = "auth_backend"
    DRF_AUTHENTICATION = "drf_authentication"
    DRF_PERMISSION = "drf_permission"
    DRF_THROTTLE = "drf_throttle"
    DRF_EXCEPTION_HANDLER = "drf_exception_handler"
    # Starlette's and FastAPI's ``app.add_middleware(cls)``: not a setting, registered by a
    # call (``_routes.REGISTRARS``), recorded here so that the class's hooks are found alike.
    FASTAPI_MIDDLEWARE = "fastapi_middleware"
    STARLETTE_MIDDLEWARE = "starlette_middleware"


# The methods of a named class that run in the request; a kind not here names a function.
HOOKS: dict[Installed, frozenset[str]] = {
    Installed.MIDDLEWARE: frozenset(
        {
            *("__call__", "__acall__", "process_request", "process_view"),
            *("process_response", "process_exception", "process_template_response"),
        }
    ),
    Installed.AUTH_BACKEND: frozenset({"authenticate", "aauthenticate", "get_user", "aget_user"}),
    Installed.DRF_AUTHENTICATION: frozenset({"authenticate"}),
    Installed.DRF_PERMISSION: frozenset({"has_permission", "has_object_permission"}),
    Installed.DRF_THROTTLE: frozenset({"allow_request"}),
    # A ``BaseHTTPMiddleware`` subclass ``dispatch``es each request; a pure ASGI middleware
    # class is called with each request's scope (starlette.io/middleware).
    Installed.FASTAPI_MIDDLEWARE: frozenset({"dispatch", "__call__"}),
    Installed.STARLETTE_MIDDLEWARE: frozenset({"dispatch", "__call__"}),
}
# The framework whose request runs what a kind installs (Django's settings otherwise).
FRAMEWORK: dict[Installed, Framework] = {
    Installed.FASTAPI_MIDDLEWARE: Framework.FASTAPI,
    Installed.STARLETTE_MIDDLEWARE: Framework.STARLETTE,
}
# Kinds whose function is a factory called once at start-up, returning the per-request one.
FACTORIES = frozenset(
    {Installed.MIDDLEWARE, Installed.FASTAPI_MIDDLEWARE, Installed.STARLETTE_MIDDLEWARE}
)

_SETTINGS = {
    "MIDDLEWARE": Installed.MIDDLEWARE,
    "MIDDLEWARE_CLASSES": Installed.MIDDLEWARE,
    "AUTHENTICATION_BACKENDS": Installed.AUTH_BACKEND,
}
_KEYS = {
    "context_processors": Installed.CONTEXT_PROCESSOR,
    "DEFAULT_AUTHENTICATION_CLASSES": Installed.DRF_AUTHENTICATION,
    "DEFAULT_PERMISSION_CLASSES": Installed.DRF_PERMISSION,
    "DEFAULT_THROTTLE_CLASSES": Installed.DRF_THROTTLE,
    "EXCEPTION_HANDLER": Installed.DRF_EXCEPTION_HANDLER,
}
_GROWS = frozenset({"append", "insert", "extend"})


def installed(tree: ast.Module, source: str) -> dict[str, Installed]:
    """Dotted path -> what the settings of this module install it as."""
    if not any(name in source for name in (*_SETTINGS, *_KEYS)):
        return {}
    found: dict[str, Installed] = {}
    for stmt in _module_level(tree.body):
        for kind, value in _settings_values(stmt):
            for path in _paths(value):
                found.setdefault(path, kind)
        for node in ast.walk(stmt):
            for kind, value in _keyed_values(node):
                for path in _paths(value):
                    found.setdefault(path, kind)
    return found


def _module_level(body: list[ast.stmt]) -> list[ast.stmt]:
    """The statements run at import: the module's, and those under ``if`` / ``try`` / ``with``."""
    found: list[ast.stmt] = []
    for stmt in body:
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue
        found.append(stmt)
        if isinstance(stmt, ast.If):
            found += _module_level([*stmt.body, *stmt.orelse])
        elif isinstance(stmt, ast.Try):
            handlers = [s for h in stmt.handlers for s in h.body]
            found += _module_level([*stmt.body, *handlers, *stmt.orelse, *stmt.finalbody])
        elif isinstance(stmt, ast.With):
            found += _module_level(stmt.body)
    return found


def _settings_values(stmt: ast.stmt) -> list[tuple[Installed, ast.expr]]:
    """``MIDDLEWARE = [...]``, ``MIDDLEWARE += [...]``, ``MIDDLEWARE.append("x")``."""
    if isinstance(stmt, ast.Assign):
        names = [t.id for t in stmt.targets if isinstance(t, ast.Name)]
        return [(_SETTINGS[n], stmt.value) for n in names if n in _SETTINGS]
    if isinstance(stmt, ast.AugAssign | ast.AnnAssign) and isinstance(stmt.target, ast.Name):
        kind = _SETTINGS.get(stmt.target.id)
        return [(kind, stmt.value)] if kind is not None and stmt.value is not None else []
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        func = stmt.value.func
        if (
            isinstance(func, ast.Attribute)
            and func.attr in _GROWS
            and isinstance(func.value, ast.Name)
            and func.value.id in _SETTINGS
        ):
            return [(_SETTINGS[func.value.id], arg) for arg in stmt.value.args]
    return []


def _keyed_values(node: ast.AST) -> list[tuple[Installed, ast.expr]]:
    """``{"context_processors": [...]}``, ``dict(EXCEPTION_HANDLER=...)``,
    ``TEMPLATES[0]["OPTIONS"]["context_processors"] += [...]``."""
    if isinstance(node, ast.Dict):
        return [
            (_KEYS[k.value], v)
            for k, v in zip(node.keys, node.values, strict=True)
            if isinstance(k, ast.Constant) and isinstance(k.value, str) and k.value in _KEYS
        ]
    if isinstance(node, ast.Call):
        return [(_KEYS[k.arg], k.value) for k in node.keywords if k.arg in _KEYS]
    if isinstance(node, ast.Assign | ast.AugAssign):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        return [
            (_KEYS[t.slice.value], node.value)
            for t in targets
            if isinstance(t, ast.Subscript)
            and isinstance(t.slice, ast.Constant)
            and isinstance(t.slice.value, str)
            and t.slice.value in _KEYS
        ]
    return []


def _paths(value: ast.expr) -> list[str]:
    """The dotted paths a value spells: a string, or strings in a list, tuple or sum of them."""
    if isinstance(value, ast.Constant) and isinstance(value.value, str):
        text = value.value.strip()
        parts = text.split(".")
        dotted = len(parts) > 1 and all(p.isidentifier() for p in parts)
        return [text] if dotted else []
    if isinstance(value, ast.List | ast.Tuple | ast.Set):
        return [p for element in value.elts for p in _paths(element)]
    if isinstance(value, ast.Starred):
        return _paths(value.value)
    if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add):
        return [*_paths(value.left), *_paths(value.right)]
    return []
