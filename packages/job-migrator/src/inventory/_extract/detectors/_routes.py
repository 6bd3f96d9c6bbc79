"""Handlers registered by a call rather than a decorator, in whatever module registers them.

Each framework's documented registration API names the view it routes to:

* Django URLconf: ``path(route, view)``, ``re_path``, ``url`` (``view`` a function,
  ``SomeView.as_view()``, or either wrapped by hand: ``login_required(view)``,
  ``cache_page(60)(view)``); DRF routers: ``router.register(prefix, ViewSet)``.
* Flask: ``add_url_rule(rule, endpoint, view_func)`` (``view_func=View.as_view("n")``),
  a route decorator applied by hand (``bp.route("/x", methods=["POST"])(view)``),
  Flask-RESTful / RESTX ``api.add_resource(Resource, "/x")``.
* FastAPI / Starlette: ``add_api_route(path, endpoint)``, ``add_route(path, route)``,
  ``Route(path, endpoint)`` / ``WebSocketRoute`` (a function or an ``HTTPEndpoint``).

The view is often defined in another module than the one registering it, so what is
recorded here is the endpoint's locally resolved dotted name (``FileSummary.routes``); the
classifier resolves it across modules and makes the function, or the HTTP-method handlers
of the class, request handlers. The framework is named from evidence: the registering
API's resolved name, or, for a method called on an app, blueprint, router or api this file
cannot type (made by a factory, imported from another module), the method's name together
with an import of that framework's package in this file.
"""

from __future__ import annotations

import ast
from collections.abc import Collection
from typing import NamedTuple

from inventory._extract._resolve import Resolver
from inventory._extract._source import span_of
from inventory._extract.detectors._handlers import APP_HOOKS, decorator_framework
from inventory._extract.detectors._installed import Installed
from inventory._extract.detectors._site_common import argument_node
from inventory.models import Framework, Pattern
from inventory.summary import RawSite, TargetKind


class Registrar(NamedTuple):
    """Where the endpoint is in the registering call, whose API that call is, and whether
    the API takes a class as it is (a viewset, a resource, an ``HTTPEndpoint``); ``installs``:
    the endpoint is no view but code the framework runs in each request (a middleware)."""

    position: int
    keyword: str
    framework: Framework
    takes_class: bool = False
    installs: Installed | None = None
    # The API takes an instance of the view class (Falcon's ``add_route(uri, Resource())``):
    # the class is the one the call builds.
    instance: bool = False


class Route(NamedTuple):
    """A registered view: ``name`` is locally resolved; ``view_class``: it may be a class
    whose HTTP-method handlers serve the route (else only a function is a handler);
    ``installs``: what it is installed as, when it is no view (``Registrar.installs``)."""

    name: str
    framework: Framework
    view_class: bool
    installs: Installed | None = None


