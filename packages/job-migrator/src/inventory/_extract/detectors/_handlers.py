"""Is a function a web request handler, and of which framework?"""

from __future__ import annotations

import ast
from collections.abc import Callable
from enum import StrEnum

from inventory._extract._scopes import ClassCtx
from inventory.models import Framework

ROUTE_VERBS = frozenset(
    {
        "get",
        "post",
        "put",
        "patch",
        "delete",
        "head",
        "options",
        "trace",
        "api_route",
        "websocket",
        "route",
        "websocket_route",
    }
)
VIEW_METHODS = frozenset(
    {
        "get",
        "post",
        "put",
        "patch",
        "delete",
        "head",
        "options",
        # Django REST framework viewset actions and hooks that run inside the request.
        "list",
        "create",
        "retrieve",
        "update",
        "partial_update",
        "destroy",
        "perform_create",
        "perform_update",
        "perform_destroy",
        "form_valid",
        # Flask's View and MethodView, and Django's View, hand every request to these.
        "dispatch_request",
        "dispatch",
    }
)
# Functions an app or blueprint registers to run in every request (or every failed one),
# by the frameworks' documented decorators: Flask's before_request, after_request,
# teardown_request, context_processor, errorhandler, url_value_preprocessor (and a
# blueprint's app-wide twins, "before_app_request" ...; teardown_appcontext, popped after
# each request), flask.palletsprojects.com/api; FastAPI's and Starlette's
# ``@app.middleware("http")`` ("a function that ... receives the request ... call_next")
# and ``@app.exception_handler(...)``.
_FLASK_HOOKS = (
    *("before_request", "after_request", "teardown_request", "context_processor"),
    *("errorhandler", "url_value_preprocessor", "teardown_appcontext"),
    *("before_app_request", "after_app_request", "teardown_app_request"),
    *("app_context_processor", "app_errorhandler", "app_url_value_preprocessor"),
)
# Flask-Login's LoginManager callbacks: user_loader "is used to reload the user object from
# the user ID stored in the session" on each request; request_loader / header_loader load
# one from the request; unauthorized_handler / needs_refresh_handler answer a request that
# must log in (flask-login.readthedocs.io).
_LOGIN_LOADERS = (
    *("user_loader", "request_loader", "header_loader"),
    *("unauthorized_handler", "needs_refresh_handler"),
)
_FLASK_LOGIN = ("flask_login.", "flask_security.")
# Hooks registered once on an app, blueprint or login manager that then run in every request
# (not ``_walk_defs.REQUEST_HOOKS``, which act on the one request being served).
APP_HOOKS: dict[str, tuple[Framework, ...]] = {
    **{name: (Framework.FLASK,) for name in _LOGIN_LOADERS},
    # Quart keeps Flask's API: the same hooks on its app and blueprints.
    **{name: (Framework.FLASK, Framework.QUART) for name in _FLASK_HOOKS},
    # FastAPI's and Starlette's ``@app.middleware("http")``; Sanic's
    # ``@app.middleware("request")``, ``@app.on_request``, ``@app.on_response`` (sanic.dev,
    # "Middleware"): each runs in every request.
    "middleware": (Framework.FASTAPI, Framework.STARLETTE, Framework.SANIC),
    "on_request": (Framework.SANIC,),
    "on_response": (Framework.SANIC,),
    "exception_handler": (Framework.FASTAPI, Framework.STARLETTE),
}
# The hooks Django's generic class-based views and DRF's generic views call while they
# handle a request, each documented: Django's "Method Flowchart" of each generic view
# (docs.djangoproject.com, ref/class-based-views: View.setup/dispatch, TemplateView's
# get_context_data, RedirectView.get_redirect_url, the single- and multiple-object mixins'
# get_queryset/get_object/paginate_queryset, FormMixin's get_initial ... form_invalid,
# SuccessMessageMixin.get_success_message) and DRF's GenericAPIView and APIView
# (www.django-rest-framework.org, api-guide/generic-views, views: "get_queryset",
# "get_serializer_context", "initial", "finalize_response", "check_permissions"...).
# A method of that name on a view overrides the one the framework calls, in the request.
FRAMEWORK_VIEW_HOOKS = frozenset(
    {
        *("setup", "http_method_not_allowed", "get_context_data", "get_template_names"),
        *("render_to_response", "get_redirect_url"),
        *("get_queryset", "get_object", "get_slug_field", "get_context_object_name"),
        *("get_ordering", "paginate_queryset", "get_paginate_by", "get_paginator"),
        *("get_allow_empty", "get_initial", "get_prefix", "get_form_class", "get_form"),
        *("get_form_kwargs", "get_success_url", "form_invalid", "get_success_message"),
        *("get_serializer", "get_serializer_class", "get_serializer_context"),
        *("filter_queryset", "get_paginated_response", "initial", "finalize_response"),
        *("check_permissions", "check_object_permissions", "handle_exception"),
    }
)
_PREFIXES = (
    ("fastapi", Framework.FASTAPI),
    ("starlette", Framework.STARLETTE),
    ("flask", Framework.FLASK),
    ("django", Framework.DJANGO),
    ("rest_framework", Framework.DJANGO),
    ("quart", Framework.QUART),
    ("sanic", Framework.SANIC),
    ("litestar", Framework.LITESTAR),
    ("aiohttp", Framework.AIOHTTP),
    ("bottle", Framework.BOTTLE),
    ("falcon", Framework.FALCON),
    ("tornado", Framework.TORNADO),
    ("pyramid", Framework.PYRAMID),
)
# Frameworks whose route decorators are methods of an app, blueprint or route table (or,
# for Litestar and Bottle, functions of the package) named by the HTTP verb, as
# ``ROUTE_VERBS``: Quart's ``@app.post`` / ``@bp.route`` (Flask's API, quart.palletsprojects.com),
# Sanic's ``@app.post`` / ``@bp.route`` (sanic.dev, "Routing"), Litestar's ``@post("/x")``
# route handler decorators (docs.litestar.dev, "Route handlers"), aiohttp's
# ``routes = web.RouteTableDef(); @routes.post("/x")`` (docs.aiohttp.org, "Web server
# quickstart"), Bottle's ``@app.post`` / ``@route`` (bottlepy.org, "Request routing").
_VERB_DECORATED = (
    Framework.FASTAPI,
    Framework.STARLETTE,
    Framework.FLASK,
    Framework.QUART,
    Framework.SANIC,
    Framework.LITESTAR,
    Framework.AIOHTTP,
    Framework.BOTTLE,
)
# Of those, the ones whose import is evidence for a verb decorator on an app imported from
# elsewhere (FastAPI's and Flask's are read first); aiohttp is as often a file's HTTP client.
_IMPORT_EVIDENCED = (Framework.QUART, Framework.SANIC, Framework.LITESTAR, Framework.BOTTLE)
# Pyramid: ``@view_config(route_name=...)`` "registers a view callable" for a route, and the
# special views (not found, forbidden, exceptions) are views of a request too
# (docs.pylonsproject.org, pyramid "View Configuration").
_PYRAMID_VIEWS = frozenset(
    {
        "pyramid.view.view_config",
        "pyramid.view.notfound_view_config",
        "pyramid.view.forbidden_view_config",
        "pyramid.view.exception_view_config",
    }
)
# aiohttp's ``@web.middleware`` "async def middleware(request, handler)", run around every
# request's handler (docs.aiohttp.org, "Middlewares").
_AIOHTTP_MIDDLEWARE = frozenset({"aiohttp.web.middleware", "aiohttp.web_middlewares.middleware"})
# Class-based handlers, each framework's own: Tornado's ``RequestHandler`` ("the HTTP verb
# methods: get, post..." tornadoweb.org, "tornado.web"), aiohttp's ``web.View`` (class based
# views), Sanic's ``HTTPMethodView``, Quart's ``MethodView`` / ``View`` (Flask's).
_CLASS_VIEW_BASES = (
    ("tornado.web.RequestHandler", Framework.TORNADO),
    ("aiohttp.web.View", Framework.AIOHTTP),
    ("aiohttp.web_urldispatcher.View", Framework.AIOHTTP),
    ("sanic.views.HTTPMethodView", Framework.SANIC),
    ("sanic.HTTPMethodView", Framework.SANIC),
    ("quart.views.", Framework.QUART),
)
# Falcon: "resources" are plain classes whose responders are named ``on_<verb>`` (and
# ``on_<verb>_<suffix>`` for a route added with ``suffix=``), called with ``(req, resp,
# **params)`` (falcon.readthedocs.io, "Routing"); ``app.add_route(uri, Resource())``.
_FALCON_VERBS = ("get", "post", "put", "patch", "delete", "head", "options")
FALCON_RESPONDERS = frozenset(f"on_{verb}" for verb in _FALCON_VERBS)
_DJANGO_DECORATORS = (
    "django.views.decorators.",
    "django.contrib.auth.decorators.",
    "django.contrib.admin.views.",
    "django.contrib.admin.action",  # an admin action runs inside the admin's POST request
    "django.contrib.admin.decorators.action",
)
# Flask-AppBuilder (Superset, Airflow): ``@expose("/path")`` on BaseView / BaseApi methods.
_FAB_EXPOSE = frozenset({"expose", "expose_api"})
# ModelAdmin methods that run inside the admin's change-form or changelist request.
ADMIN_METHODS = frozenset(
    {
        "save_model",
        "delete_model",
        "delete_queryset",
        "save_related",
        "save_formset",
        "response_add",
        "response_change",
        "response_delete",
        "response_action",
    }
)
ADMIN_BASES = frozenset(
    {
        "django.contrib.admin.ModelAdmin",
        "django.contrib.admin.options.ModelAdmin",
        "django.contrib.admin.StackedInline",
        "django.contrib.admin.TabularInline",
        "django.contrib.admin.options.InlineModelAdmin",
        "django.contrib.admin.options.StackedInline",
        "django.contrib.admin.options.TabularInline",
    }
)
# Django's template library: ``register = template.Library()`` then ``@register.simple_tag``,
# ``filter``, ``inclusion_tag``, ``simple_block_tag`` or ``tag`` (a compile function):
# Django calls them while a template renders, inside the request that renders it.
_TEMPLATE_LIBRARIES = ("django.template.Library.", "django.template.library.Library.")
_TEMPLATE_REGISTRATIONS = frozenset(
    {"simple_tag", "filter", "inclusion_tag", "simple_block_tag", "tag"}
)
# ``class FanNode(template.Node)``: what a ``tag`` compile function returns; the template
# calls its ``render(context)`` when it renders, inside the request.
TEMPLATE_NODE_BASES = frozenset({"django.template.Node", "django.template.base.Node"})
# django-modern-rpc: ``@rpc_method`` (1.x) and ``@server.register_procedure`` of an
# ``RpcServer`` (2.x) register a procedure its entry-point view runs inside the RPC request.
_RPC_METHODS = frozenset(
    {
        "modernrpc.core.rpc_method",
        "modernrpc.rpc_method",
        "modernrpc.server.RpcServer.register_procedure",
        "modernrpc.RpcServer.register_procedure",
    }
)
_DRF_ACTIONS = frozenset(
    {"rest_framework.decorators.action", "rest_framework.decorators.detail_route"}
)
_DJANGO_VIEW_BASES = frozenset({"View", "APIView", "GenericAPIView"})
# Flask's class-based views, and Flask-RESTful / Flask-RESTX resources (``api.add_resource``
# routes each HTTP verb to the method of that name, like a MethodView).
_FLASK_VIEW_BASES = (
    "flask.views.",
    "flask.View",
    "flask.MethodView",
    "flask_restful.Resource",
    "flask_restful.resource.Resource",
    "flask_restx.Resource",
    "flask_restx.resource.Resource",
    "flask_restplus.Resource",
    "flask_restplus.resource.Resource",
)


