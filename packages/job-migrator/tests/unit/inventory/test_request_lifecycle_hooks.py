"""Code a framework runs in every request without a route naming it is a request handler.

Django installs it by dotted path in settings (``MIDDLEWARE``, context processors,
``AUTHENTICATION_BACKENDS``, DRF's ``REST_FRAMEWORK`` classes and exception handler); Flask
by its hook decorators or calls (``before_request``, ``after_app_request``...); FastAPI and
Starlette by ``@app.middleware("http")``, ``add_middleware`` and ``exception_handler``.
Slow work there is slow work inside the request, like a view's. What runs once at start-up
(a middleware's ``__init__``, a middleware factory's own body) and methods the framework
never calls are not handlers."""

from __future__ import annotations

import ast
from collections.abc import Callable

from inventory import Inventory
from inventory._extract.detectors._installed import Installed, installed
from inventory.models import Framework, Pattern

Scanner = Callable[[dict[str, str]], Inventory]

SETTINGS = """DEBUG = True
MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "site.hooks.AuditMiddleware",
]
if DEBUG:
    MIDDLEWARE += ["site.hooks.timing_middleware"]
MIDDLEWARE.insert(0, "site.hooks.LegacyMiddleware")
TEMPLATES = [{"BACKEND": "x", "OPTIONS": {"context_processors": ["site.hooks.weather"]}}]
AUTHENTICATION_BACKENDS = ("site.hooks.LdapBackend",)
REST_FRAMEWORK = {
    "DEFAULT_PERMISSION_CLASSES": ["site.hooks.Quota"],
    "EXCEPTION_HANDLER": "site.hooks.report",
}
"""

HOOKS = """import requests


class AuditMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response
        requests.get("https://start.example.com/audit")

    def __call__(self, request):
        requests.post("https://audit.example.com", json={"path": request.path})
        return self.get_response(request)


class Base:
    def process_request(self, request):
        requests.post("https://legacy.example.com")


class LegacyMiddleware(Base):
    pass


def timing_middleware(get_response):
    requests.get("https://start.example.com/timing")

    def middleware(request):
        requests.post("https://timing.example.com")
        return get_response(request)

    return middleware


def weather(request):
    return {"weather": requests.get("https://weather.example.com").json()}


class LdapBackend:
    def authenticate(self, request, username=None, password=None):
        requests.post("https://ldap.example.com", data={"u": username})

    def sync(self):
        requests.get("https://never.example.com/sync")


class Quota:
    def has_permission(self, request, view):
        return requests.get("https://quota.example.com").ok


def report(exc, context):
    requests.post("https://errors.example.com")


def unused(request):
    requests.get("https://never.example.com/unused")
"""


def handled(inventory: Inventory) -> dict[str, Framework | None]:
    """Enclosing function -> handler, of the direct calls of slow work."""
    return {
        s.enclosing_function or "": s.handler
        for s in inventory.sites
        if s.pattern is Pattern.DIRECT_CALL
    }


def test_what_django_settings_install_runs_in_the_request(scan_project: Scanner) -> None:
    found = handled(
        scan_project(
            {
                "site/__init__.py": "",
                "site/settings.py": SETTINGS,
                "site/hooks.py": HOOKS,
            }
        )
    )
    assert found == {
        "site.hooks.AuditMiddleware.__call__": Framework.DJANGO,
        "site.hooks.Base.process_request": Framework.DJANGO,
        "site.hooks.timing_middleware.<locals>.middleware": Framework.DJANGO,
        "site.hooks.weather": Framework.DJANGO,
        "site.hooks.LdapBackend.authenticate": Framework.DJANGO,
        "site.hooks.Quota.has_permission": Framework.DJANGO,
        "site.hooks.report": Framework.DJANGO,
    }


def test_without_the_settings_nothing_there_is_a_handler(scan_project: Scanner) -> None:
    found = handled(scan_project({"site/__init__.py": "", "site/hooks.py": HOOKS}))
    assert found == {}


def test_settings_are_read_only_from_module_level_string_paths() -> None:
    source = """
MIDDLEWARE = ["a.b.One", "not a path", 3]
def configure():
    MIDDLEWARE.append("a.b.InsideAFunction")
class Config:
    MIDDLEWARE = ["a.b.InAClass"]
try:
    import debug_toolbar
    MIDDLEWARE.append("a.b.Debug")
except ImportError:
    pass
TEMPLATES = []
TEMPLATES[0]["OPTIONS"]["context_processors"] += ["a.b.more"]
"""
    assert installed(ast.parse(source), source) == {
        "a.b.One": Installed.MIDDLEWARE,
        "a.b.Debug": Installed.MIDDLEWARE,
        "a.b.more": Installed.CONTEXT_PROCESSOR,
    }


APP = """import requests
from fastapi import FastAPI
from flask import Blueprint, Flask
from starlette.middleware.base import BaseHTTPMiddleware

app = Flask(__name__)
bp = Blueprint("b", __name__)
api = FastAPI()


@app.before_request
def load_geo():
    requests.get("https://geo.example.com")


@bp.after_app_request
def audit(response):
    requests.post("https://audit.example.com")
    return response


def track(error):
    requests.post("https://track.example.com")


app.teardown_request(track)


@api.middleware("http")
async def timing(request, call_next):
    requests.post("https://timing.example.com")
    return await call_next(request)


class Metrics(BaseHTTPMiddleware):
    async def dispatch(self, request, call_next):
        requests.post("https://metrics.example.com")
        return await call_next(request)

    def flush(self):
        requests.get("https://never.example.com/flush")


api.add_middleware(Metrics)


@api.exception_handler(ValueError)
async def on_error(request, exc):
    requests.post("https://errors.example.com")


def plain():
    requests.get("https://never.example.com/plain")
"""