_DJANGO_VIEW = Registrar(1, "view", Framework.DJANGO)
_FLASK_VIEW = Registrar(2, "view_func", Framework.FLASK)
_FASTAPI_ROUTE = Registrar(1, "endpoint", Framework.FASTAPI)
_STARLETTE_ROUTE = Registrar(1, "endpoint", Framework.STARLETTE, takes_class=True)
_STARLETTE_ADD = Registrar(1, "route", Framework.STARLETTE, takes_class=True)
REGISTRARS = {
    "starlette.routing.Route": _STARLETTE_ROUTE,
    "starlette.routing.WebSocketRoute": _STARLETTE_ROUTE,
    "starlette.routing.Router.add_route": _STARLETTE_ADD,
    "starlette.applications.Starlette.add_route": _STARLETTE_ADD,
    "fastapi.FastAPI.add_api_route": _FASTAPI_ROUTE,
    "fastapi.APIRouter.add_api_route": _FASTAPI_ROUTE,
    "fastapi.routing.APIRouter.add_api_route": _FASTAPI_ROUTE,
    "fastapi.FastAPI.add_route": Registrar(1, "route", Framework.FASTAPI),
    "flask.Flask.add_url_rule": _FLASK_VIEW,
    "flask.Blueprint.add_url_rule": _FLASK_VIEW,
    "django.urls.path": _DJANGO_VIEW,
    "django.urls.re_path": _DJANGO_VIEW,
    "django.urls.conf.path": _DJANGO_VIEW,
    "django.urls.conf.re_path": _DJANGO_VIEW,
    "django.conf.urls.url": _DJANGO_VIEW,
    "django.conf.urls.re_path": _DJANGO_VIEW,
}
# The other frameworks' documented registering calls:
# * Quart: Flask's ``add_url_rule(rule, endpoint, view_func)`` on its app and blueprints;
# * aiohttp: ``app.router.add_post(path, handler)`` (``add_get``... ``add_route(method,
#   path, handler)``), and the route definitions ``web.post(path, handler)`` handed to
#   ``app.add_routes([...])`` (docs.aiohttp.org, "Web server quickstart");
# * Sanic: ``app.add_route(handler, uri)`` (sanic.dev, "Routing");
# * Pyramid: ``config.add_view(view, route_name=...)`` (pyramid "View Configuration").
_QUART_VIEW = Registrar(2, "view_func", Framework.QUART)
_AIOHTTP_ADD = Registrar(1, "handler", Framework.AIOHTTP, takes_class=True)
_AIOHTTP_VERBS = ("get", "post", "put", "patch", "delete", "head", "view")
_PYRAMID_VIEW = Registrar(0, "view", Framework.PYRAMID, takes_class=True)
# * Falcon: ``app.add_route(uri_template, resource)`` with an instance of the resource class
#   (falcon.readthedocs.io, "Routing"), whose ``on_<verb>`` responders serve the route.
_FALCON_ROUTE = Registrar(1, "resource", Framework.FALCON, takes_class=True, instance=True)
REGISTRARS |= {
    "quart.Quart.add_url_rule": _QUART_VIEW,
    "quart.Blueprint.add_url_rule": _QUART_VIEW,
    **{f"aiohttp.web.{verb}": _AIOHTTP_ADD for verb in _AIOHTTP_VERBS},
    "aiohttp.web.route": Registrar(2, "handler", Framework.AIOHTTP, takes_class=True),
    **{
        f"aiohttp.web.{owner}.add_{verb}": _AIOHTTP_ADD
        for owner in ("UrlDispatcher", "Application.router")
        for verb in _AIOHTTP_VERBS
    },
    "sanic.Sanic.add_route": Registrar(0, "handler", Framework.SANIC, takes_class=True),
    "sanic.Blueprint.add_route": Registrar(0, "handler", Framework.SANIC, takes_class=True),
    "pyramid.config.Configurator.add_view": _PYRAMID_VIEW,
    **{f"falcon.{app}.add_route": _FALCON_ROUTE for app in ("App", "API", "asgi.App")},
}
# Flask's request hooks registered by a call (``app.before_request(load_user)``, as the
# decorators of ``_handlers.APP_HOOKS`` do), and Starlette's / FastAPI's
# ``add_middleware(cls)``, whose ``BaseHTTPMiddleware`` subclass ``dispatch``es each request.
_FLASK_HOOK = Registrar(0, "f", Framework.FLASK)
_HOOK_NAMES = tuple(n for n, fs in APP_HOOKS.items() if Framework.FLASK in fs)
REGISTRARS |= {
    f"flask.{owner}.{hook}": _FLASK_HOOK for owner in ("Flask", "Blueprint") for hook in _HOOK_NAMES
}
_FASTAPI_MIDDLEWARE = Registrar(
    0, "middleware_class", Framework.FASTAPI, True, Installed.FASTAPI_MIDDLEWARE
)
REGISTRARS |= {
    "fastapi.FastAPI.add_middleware": _FASTAPI_MIDDLEWARE,
    "starlette.applications.Starlette.add_middleware": Registrar(
        0, "middleware_class", Framework.STARLETTE, True, Installed.STARLETTE_MIDDLEWARE
    ),
}
# FastAPI's dependencies: "FastAPI will call your dependency function" for each request of
# a path operation declaring it, as a parameter's default or in ``Annotated`` (``Depends(f)``,
# ``Security(f, scopes=...)``), or in ``dependencies=[Depends(f)]`` of the decorator, the
# router or the app (fastapi.tiangolo.com, tutorial/dependencies); dependencies of
# dependencies alike. A class given to Depends is constructed, which is not followed here.
_DEPENDENCY = Registrar(0, "dependency", Framework.FASTAPI)
REGISTRARS |= {
    f"fastapi.{module}{name}": _DEPENDENCY
    for module in ("", "params.", "param_functions.")
    for name in ("Depends", "Security")
}
# Registering methods on a receiver of unknown type -> (where the endpoint is, the package
# prefixes one of whose imports names the framework). ``flask_`` covers the extensions that
# subclass Flask's Blueprint and Api (flask_smorest, flask_restful, flask_restx, ...).
_METHODS: dict[str, tuple[Registrar, tuple[str, ...]]] = {
    "add_url_rule": (_FLASK_VIEW, ("flask", "apiflask")),
    "add_resource": (Registrar(0, "resource", Framework.FLASK, True), ("flask_", "flask.")),
    "add_api_route": (_FASTAPI_ROUTE, ("fastapi",)),
    "register": (Registrar(1, "viewset", Framework.DJANGO, True), ("rest_framework",)),
    **{
        hook: (_FLASK_HOOK, ("flask", "apiflask", "flask_login", "flask_security"))
        for hook in _HOOK_NAMES
    },
    "add_middleware": (_FASTAPI_MIDDLEWARE, ("fastapi",)),
    **{f"add_{verb}": (_AIOHTTP_ADD, ("aiohttp",)) for verb in _AIOHTTP_VERBS},
    "add_view": (_PYRAMID_VIEW, ("pyramid",)),
}
_ADD_ROUTE = {"fastapi": Framework.FASTAPI, "starlette": Framework.STARLETTE}
# Class-based views become callables through these (Django, DRF, Flask; Starlette's
# HTTPEndpoint class is passed as it is).
_AS_VIEW = frozenset({"as_view"})
_AS_VIEW_FRAMEWORKS = (Framework.DJANGO, Framework.FLASK)
_MAX_WRAPPERS = 4


