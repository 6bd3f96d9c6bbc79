"""Which functions are request handlers, and of which framework."""

from __future__ import annotations

import textwrap

from inventory._extract import extract_source
from inventory.models import Framework


def handlers(source: str, module: str = "shop.api") -> dict[str, Framework | None]:
    summary = extract_source(textwrap.dedent(source), "x.py", module)
    return {f.qualname.removeprefix(f"{module}."): f.handler for f in summary.functions}


def test_fastapi_app_and_router_routes() -> None:
    found = handlers(
        """
        import fastapi
        from fastapi import APIRouter

        app = fastapi.FastAPI()
        router = APIRouter()

        @app.get("/a")
        def a(): ...

        @router.post("/b")
        async def b(): ...

        @app.api_route("/c", methods=["PUT"])
        def c(): ...

        @app.websocket("/ws")
        async def ws(socket): ...

        def helper(): ...
        """
    )
    assert found == {
        "a": Framework.FASTAPI,
        "b": Framework.FASTAPI,
        "c": Framework.FASTAPI,
        "ws": Framework.FASTAPI,
        "helper": None,
    }


def test_router_imported_from_another_module_in_a_fastapi_file() -> None:
    found = handlers(
        """
        from fastapi import Depends
        from .deps import router

        @router.delete("/x")
        def remove(): ...
        """
    )
    assert found == {"remove": Framework.FASTAPI}


def test_starlette_app() -> None:
    found = handlers(
        """
        from starlette.applications import Starlette

        app = Starlette()

        @app.route("/")
        async def home(request): ...
        """
    )
    assert found == {"home": Framework.STARLETTE}


def test_flask_app_blueprint_and_method_view() -> None:
    found = handlers(
        """
        from flask import Blueprint, Flask
        from flask.views import MethodView

        app = Flask(__name__)
        bp = Blueprint("orders", __name__)

        @app.route("/")
        def index(): ...

        @bp.post("/orders")
        def create(): ...

        class OrderAPI(MethodView):
            def get(self, order_id): ...
            def _load(self): ...
        """
    )
    assert found == {
        "index": Framework.FLASK,
        "create": Framework.FLASK,
        "OrderAPI.get": Framework.FLASK,
        "OrderAPI._load": None,
    }


def test_lookalike_decorators_are_not_handlers() -> None:
    found = handlers(
        """
        import functools

        cache = {}

        @functools.lru_cache
        def a(): ...

        @cache.get("x")
        def b(): ...
        """
    )
    assert found == {"a": None, "b": None}


def test_django_function_views_in_views_modules() -> None:
    source = """
        def order_detail(request, pk): ...
        def _helper(order): ...

        class Thing:
            def get(self, request): ...
        """
    assert handlers(source, "shop.views") == {
        "order_detail": Framework.DJANGO,
        "_helper": None,
        "Thing.get": None,
    }
    assert handlers(source, "shop.views.orders")["order_detail"] is Framework.DJANGO
    assert handlers(source, "shop.services")["order_detail"] is None


def test_django_decorators_and_drf() -> None:
    found = handlers(
        """
        from django.views.decorators.http import require_POST
        from rest_framework.decorators import api_view

        @require_POST
        def pay(request): ...

        @api_view(["POST"])
        def refund(request): ...
        """
    )
    assert found == {"pay": Framework.DJANGO, "refund": Framework.DJANGO}


def test_django_class_based_views_through_local_bases() -> None:
    found = handlers(
        """
        from django.views import View
        from rest_framework import viewsets
        from rest_framework.decorators import action
        from rest_framework.views import APIView

        class Base(View):
            pass

        class OrderView(Base):
            def post(self, request): ...
            def render(self): ...

        class Refunds(APIView):
            def delete(self, request, pk): ...

        class Orders(viewsets.ModelViewSet):
            def perform_create(self, serializer): ...

        class Helpers:
            @action(detail=True, methods=["post"])
            def ship(self, request, pk=None): ...
        """
    )
    assert found["OrderView.post"] is Framework.DJANGO
    assert found["OrderView.render"] is None
    assert found["Refunds.delete"] is Framework.DJANGO
    assert found["Orders.perform_create"] is Framework.DJANGO
    assert found["Helpers.ship"] is Framework.DJANGO


def test_sites_carry_the_enclosing_handler() -> None:
    summary = extract_source(
        textwrap.dedent(
            """
            import threading
            from fastapi import FastAPI

            app = FastAPI()

            def work(): ...

            @app.post("/x")
            def start():
                threading.Thread(target=work).start()
            """
        ),
        "x.py",
        "shop.api",
    )
    (site,) = summary.sites
    assert site.handler is Framework.FASTAPI
    assert site.enclosing_function == "shop.api.start"