class FormFamily(StrEnum):
    """Form, field and serializer classes whose hooks a framework runs inside the request
    that validates or saves what was posted."""

    DJANGO = "django_form"
    DRF = "drf_serializer"
    WTFORMS = "wtforms"


# Django: ``form.is_valid()`` runs ``full_clean()``: each field's ``clean()`` (``to_python``,
# ``validate``, ``run_validators``), the form's ``clean_<field>()`` and ``clean()``, then
# ``_post_clean()``; a view then calls ``form.save()``. DRF: ``serializer.is_valid()`` runs
# ``run_validation`` / ``to_internal_value``, ``validate_<field>()`` and ``validate()``;
# ``save()`` calls ``create()`` or ``update()``; a response renders ``to_representation()``.
# WTForms: ``form.validate()`` runs each field's ``pre_validate`` / ``post_validate`` and the
# form's ``validate_<field>()``; ``form.populate_obj(obj)`` each field's ``populate_obj``.
FORM_HOOKS: dict[FormFamily, tuple[frozenset[str], str]] = {
    FormFamily.DJANGO: (
        frozenset({"clean", "validate", "to_python", "run_validators", "save", "_post_clean"}),
        "clean_",
    ),
    FormFamily.DRF: (
        frozenset({"validate", "create", "update", "save", "run_validation"})
        | frozenset({"to_internal_value", "to_representation"}),
        "validate_",
    ),
    FormFamily.WTFORMS: (
        frozenset({"validate", "pre_validate", "post_validate", "process_formdata"})
        | frozenset({"populate_obj"}),
        "validate_",
    ),
}
_FORM_BASES = (
    ("django.forms.", FormFamily.DJANGO),
    ("django.contrib.auth.forms.", FormFamily.DJANGO),
    ("rest_framework.serializers.", FormFamily.DRF),
    ("rest_framework.fields.", FormFamily.DRF),
    ("wtforms.", FormFamily.WTFORMS),
    ("flask_wtf.", FormFamily.WTFORMS),
)