def route_of(
    call: ast.Call,
    target: str,
    resolver: Resolver,
    imports: Collection[str],
    frameworks: set[Framework],
) -> Route | None:
    """The view ``call`` registers, by any of the framework's registering APIs.

    ``imports``: the dotted names this file imports; ``frameworks``: the web frameworks
    among them."""
    route = registered_endpoint(call, target, resolver, imports)
    if route is None and isinstance(call.func, ast.Call):
        route = decorated_endpoint(call, resolver, frameworks)
    return route or as_view_class(call, resolver, frameworks)


def registered_endpoint(
    call: ast.Call, target: str, resolver: Resolver, imports: Collection[str]
) -> Route | None:
    """The endpoint ``call`` registers, when it is a registering call. A class made a view
    by ``as_view()`` inside it is recorded by :func:`as_view_class`."""
    spec = _registrar(target, imports)
    if spec is None:
        return None
    endpoint = argument_node(call, spec.position, spec.keyword)
    if spec.instance and isinstance(endpoint, ast.Call):
        dotted = resolver.dotted(endpoint.func)  # ``Resource(db)``: the class
    else:
        dotted = endpoint_name(endpoint, resolver) if endpoint is not None else None
    return Route(dotted, spec.framework, spec.takes_class, spec.installs) if dotted else None


def _registrar(target: str, imports: Collection[str]) -> Registrar | None:
    return REGISTRARS.get(target) or _by_method(target, imports)


def unnamed_endpoint(
    call: ast.Call, target: str, resolver: Resolver, imports: Collection[str], enclosing: str | None
) -> RawSite | None:
    """A registering call whose view only exists at run time (``Route(path,
    getattr(self, name))``, ``add_url_rule(rule, view_func=views[name])``): a handler the
    scan cannot follow, reported as a gap (an ``unknown`` site) rather than left silent."""
    spec = _registrar(target, imports)
    endpoint = argument_node(call, spec.position, spec.keyword) if spec else None
    if spec is None or endpoint is None or not _opaque(endpoint, resolver):
        return None
    source = resolver.text.segment(endpoint)
    reason = (
        f"{spec.framework.value} registers a view known only at run time ({source}): "
        "what it does in the request is not followed"
    )
    return RawSite(
        pattern=Pattern.DIRECT_CALL,
        span=span_of(call),
        target=None,
        target_kind=TargetKind.DYNAMIC,
        target_source=source,
        unresolved_reason=reason,
        enclosing_function=enclosing,
        handler=spec.framework,
    )


def _opaque(endpoint: ast.expr, resolver: Resolver) -> bool:
    """Computed where it is registered: a ``getattr``, a subscript, a call's result."""
    if isinstance(endpoint, ast.Subscript):
        return True
    if not isinstance(endpoint, ast.Call) or not isinstance(endpoint.func, ast.Name):
        return False
    return endpoint.func.id == "getattr" and resolver.dotted(endpoint.func) == "builtins.getattr"