def test_flask_and_fastapi_request_hooks_are_handlers(scan_project: Scanner) -> None:
    assert handled(scan_project({"app.py": APP})) == {
        "app.load_geo": Framework.FLASK,
        "app.audit": Framework.FLASK,
        "app.track": Framework.FLASK,
        "app.timing": Framework.FASTAPI,
        "app.Metrics.dispatch": Framework.FASTAPI,
        "app.on_error": Framework.FASTAPI,
    }


def test_a_middleware_class_runs_its_middleware_hooks_not_view_methods(
    scan_project: Scanner,
) -> None:
    """``add_middleware(cls)`` installs a middleware, not a view: its ``dispatch`` (a
    ``BaseHTTPMiddleware``) or ``__call__`` (a pure ASGI middleware) runs in each request; a
    method it happens to call ``get`` is no HTTP handler. Installed from another module."""
    middleware = """import requests
from starlette.middleware.base import BaseHTTPMiddleware


class Timing(BaseHTTPMiddleware):
    async def dispatch(self, request, call_next):
        requests.post("https://timing.example.com")
        return await call_next(request)

    def get(self, key):
        requests.get("https://never.example.com/get")


class Raw:
    def __init__(self, app):
        self.app = app
        requests.get("https://never.example.com/start")

    async def __call__(self, scope, receive, send):
        requests.post("https://raw.example.com")
        await self.app(scope, receive, send)
"""
    app = """from starlette.applications import Starlette
from fastapi import FastAPI
from site_mw import Raw, Timing

api = FastAPI()
api.add_middleware(Timing)
star = Starlette()
star.add_middleware(Raw)
"""
    assert handled(scan_project({"site_mw.py": middleware, "app.py": app})) == {
        "site_mw.Timing.dispatch": Framework.FASTAPI,
        "site_mw.Raw.__call__": Framework.STARLETTE,
    }


def test_a_hook_name_on_another_frameworks_app_is_no_hook(scan_project: Scanner) -> None:
    """``errorhandler`` is Flask's; on a FastAPI app it is nothing the framework calls."""
    source = """import requests
from fastapi import FastAPI

api = FastAPI()


@api.errorhandler(404)
def missing(error):
    requests.get("https://never.example.com")
"""
    assert handled(scan_project({"app.py": source})) == {}


SERIALIZER = """import requests
from rest_framework import serializers


class OrderSerializer(serializers.ModelSerializer):
    status = serializers.SerializerMethodField()
    rate = serializers.SerializerMethodField(method_name="fetch_rate")

    def get_status(self, obj):
        return requests.get("https://status.example.com").json()

    def fetch_rate(self, obj):
        return requests.get("https://rates.example.com").json()

    def get_other(self, obj):
        return requests.get("https://never.example.com").json()
"""


def test_a_serializer_method_fields_method_runs_in_the_request(scan_project: Scanner) -> None:
    """DRF calls ``get_<field>`` (or ``method_name``) of each ``SerializerMethodField`` while
    it serializes a response; a ``get_`` method no field names is not called by DRF."""
    assert handled(scan_project({"api.py": SERIALIZER})) == {
        "api.OrderSerializer.get_status": Framework.DJANGO,
        "api.OrderSerializer.fetch_rate": Framework.DJANGO,
    }


DEPENDENCIES = """
from __future__ import annotations

from typing import Annotated

import requests
from fastapi import APIRouter, Depends, FastAPI, Security


def current_user(token: str):
    return requests.get("https://auth.example.com/me", headers={"t": token}).json()


def audit():
    requests.post("https://audit.example.com")


def scoped(user=Depends(current_user)):
    requests.get("https://scopes.example.com")
    return user


def quota():
    requests.get("https://quota.example.com")


def unused():
    requests.get("https://never.example.com")


app = FastAPI(dependencies=[Depends(audit)])
router = APIRouter()


@router.get("/items", dependencies=[Depends(quota)])
async def items(user: Annotated[dict, Security(scoped, scopes=["items"])]):
    return []
"""


def test_fastapi_dependencies_run_in_the_request(scan_project: Scanner) -> None:
    """A dependency declared as a parameter's default, in ``Annotated``, in a decorator's or
    the app's ``dependencies=[...]``, or by another dependency, is called by FastAPI for
    each request of the path operation; a function no declaration names is not."""
    assert handled(scan_project({"app.py": DEPENDENCIES})) == {
        "app.current_user": Framework.FASTAPI,
        "app.audit": Framework.FASTAPI,
        "app.scoped": Framework.FASTAPI,
        "app.quota": Framework.FASTAPI,
    }


LOGIN = """
import requests
from flask_login import LoginManager

login_manager = LoginManager()


@login_manager.user_loader
def load_user(user_id):
    return requests.get(f"https://users.example.com/{user_id}").json()


def from_header(request):
    return requests.get("https://tokens.example.com").json()


login_manager.request_loader(from_header)


def unrelated():
    requests.get("https://never.example.com")
"""


def test_flask_logins_loaders_run_in_the_request(scan_project: Scanner) -> None:
    """Flask-Login calls ``user_loader`` to reload the session's user in each request, and
    ``request_loader`` to load one from the request (decorated or called)."""
    assert handled(scan_project({"auth.py": LOGIN})) == {
        "auth.load_user": Framework.FLASK,
        "auth.from_header": Framework.FLASK,
    }