def method_fields(body: list[ast.stmt], dotted: Callable[[ast.expr], str | None]) -> frozenset[str]:
    """The methods a DRF serializer's ``SerializerMethodField``s call when it serializes:
    "By default [the method] is get_<field_name>", or the ``method_name`` given
    (www.django-rest-framework.org, api-guide/fields). ``dotted``: the resolver's name."""
    found: set[str] = set()
    for stmt in body:
        if not (
            isinstance(stmt, ast.Assign)
            and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name)
            and isinstance(stmt.value, ast.Call)
        ):
            continue
        name = dotted(stmt.value.func) or ""
        if not (name.startswith("rest_framework.") and name.endswith(".SerializerMethodField")):
            continue
        given = [k.value for k in stmt.value.keywords if k.arg == "method_name"]
        given += stmt.value.args[:1]
        literal = [
            g.value for g in given if isinstance(g, ast.Constant) and isinstance(g.value, str)
        ]
        found.add(literal[0] if literal else f"get_{stmt.targets[0].id}")
    return frozenset(found)


def form_class(bases: list[str], classes: dict[str, ClassCtx]) -> str | None:
    """The ``FormFamily`` of a class deriving from a framework's form, field or serializer,
    directly or through a class of this file."""
    for base in bases:
        local = classes.get(base)
        if local is not None and local.form:
            return local.form
        found = next((f for prefix, f in _FORM_BASES if base.startswith(prefix)), None)
        if found is not None:
            return found.value
    return None