def _by_method(target: str, imports: Collection[str]) -> Registrar | None:
    """``bp.add_url_rule`` on a blueprint imported from elsewhere, ``router.register``."""
    head, _, method = target.rpartition(".")
    if method == "add_route":
        return _add_route(head, imports)
    spec = _METHODS.get(method)
    if spec is None or head.startswith(("django.", "flask.", "fastapi.", "starlette.")):
        return None  # a known library's own method of that name, not a registrar
    registrar, prefixes = spec
    if method == "add_url_rule" and any(_imports_package(i, ("quart",)) for i in imports):
        return _QUART_VIEW
    if method == "register" and "router" not in head.lower():
        return None  # ``admin.site.register``, a template library: DRF registers on routers
    return registrar if any(_imports_package(i, prefixes) for i in imports) else None


def _add_route(head: str, imports: Collection[str]) -> Registrar | None:
    if head.startswith(("django.", "flask.")):
        return None
    for package, framework in _ADD_ROUTE.items():
        if any(_imports_package(i, (package,)) for i in imports):
            return Registrar(1, "route", framework, takes_class=True)
    # aiohttp's ``router.add_route(method, path, handler)``, Sanic's ``add_route(handler, uri)``
    for package, registrar in _OTHER_ADD_ROUTE.items():
        if any(_imports_package(i, (package,)) for i in imports):
            return registrar
    return None


_OTHER_ADD_ROUTE = {
    "aiohttp": Registrar(2, "handler", Framework.AIOHTTP, takes_class=True),
    "sanic": Registrar(0, "handler", Framework.SANIC, takes_class=True),
    "falcon": _FALCON_ROUTE,
}


def _imports_package(dotted: str, prefixes: tuple[str, ...]) -> bool:
    """``flask`` matches ``flask`` and ``flask.x``; ``flask_`` matches any ``flask_*``."""
    return any(
        dotted.startswith(p)
        if p.endswith(("_", "."))
        else dotted == p or dotted.startswith(f"{p}.")
        for p in prefixes
    )


def endpoint_name(node: ast.expr, resolver: Resolver) -> str | None:
    """The view a route names: ``views.signup``, also wrapped by decorators applied by hand
    (``login_required(views.signup)``, ``cache_page(60)(views.signup)``). Wrapped or not,
    a name given to a function-taking API is a handler only if it is a function: a class
    (``feed(Article)``) is an argument of a view factory, not a view."""
    for _ in range(_MAX_WRAPPERS):
        if not isinstance(node, ast.Call):
            return resolver.dotted(node)
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in _AS_VIEW:
            return None  # the class: recorded where ``as_view`` is called
        if not node.args or isinstance(node.args[0], ast.Constant | ast.Starred):
            return None  # ``include("app.urls")``, ``Feed()``: no view named
        node = node.args[0]
    return None


def decorated_endpoint(
    call: ast.Call, resolver: Resolver, imported: set[Framework]
) -> Route | None:
    """``bp.route("/x")(view)``: a route decorator called on a function, by hand."""
    inner = call.func
    if not isinstance(inner, ast.Call) or len(call.args) != 1 or call.keywords:
        return None
    framework = decorator_framework(resolver.expr(inner.func).target, imported)
    dotted = endpoint_name(call.args[0], resolver) if framework is not None else None
    return Route(dotted, framework, False) if dotted and framework else None


def as_view_class(call: ast.Call, resolver: Resolver, frameworks: set[Framework]) -> Route | None:
    """``SignupView.as_view(...)`` anywhere (a URLconf, a project's ``register_view``
    helper forwarding it to ``add_url_rule``): Django's and Flask's documented way to make
    a class-based view the callable a route registers, in a file importing the framework."""
    func = call.func
    if not isinstance(func, ast.Attribute) or func.attr not in _AS_VIEW:
        return None
    framework = next((f for f in _AS_VIEW_FRAMEWORKS if f in frameworks), None)
    dotted = resolver.dotted(func.value) if framework is not None else None
    return Route(dotted, framework, True) if dotted and framework else None


def class_route(
    decorator: ast.expr, resolver: Resolver, imports: Collection[str]
) -> Framework | None:
    """``@ns.route("/todos/<id>")`` on a class: Flask-RESTX / RESTPlus namespaces and apis,
    flask-smorest blueprints route a ``Resource`` / ``MethodView`` class this way, in a
    module importing Flask or one of its extensions."""
    if not isinstance(decorator, ast.Call):
        return None
    target = resolver.expr(decorator.func).target
    head, _, method = target.rpartition(".")
    if method != "route" or head.startswith(("django.", "fastapi.", "starlette.")):
        return None
    flask = any(_imports_package(i, ("flask", "flask_")) for i in imports)
    return Framework.FLASK if flask else None
