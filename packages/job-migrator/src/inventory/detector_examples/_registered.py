"""Views defined in one module and registered in another (``direct_call``).

The view in ``app.py`` carries no decorator; what makes it a request handler is the
framework's registration API called in another module: a URLconf, an app factory, a
router. The framework is the one whose registering API that module imports.
"""

from __future__ import annotations

from inventory.detector_examples._model import F, example
from inventory.models import Pattern

REGISTERED = [
    example(
        Pattern.DIRECT_CALL,
        "Django URLconf in urls.py: a function view and a class-based view of app.py",
        [("app.retry_webhook", F), ("app.Confirm.notify_partner", F)],
        "`path()` / `re_path()` name the view: a function, or `View.as_view()` (the class: its "
        "HTTP-method handlers and what they call on `self`), also when wrapped by hand "
        "(`login_required(...)`). `Confirm`'s base is the project's own, so only the URLconf "
        "says it is a view.",
        """
import requests

from checkout.steps import CheckoutStep

def retry_webhook(req, pk):
    requests.post("https://hooks.example/retry", json={"id": pk})

class Confirm(CheckoutStep):
    def post(self, request):
        self.notify_partner(request.POST["order"])

    def notify_partner(self, order):
        requests.post("https://partner.example/orders", json={"order": order})
""",
        {
            "urls.py": """
from django.contrib.auth.decorators import login_required
from django.urls import path, re_path

from app import Confirm, retry_webhook

urlpatterns = [
    path("confirm/", login_required(Confirm.as_view())),
    re_path(r"^retry/(?P<pk>[0-9]+)/$", retry_webhook),
]
"""
        },
    ),
    example(
        Pattern.DIRECT_CALL,
        "Flask app factory: add_url_rule and a route decorator called by hand",
        [("app.contact", F), ("app.resend_activation", F)],
        "`add_url_rule(rule, endpoint, view_func)` and `bp.route(...)(view)` register views "
        "of another module; the slow work (an SMTP send, a mail through the `Mail` extension "
        "object) is in the views themselves, so each view is the job.",
        """
import smtplib

from flask import request
from flask_mail import Mail, Message

mail = Mail()

def contact():
    with smtplib.SMTP("localhost") as smtp:
        smtp.sendmail("site@example.com", ["team@example.com"], request.form["body"])
    return "", 204

def resend_activation():
    mail.send(Message("Activate", recipients=[request.form["email"]]))
    return "", 202
""",
        {
            "factory.py": """
from flask import Blueprint, Flask

from app import contact, mail, resend_activation

def create_app():
    app = Flask(__name__)
    mail.init_app(app)
    app.add_url_rule("/contact", "contact", contact, methods=["POST"])
    accounts = Blueprint("accounts", __name__)
    accounts.route("/resend", methods=["POST"])(resend_activation)
    app.register_blueprint(accounts)
    return app
"""
        },
    ),
    example(
        Pattern.DIRECT_CALL,
        "FastAPI add_api_route: an async endpoint awaits the HTTP call",
        [("app.notify_partner", F)],
        "`add_api_route(path, endpoint)` registers `confirm`; the awaited call runs inside "
        "the request like a plain one, and `notify_partner` posts to the partner.",
        """
import httpx

async def notify_partner(order_id: int):
    async with httpx.AsyncClient() as client:
        await client.post("https://partner.example/orders", json={"id": order_id})

async def confirm(order_id: int):
    await notify_partner(order_id)
    return {"confirmed": order_id}
""",
        {
            "main.py": """
from fastapi import FastAPI

from app import confirm

app = FastAPI()
app.add_api_route("/orders/{order_id}/confirm", confirm, methods=["POST"])
"""
        },
    ),
    example(
        Pattern.DIRECT_CALL,
        "Registered classes: a DRF router, Flask-RESTful add_resource, a Starlette Route",
        [("app.Orders.create", F), ("app.Hook.post", F), ("app.Ping.post", F)],
        "`router.register(prefix, ViewSet)` routes the viewset's actions (`list`, `create`, "
        "...), `api.add_resource(Resource, url)` and Starlette's `Route(path, endpoint)` route "
        "each HTTP verb to the method of that name. The classes derive from the project's "
        "own bases, so only the registration says they serve requests.",
        """
import requests

from project.bases import ApiBase, Endpoint, ResourceBase

class Orders(ApiBase):
    def create(self, request):
        requests.post("https://erp.example/orders", json=request.data)

class Hook(ResourceBase):
    def post(self):
        requests.post("https://hooks.example/fire")

class Ping(Endpoint):
    async def post(self, request):
        requests.post("https://status.example/ping")
""",
        {
            "urls.py": """
from rest_framework.routers import DefaultRouter

from app import Orders

router = DefaultRouter()
router.register(r"orders", Orders, basename="order")
urlpatterns = router.urls
""",
            "api.py": """
from flask_restful import Api

from app import Hook

api = Api()
api.add_resource(Hook, "/hook")
""",
            "asgi.py": """
from starlette.applications import Starlette
from starlette.routing import Mount, Route

from app import Ping

app = Starlette(routes=[Mount("/status", routes=[Route("/ping", Ping, methods=["POST"])])])
""",
        },
    ),
    example(
        Pattern.DIRECT_CALL,
        "INVALID: a registered view that does no slow work",
        [],
        "Registration makes a handler, not a site: a handler is reported only where slow "
        "work is reached (a catalogued sink, or a guessed call into one).",
        """
from django.http import JsonResponse

from shop.models import Order

def order_status(req, pk):
    return JsonResponse({"status": Order.objects.get(pk=pk).status})
""",
        {
            "urls.py": """
from django.urls import path

from app import order_status

urlpatterns = [path("orders/<int:pk>/", order_status)]
"""
        },
    ),
    example(
        Pattern.DIRECT_CALL,
        "Django admin: a model registered with Django's own ModelAdmin hooks",
        [("app.Gallery.save", F)],
        "`admin.site.register(Gallery)` (or a `ModelAdmin` without `save_model`): the "
        "admin's change form saves through Django's default `save_model`, which calls "
        "`obj.save()` (Django's admin documentation), so the model's `save` override runs in "
        "that request and its slow work (a thumbnail rendered) is a site whose job is `save`. "
        "A project `save_model` replaces the default: what it calls decides.",
        """
from django.db import models
from PIL import Image

class Gallery(models.Model):
    image = models.ImageField()

    def save(self, *args, **kwargs):
        super().save(*args, **kwargs)
        thumb = Image.open(self.image.path)
        thumb.thumbnail((200, 200))
        thumb.save(self.image.path + ".thumb.png")
""",
        {
            "admin.py": """
from django.contrib import admin

from app import Gallery

admin.site.register(Gallery)
"""
        },
    ),
    example(
        Pattern.DIRECT_CALL,
        "INVALID: `register` on a plugin registry, not a router",
        [],
        "DRF registers viewsets on routers; a `register` call on another object, even in a "
        "module importing DRF, routes nothing: `Digest.create` is no viewset action.",
        """
import requests

class Digest:
    def create(self, request):
        requests.post("https://mail.example/digest")
""",
        {
            "plugins.py": """
from rest_framework import serializers

from app import Digest
from project.plugins import registry

registry.register("digest", Digest)
"""
        },
    ),
]