def form_hook(name: str, family: str, imported: set[Framework]) -> Framework | None:
    """The framework running ``name`` of a form class of ``family`` inside a request; WTForms
    serves Flask apps (Flask-WTF, Flask-Admin, Flask-AppBuilder) in a file importing Flask."""
    names, prefix = FORM_HOOKS[FormFamily(family)]
    if name not in names and not (name.startswith(prefix) and len(name) > len(prefix)):
        return None
    if family == FormFamily.WTFORMS:
        return Framework.FLASK if Framework.FLASK in imported else None
    return Framework.DJANGO


def framework_of(dotted: str) -> Framework | None:
    for prefix, framework in _PREFIXES:
        if dotted == prefix or dotted.startswith(f"{prefix}."):
            return framework
    return None


def decorator_framework(dotted: str, imported: set[Framework]) -> Framework | None:
    """``@app.get(...)`` on a FastAPI app, ``@bp.route`` on a Flask blueprint, ``@api_view``..."""
    head, _, last = dotted.rpartition(".")
    if dotted.startswith(_DJANGO_DECORATORS) or last == "api_view" or dotted in _DRF_ACTIONS:
        return Framework.DJANGO
    if dotted.startswith(_TEMPLATE_LIBRARIES) and last in _TEMPLATE_REGISTRATIONS:
        return Framework.DJANGO
    if dotted in _RPC_METHODS or (last == "register_procedure" and Framework.DJANGO in imported):
        return Framework.DJANGO
    if last in _FAB_EXPOSE and dotted.startswith("flask_appbuilder."):
        return Framework.FLASK
    if dotted in _PYRAMID_VIEWS:
        return Framework.PYRAMID
    if dotted in _AIOHTTP_MIDDLEWARE:
        return Framework.AIOHTTP
    if last in APP_HOOKS:
        return _app_hook(head, last, imported)
    if last not in ROUTE_VERBS:
        return None
    known = framework_of(head)
    if known in _VERB_DECORATED:
        return known
    if known is not None or not head:
        return None
    # The app or router is defined in another module: trust the framework the file imports.
    if Framework.FASTAPI in imported and last != "route":
        return Framework.FASTAPI
    if Framework.FLASK in imported and last in ("route", "get", "post", "put", "patch", "delete"):
        return Framework.FLASK
    others = [f for f in _IMPORT_EVIDENCED if f in imported]
    return others[0] if len(others) == 1 else None