def test_handlers_registered_by_a_call() -> None:
    summary = extract_source(
        textwrap.dedent(
            """
            import threading
            from flask import Flask
            from starlette.applications import Starlette
            from starlette.routing import Route

            async def homepage(request):
                threading.Thread(target=print).start()

            def index(): ...

            def helper(): ...

            app = Starlette(routes=[Route("/", homepage)])
            flask_app = Flask(__name__)
            flask_app.add_url_rule("/", view_func=index)
            """
        ),
        "x.py",
        "shop.app",
    )
    handlers = {f.name: f.handler for f in summary.functions}
    assert handlers == {"homepage": Framework.STARLETTE, "index": Framework.FLASK, "helper": None}
    assert summary.sites[0].handler is Framework.STARLETTE


def test_a_view_base_of_another_frameworks_extension_is_not_djangos() -> None:
    """``X.*View`` of a package of no known framework is taken for a Django app's view,
    unless the package's name says which framework it extends: ``flask_admin``,
    ``flask_classful`` (Flask), ``pyramid_deform`` (Pyramid)."""
    source = """
    from extra_views import CreateWithInlinesView
    from flask_admin import BaseView
    from flask_classful import FlaskView
    from pyramid_deform import FormView

    class Orders(CreateWithInlinesView):
        def post(self, request):
            return None

    class Stats(BaseView):
        def post(self):
            return None

    class Items(FlaskView):
        def get(self):
            return None

    class Signup(FormView):
        def get(self):
            return None
    """
    summary = extract_source(textwrap.dedent(source), "app/views.py", "app.views")
    handlers = {f.qualname: f.handler for f in summary.functions}
    assert handlers == {
        "app.views.Orders.post": Framework.DJANGO,
        "app.views.Stats.post": Framework.FLASK,
        "app.views.Items.get": Framework.FLASK,
        "app.views.Signup.get": Framework.PYRAMID,
    }


def test_a_views_module_of_another_framework_names_that_framework() -> None:
    """A function of a views module taking ``request`` first is a view by Django's
    convention and Pyramid's; in a file that imports Pyramid and not Django it is named
    Pyramid's (kinto's, kotti's views were Django handlers in the census)."""
    pyramid = """
    from pyramid.httpexceptions import HTTPFound

    def reset(request, user):
        return HTTPFound(location=request.url)
    """
    [found] = extract_source(textwrap.dedent(pyramid), "app/views.py", "app.views").functions
    assert found.handler is Framework.PYRAMID
    plain = "def reset(request, user):\n    return None\n"
    [django] = extract_source(plain, "app/views.py", "app.views").functions
    assert django.handler is Framework.DJANGO  # no framework imported: Django's convention
    both = "import django\nimport pyramid\n\ndef reset(request):\n    return None\n"
    [mixed] = extract_source(both, "app/views.py", "app.views").functions
    assert mixed.handler is Framework.DJANGO


def test_request_hooks_of_the_other_frameworks() -> None:
    """What runs in every request without a route: Quart's Flask hooks, Sanic's
    ``on_request`` / ``middleware``, aiohttp's ``@web.middleware``, a Tornado handler's
    ``prepare`` and ``on_finish``; a Tornado handler's other methods are not hooks."""
    source = """
    import tornado.web
    from aiohttp import web
    from quart import Quart
    from sanic import Sanic

    qapp = Quart(__name__)
    sapp = Sanic("shop")

    @qapp.before_request
    async def load_user():
        return None

    @sapp.on_request
    async def tenant(request):
        return None

    @sapp.middleware("response")
    async def stamp(request, response):
        return None

    @web.middleware
    async def timing(request, handler):
        return await handler(request)

    class Orders(tornado.web.RequestHandler):
        def prepare(self):
            return None

        def on_finish(self):
            return None

        def audit(self):
            return None
    """
    summary = extract_source(textwrap.dedent(source), "app/hooks.py", "app.hooks")
    assert {f.qualname.removeprefix("app.hooks."): f.handler for f in summary.functions} == {
        "load_user": Framework.QUART,
        "tenant": Framework.SANIC,
        "stamp": Framework.SANIC,
        "timing": Framework.AIOHTTP,
        "Orders.prepare": Framework.TORNADO,
        "Orders.on_finish": Framework.TORNADO,
        "Orders.audit": None,
    }
