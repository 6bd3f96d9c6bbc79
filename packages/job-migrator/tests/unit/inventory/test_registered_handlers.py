"""Views registered by a call, in whatever module registers them, are request handlers."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from inventory import scan
from inventory._extract import extract_source
from inventory.models import Framework, Inventory, Pattern

D, F, A, S = Framework.DJANGO, Framework.FLASK, Framework.FASTAPI, Framework.STARLETTE


def routes(source: str, module: str = "site.urls") -> dict[str, Framework]:
    """Functions and classes the module registers as views."""
    summary = extract_source(textwrap.dedent(source), "urls.py", module)
    return {**summary.routes, **summary.view_classes}


def scanned(tmp_path: Path, files: dict[str, str]) -> Inventory:
    for rel, text in {"app/__init__.py": "", **files}.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    return scan(tmp_path, use_cache=False, jobs=1)


def direct(inventory: Inventory) -> list[tuple[str, str, Framework | None]]:
    return [
        (s.job, s.enclosing_function or "", s.handler)
        for s in inventory.sites
        if s.pattern is Pattern.DIRECT_CALL
    ]


# -- what each module records ------------------------------------------------------------


def test_django_urlconf_names_function_and_class_views_through_wrappers() -> None:
    found = routes(
        """
        from django.conf.urls import url
        from django.contrib.auth.decorators import login_required
        from django.urls import include, path, re_path
        from django.views.decorators.cache import cache_page

        from shop import views
        from shop.views import Checkout

        urlpatterns = [
            path("a/", views.a),
            re_path(r"^b/$", login_required(views.b)),
            path("c/", cache_page(60)(views.c)),
            path("checkout/", Checkout.as_view(template_name="x.html")),
            url(r"^d/$", view=views.d),
            path("api/", include("shop.api.urls")),
            path("feed/", views.Feed()),
        ]
        """
    )
    assert found == {
        "shop.views.a": D,
        "shop.views.b": D,
        "shop.views.c": D,
        "shop.views.Checkout": D,
        "shop.views.d": D,
    }


def test_flask_registrations_on_apps_and_blueprints_of_any_module() -> None:
    found = routes(
        """
        from flask import Flask

        from web.ext import bp
        from web import views

        def create_app():
            app = Flask(__name__)
            app.add_url_rule("/a", "a", views.a)
            bp.add_url_rule("/b", view_func=views.B.as_view("b"))
            bp.route("/c", methods=["POST"])(views.c)
            return app
        """,
        "web.app",
    )
    assert found == {"web.views.a": F, "web.views.B": F, "web.views.c": F}


def test_as_view_names_a_view_class_whatever_call_registers_it() -> None:
    found = routes(
        """
        from flask import Blueprint

        from web.helpers import register_view
        from web.views import Settings

        bp = Blueprint("user", __name__)
        register_view(bp, routes=["/settings"], view_func=Settings.as_view("settings"))
        """,
        "web.user",
    )
    assert found == {"web.views.Settings": F}


def test_fastapi_starlette_and_restful_registrations() -> None:
    fastapi = routes(
        """
        from fastapi import APIRouter
        from svc import endpoints

        router = APIRouter()
        router.add_api_route("/orders", endpoints.create, methods=["POST"])
        """
    )
    starlette = routes(
        """
        from starlette.routing import Mount, Route, WebSocketRoute
        from svc.endpoints import Home, feed

        routes = [Mount("/x", routes=[Route("/", Home), WebSocketRoute("/ws", endpoint=feed)])]
        """
    )
    restful = routes(
        """
        from flask_restx import Api
        from svc.ext import api
        from svc.resources import Orders

        api.add_resource(Orders, "/orders")
        """
    )
    assert fastapi == {"svc.endpoints.create": A}
    assert starlette == {"svc.endpoints.Home": S, "svc.endpoints.feed": S}
    assert restful == {"svc.resources.Orders": F}


def test_drf_routers_register_viewsets() -> None:
    found = routes(
        """
        from rest_framework.routers import DefaultRouter
        from shop.api import OrderViewSet
        from shop.routers import nested_router

        router = DefaultRouter()
        router.register(r"orders", OrderViewSet, basename="order")
        nested_router.register("items", viewset=OrderViewSet.Items)
        """
    )
    assert found == {"shop.api.OrderViewSet": D, "shop.api.OrderViewSet.Items": D}


@pytest.mark.parametrize(
    "source",
    [
        # The method names alone are no evidence: the file imports no framework.
        "from web.ext import bp\nfrom web import views\nbp.add_url_rule('/a', 'a', views.a)\n",
        "from svc.ext import api\nfrom svc import res\napi.add_resource(res.Orders, '/o')\n",
        # ``register`` on the admin site or a plugin registry is no DRF router.
        "from django.contrib import admin\nfrom rest_framework import serializers\n"
        "from shop.models import Order, OrderAdmin\nadmin.site.register(Order, OrderAdmin)\n",
        "from rest_framework import serializers\nfrom shop.plugins import registry, Digest\n"
        "registry.register('digest', Digest)\n",
    ],
)
def test_lookalike_registrations_record_nothing(source: str) -> None:
    assert routes(source) == {}


# -- the classifier joins them across modules --------------------------------------------


def test_a_view_reexported_by_its_package_and_registered_in_urls(tmp_path: Path) -> None:
    inventory = scanned(
        tmp_path,
        {
            "app/views/__init__.py": "from app.views.signup import signup\n",
            "app/views/signup.py": """
                import requests

                def signup(req):
                    requests.post("https://crm.example/leads", json={"id": 1})
                """,
            "app/urls.py": """
                from django.urls import path
                from app import views

                urlpatterns = [path("signup/", views.signup)]
                """,
        },
    )
    assert direct(inventory) == [("app.views.signup.signup", "app.views.signup.signup", D)]


def test_a_registered_class_gets_inherited_verbs_and_its_sites_the_handler(
    tmp_path: Path,
) -> None:
    inventory = scanned(
        tmp_path,
        {
            "app/base.py": """
                import requests

                class Step:
                    def post(self, request):
                        requests.post("https://erp.example/steps")
                """,
            "app/views.py": """
                import threading

                from app.base import Step

                def audit(): ...

                class Confirm(Step):
                    def get(self, request):
                        threading.Thread(target=audit).start()
                """,
            "app/factory.py": """
                from flask import Flask
                from app.views import Confirm

                def create_app():
                    app = Flask(__name__)
                    app.add_url_rule("/confirm", view_func=Confirm.as_view("confirm"))
                """,
        },
    )
    assert direct(inventory) == [("app.base.Step.post", "app.base.Step.post", F)]
    threads = [s for s in inventory.sites if s.pattern is Pattern.THREAD]
    assert [(s.job, s.handler) for s in threads] == [("app.views.audit", F)]


def test_a_restx_namespace_routes_a_class_on_a_project_base(tmp_path: Path) -> None:
    inventory = scanned(
        tmp_path,
        {
            "app/base.py": "class AuthedResource:\n    decorators = []\n",
            "app/api.py": """
                import requests
                from flask_restx import Namespace

                from app.base import AuthedResource

                ns = Namespace("hooks")

                @ns.route("/fire")
                class Fire(AuthedResource):
                    def post(self):
                        requests.post("https://hooks.example/fire")
                """,
        },
    )
    assert direct(inventory) == [("app.api.Fire.post", "app.api.Fire.post", F)]


def test_library_views_and_unregistered_functions_stay_quiet(tmp_path: Path) -> None:
    inventory = scanned(
        tmp_path,
        {
            "app/jobs.py": """
                import requests

                def nightly():
                    requests.post("https://erp.example/sync")

                class Article:
                    def update(self):
                        requests.post("https://search.example/index")
                """,
            "app/urls.py": """
                from django.contrib.auth.views import LoginView
                from django.urls import path

                from app.feeds import feed_view
                from app.jobs import Article

                urlpatterns = [
                    path("login/", LoginView.as_view()),
                    path("feed/", feed_view(Article)),  # a view factory's argument
                ]
                """,
        },
    )
    assert direct(inventory) == []


def test_a_view_known_only_at_run_time_is_a_reported_gap(tmp_path: Path) -> None:
    inventory = scanned(
        tmp_path,
        {
            "app/admin.py": """
                from starlette.routing import Route

                class Admin:
                    def routes(self):
                        return [Route(f"/{n}", getattr(self, n)) for n in self.pages]
                """,
        },
    )
    [site] = inventory.sites
    assert (site.pattern, site.job, site.handler) == (Pattern.DIRECT_CALL, "unknown", S)
    assert "getattr(self, n)" in site.unresolved_reason