def _app_hook(head: str, last: str, imported: set[Framework]) -> Framework | None:
    """``@app.before_request`` on a Flask app or blueprint, ``@app.middleware("http")`` on a
    FastAPI or Starlette app: the framework whose documented hook the name is."""
    if last in _LOGIN_LOADERS and head.startswith(_FLASK_LOGIN):
        return Framework.FLASK
    known = framework_of(head)
    frameworks = APP_HOOKS[last]
    if known is not None:
        return known if known in frameworks else None
    if not head:
        return None
    # The app is defined in another module: trust the framework the file imports.
    return next((f for f in frameworks if f in imported), None)


def class_view(bases: list[str], classes: dict[str, ClassCtx]) -> str | None:
    """The framework of a class-based view (Django/DRF, Flask MethodView, Starlette endpoint)."""
    for base in bases:
        local = classes.get(base)
        if local is not None:
            if local.view:
                return local.view
            continue
        found = _view_base(base)
        if found:
            return found
    return None


def template_node(bases: list[str], classes: dict[str, ClassCtx]) -> bool:
    """A Django template ``Node``, directly or through a class of this file."""
    return any(
        b in TEMPLATE_NODE_BASES or (b in classes and classes[b].template_node) for b in bases
    )


def admin_class(bases: list[str], classes: dict[str, ClassCtx]) -> bool:
    """A Django ``ModelAdmin`` (or inline), directly or through a class of this file."""
    return any(b in ADMIN_BASES or (b in classes and classes[b].admin) for b in bases)


def _view_base(base: str) -> str | None:
    if base.startswith(_FLASK_VIEW_BASES):
        return Framework.FLASK
    found = next((f for prefix, f in _CLASS_VIEW_BASES if base.startswith(prefix)), None)
    if found is not None:
        return found
    if base.startswith("starlette.endpoints."):
        return Framework.STARLETTE
    last = base.rpartition(".")[2]
    if base.startswith(("django.views.", "rest_framework.")) or last.endswith("ViewSet"):
        return Framework.DJANGO
    if last in _DJANGO_VIEW_BASES or (last.endswith("View") and framework_of(base) is None):
        # A view class of a package of no known framework is taken for a Django app's
        # (``extra_views.CreateWithInlinesView``), unless the package is an extension of
        # another framework, by its name: ``flask_admin.BaseView``, ``flask_classful.FlaskView``
        # (Flask's), ``pyramid_deform.FormView`` (Pyramid's).
        return _family(base) or Framework.DJANGO
    return None


def _family(dotted: str) -> Framework | None:
    """The framework a package's name says it extends: ``flask_admin`` -> Flask."""
    top = dotted.partition(".")[0]
    return framework_of(top.partition("_")[0]) if "_" in top else None


def function_handler(
    decorators: list[str],
    params: list[str],
    *,
    name: str,
    cls: ClassCtx | None,
    top_level: bool,
    views_module: bool,
    imported: set[Framework],
    bound: bool = False,
    foreign_base: bool = False,
) -> Framework | None:
    """``bound``: a method taking ``self`` (not a static or class method); ``foreign_base``:
    its class derives from a view defined in another module (:func:`foreign_view_base`)."""
    for dotted in decorators:
        found = decorator_framework(dotted, imported)
        if found is not None:
            return found
    hook = cls is not None and _hook(name, bound, foreign_base, imported)
    if cls is not None and cls.view and (name in VIEW_METHODS or hook or _view_hook(name, cls)):
        return Framework(cls.view)
    if cls is not None and cls.admin and (name in ADMIN_METHODS or name in cls.admin_actions):
        return Framework.DJANGO
    if cls is not None and cls.template_node and name == "render" and bound:
        return Framework.DJANGO
    form = form_hook(name, cls.form, imported) if cls is not None and cls.form and bound else None
    if cls is not None and bound and name in cls.method_fields:
        form = Framework.DJANGO
    if form is not None:
        return form
    if cls is not None and bound and Framework.FALCON in imported and falcon_responder(name):
        return Framework.FALCON
    if top_level and views_module and params[:1] == ["request"]:
        # Django's convention, and Pyramid's (a view callable takes the request): a views
        # module's function taking the request first. Named for the one other framework the
        # file imports when it imports no Django (kinto's and kotti's Pyramid views).
        others = imported - {Framework.DJANGO}
        if Framework.DJANGO not in imported and len(others) == 1:
            return next(iter(others))
        return Framework.DJANGO
    if Framework.DJANGO in imported and _takes_the_request(params, cls, bound):
        return Framework.DJANGO
    return None


def foreign_view_base(bases: list[str], classes: dict[str, ClassCtx]) -> bool:
    """A base that is a view of another module of the project or of a library built on a
    framework (``django_registration.views.RegistrationView``), not the framework's own."""
    return any(
        b not in classes and framework_of(b) is None and _view_base(b) is not None for b in bases
    )


def _hook(name: str, bound: bool, foreign: bool, imported: set[Framework]) -> bool:
    """A view instance lives for one request (``as_view()`` makes one per request), so a public
    method of a view deriving from another module's view is a hook that base calls while
    handling it (its ``form_valid`` calling ``self.register``): a handler. Under the
    framework's own bases the hooks are the known names (``VIEW_METHODS``); private helpers
    are handlers when a handler calls them (``_reached_helpers``). Only in a file importing a
    web framework, since a base merely named ``...View`` makes a class a view too."""
    return bound and foreign and bool(imported) and not name.startswith("_")


# Tornado's RequestHandler calls ``prepare()`` "at the beginning of a request before
# get/post/etc." and ``on_finish()`` "after the end of a request" (tornadoweb.org,
# tornado.web): both run in the process serving it.
_TORNADO_HOOKS = frozenset({"prepare", "on_finish"})


def _view_hook(name: str, cls: ClassCtx) -> bool:
    """A Django or DRF view's override of a hook its generic base calls in the request; a
    Tornado handler's ``prepare`` and ``on_finish``."""
    if cls.view == Framework.TORNADO:
        return name in _TORNADO_HOOKS
    return cls.view == Framework.DJANGO and name in FRAMEWORK_VIEW_HOOKS


def _takes_the_request(params: list[str], cls: ClassCtx | None, bound: bool) -> bool:
    """Django hands the request to whatever serves it (``Page.serve(self, request)``,
    ``dispatch(self, request)``, helpers of views): code given it runs inside the request."""
    own = params[1:] if cls is not None and bound else params
    return own[:1] == ["request"]


def is_views_module(module: str) -> bool:
    parts = module.split(".")
    return "views" in parts


def falcon_responder(name: str) -> bool:
    """``on_post``, ``on_get_collection``: a Falcon resource's responder for a verb."""
    if not name.startswith("on_"):
        return False
    verb, _, suffix = name[3:].partition("_")
    return verb in _FALCON_VERBS and (not suffix or suffix.isidentifier())
