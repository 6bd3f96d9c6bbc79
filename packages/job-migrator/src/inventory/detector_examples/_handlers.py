"""Slow work called inline in request handlers (``direct_call``): found by the classifier.

Unlike the other patterns, these sites come from effects: the extractor only says which
functions are request handlers, and the classifier reports each call of a handler whose
transitive effects are slow (the callee is the job), or the handler itself when it calls
the slow library API inline.
"""

from __future__ import annotations

from inventory.detector_examples._model import F, example
from inventory.models import Pattern

DIRECT = [
    example(
        Pattern.DIRECT_CALL,
        "Flask-RESTful Resource, Flask-Mail two calls down",
        [("app.send_welcome", F)],
        "`api.add_resource` routes each HTTP verb to the Resource method of that name. The "
        "mail goes through `current_app.mail`, where the app stored its `Mail`.",
        """
from flask import current_app
from flask_mail import Message
from flask_restful import Resource

def deliver(message):
    current_app.mail.send(message)

def send_welcome(address):
    deliver(Message("Welcome", recipients=[address]))

class Accounts(Resource):
    def post(self):
        send_welcome("a@example.com")
        return "", 201
""",
    ),
    example(
        Pattern.DIRECT_CALL,
        "Flask blueprint route, mail through the extension registry",
        [("app.signup", F)],
        "The handler sends inline, so the handler itself is the job to extract.",
        """
from flask import Blueprint, current_app

bp = Blueprint("accounts", __name__)

@bp.post("/signup")
def signup():
    current_app.extensions["mail"].send(make_message())
    return "", 201

def make_message(): ...
""",
    ),
    example(
        Pattern.DIRECT_CALL,
        "A hook of another module's Django view",
        [("app.SignupView.send_activation", F), ("app.SignupView.send_activation", F)],
        "A view instance lives for one request, so a public method of a view deriving from "
        "another module's view is a hook that base calls while handling it (its `form_valid` "
        "calls `self.register`). `email_user` is Django's `AbstractUser.email_user`.",
        """
from django.conf import settings

from accounts.views import BaseSignupView

class SignupView(BaseSignupView):
    def register(self, form):
        user = form.save()
        self.send_activation(user)
        return user

    def send_activation(self, user):
        user.email_user("Activate", "...", settings.DEFAULT_FROM_EMAIL)
""",
    ),
    example(
        Pattern.DIRECT_CALL,
        "A Celery task run in the request with apply",
        [("app.render_thumbnail", F)],
        "Celery documents `Task.apply` as running the task locally, blocking until it "
        "returns (Huey's `call_local` and Dramatiq's `actor.fn` are the same): no broker is "
        "involved, so the thumbnail is rendered inside the request, as a plain call of "
        "`render_thumbnail` would. Only `.delay` and `.apply_async` leave the process.",
        """
from celery import shared_task
from django.http import JsonResponse
from PIL import Image

@shared_task
def render_thumbnail(path):
    with Image.open(path) as image:
        image.thumbnail((128, 128))
        image.save(path + ".thumb.png")

def upload(request):
    path = request.POST["path"]
    render_thumbnail.apply((path,))
    return JsonResponse({"ok": True})
""",
        modules={
            "urls.py": """
from django.urls import path

from app import upload

urlpatterns = [path("upload/", upload)]
"""
        },
    ),
    example(
        Pattern.DIRECT_CALL,
        "INVALID: work a helper does only under a flag the view leaves out",
        [],
        "`enqueue_report` runs the report in the caller only `if synchronous:`, a parameter "
        "whose default is `False` and that it never rebinds; the view calls it without the "
        "flag, so that branch never runs in this request (the `.delay` does: work leaving the "
        "process). A call that passes the flag (by name, by position, or through `**options`) "
        "is a site of `enqueue_report`, unless what it passes is a falsy literal "
        "(`synchronous=False`); the helper's own verdict still counts both branches.",
        """
from celery import shared_task
from django.core.mail import send_mail
from django.http import HttpResponse

@shared_task
def run_report(pk):
    send_mail("Report", str(pk), "a@example.com", ["b@example.com"])

def enqueue_report(pk, synchronous=False):
    if synchronous:
        run_report.apply((pk,))
    else:
        run_report.delay(pk)

def report(request, pk):
    enqueue_report(pk)
    return HttpResponse()
""",
        modules={
            "urls.py": """
from django.urls import path

from app import report

urlpatterns = [path("report/<int:pk>", report)]
"""
        },
    ),
    example(
        Pattern.DIRECT_CALL,
        "Django FormView: the form is the view's form_class",
        [("app.InviteForm.save", F), ("app.InviteForm.save", F)],
        "`form_valid(form)` receives an instance of `form_class`, so `form.save()` is "
        "`InviteForm.save`, which mails the invitation. A form's `save` is itself a hook run "
        "in the request, so its inline mail is reported there too.",
        """
from django import forms
from django.core.mail import send_mail
from django.views.generic.edit import FormView

class InviteForm(forms.Form):
    email = forms.EmailField()

    def save(self):
        send_mail("Join us", "...", None, [self.cleaned_data["email"]])

class InviteView(FormView):
    form_class = InviteForm

    def form_valid(self, form):
        form.save()
        return super().form_valid(form)
""",
    ),
    example(
        Pattern.DIRECT_CALL,
        "Outbound HTTP from a FastAPI router and a DRF action",
        [("app.notify_partner", F), ("app.Orders.ship", F)],
        "HTTP calls are recognised by verb (`requests`, `httpx`, `aiohttp`, `urllib3`).",
        """
import aiohttp
import requests
from fastapi import APIRouter
from rest_framework import viewsets
from rest_framework.decorators import action

router = APIRouter()

async def notify_partner(order_id):
    async with aiohttp.ClientSession() as session:
        await session.post("https://partner.example/orders", json={"id": order_id})

@router.post("/orders/{order_id}/confirm")
async def confirm(order_id: int):
    await notify_partner(order_id)

class Orders(viewsets.ViewSet):
    @action(detail=True, methods=["post"])
    def ship(self, request, pk=None):
        requests.post("https://carrier.example/labels", json={"order": pk})
""",
    ),
    example(
        Pattern.DIRECT_CALL,
        "A CSV report and a thumbnail built in the request",
        [("app.ExportView.get", F), ("app.avatar", F)],
        "Reports (CSV, PDF, spreadsheets) and images (PIL) are slow work a worker could do.",
        """
import csv

from django.http import HttpResponse
from django.views import View
from PIL import Image

class ExportView(View):
    def get(self, request):
        response = HttpResponse(content_type="text/csv")
        csv.writer(response).writerow(["id", "total"])
        return response

def avatar(request):
    image = Image.open(request.FILES["avatar"])
    image.thumbnail((128, 128))
    return HttpResponse()
""",
    ),
    example(
        Pattern.DIRECT_CALL,
        "A form field's validation posting to a captcha service",
        [("app.CaptchaField.clean", F)],
        "`form.is_valid()` in the view runs `full_clean()`, which calls each field's `clean`: "
        "form, field and serializer hooks (`clean_<field>`, DRF `validate` / `create`, WTForms "
        "`pre_validate` / `populate_obj`) run inside the request that validates the form.",
        """
import requests
from django import forms

class CaptchaField(forms.Field):
    def clean(self, value):
        reply = requests.post("https://captcha.example/verify", data={"response": value})
        return reply.json()["success"]
""",
    ),
    example(
        Pattern.DIRECT_CALL,
        "A handler calling through a table of functions",
        [("app.speak_cloud", F), ("app.speak_cloud", F)],
        "`ENGINES[name](...)`, or `fn = ENGINES.get(name)` then `fn(...)`, calls one value of "
        "a module-level table, chosen at run time: each value doing slow work is a site at "
        "that call (here only `speak_cloud`; the local engine is no slow work). The call "
        "names none of them, so the site says so and `migrator apply` leaves it.",
        """
import requests
from fastapi import APIRouter

router = APIRouter()

def speak_local(text):
    return text.encode()

def speak_cloud(text):
    return requests.post("https://tts.example/speak", json={"text": text}).content

ENGINES = {"local": speak_local, "cloud": speak_cloud}

@router.post("/speech")
def speech(engine: str, text: str):
    return ENGINES[engine](text)

@router.post("/speech2")
def speech_checked(engine: str, text: str):
    speak = ENGINES.get(engine)
    if speak is None:
        return None
    return speak(text)
""",
    ),
    example(
        Pattern.DIRECT_CALL,
        "A function view whose form class is a parameter's default",
        [("app.ThemeForm.deploy", F)],
        "`form_class(request.POST)` builds the default, `ThemeForm`, unless a caller passes "
        "another: the call through the parameter resolves to it.",
        """
import requests
from django import forms
from django.http import HttpResponse

class ThemeForm(forms.Form):
    def deploy(self):
        requests.post("https://deploy.example/hook")

def edit_theme(request, form_class=ThemeForm):
    form = form_class(request.POST)
    form.deploy()
    return HttpResponse()
""",
    ),
    example(
        Pattern.DIRECT_CALL,
        "A django-modern-rpc procedure",
        [("app.report_bug", F)],
        "`@rpc_method` registers the function with the RPC entry-point view, which runs it "
        "inside the RPC request.",
        """
import requests
from modernrpc.core import rpc_method

@rpc_method(name="Bug.report")
def report_bug(summary):
    return requests.post("https://tracker.example/issues", json={"title": summary}).json()
""",
    ),
    example(
        Pattern.DIRECT_CALL,
        "A receiver of unknown type: the one project method of that name",
        [("app.Invoice.send", F)],
        "`lookup()` returns something the resolver cannot type, but the only class of the "
        "project with a `send` method mails, so `invoice.send()` is slow work in the request. "
        "The job is a guess by name: the site is never called `idempotent`. Deeper down (a "
        "helper calling `invoice.send()`), what such a method does counts as a gap of the "
        "helper (it may happen), except money or account state, which stays an effect.",
        """
from django.core.mail import send_mail
from django.db import models
from django.http import HttpResponse

from billing.lookups import lookup

class Invoice(models.Model):
    email = models.EmailField()

    def send(self):
        send_mail("Your invoice", "...", None, [self.email])

def resend_invoice(request, pk):
    invoice = lookup(pk)
    invoice.send()
    return HttpResponse()
""",
    ),
    example(
        Pattern.DIRECT_CALL,
        "A plugin chosen at run time: a base class and its overrides",
        [("unknown", F)],
        "`PROVIDERS[name]` can be any provider; the classes defining `fetch_token` are one "
        "family (a base and its subclasses) and one of them posts to the provider, so the "
        "call is reported, with job `unknown` and the candidates as the reason. A receiver "
        "typed as a base whose method is abstract (`raise NotImplementedError`, `pass`, "
        "`@abstractmethod`) runs one of the overrides the same way.",
        """
import httpx
from fastapi import APIRouter

router = APIRouter()
PROVIDERS = {}

class Provider:
    token_url = ""

    async def fetch_token(self, code):
        async with httpx.AsyncClient() as client:
            return (await client.post(self.token_url, data={"code": code})).json()

class GitHub(Provider):
    token_url = "https://github.com/login/oauth/access_token"

class Custom(Provider):
    async def fetch_token(self, code):
        return {"access_token": code}

@router.get("/callback/{name}")
async def callback(name: str, code: str):
    return await PROVIDERS[name].fetch_token(code)
""",
    ),
    example(
        Pattern.DIRECT_CALL,
        "INVALID: a method name shared by unrelated classes, not all slow",
        [],
        "`save` is defined by a share link that mails and by a model that only writes, and neither "
        "derives from the other: the receiver could be either (or a library object), so "
        "nothing is guessed. Names of the builtin containers' and loggers' methods (`get`, "
        "`update`, `info`) are never guessed either.",
        """
from django.core.mail import send_mail
from django.db import models
from django.http import HttpResponse

from notes.lookups import lookup

class ShareLink:
    def save(self):
        send_mail("Shared", "...", None, ["a@example.com"])

class Note(models.Model):
    def save(self, *args, **kwargs):
        super().save(*args, **kwargs)

def edit(request, pk):
    lookup(pk).save()
    return HttpResponse()
""",
    ),
    example(
        Pattern.DIRECT_CALL,
        "Django template tags and filters run while a page renders",
        [("app.fan_count", F), ("app.thumbnail", F), ("app.FanNode.render", F)],
        "Functions registered on a `template.Library()` (`simple_tag`, `filter`, "
        "`inclusion_tag`, `simple_block_tag`, `tag`) and the `render` of a template `Node` "
        "run inside the request that renders the template.",
        """
import requests
from django import template

register = template.Library()

@register.simple_tag
def fan_count(url):
    return requests.get(url).json()["count"]

@register.filter
def thumbnail(url):
    return requests.get(url).content

class FanNode(template.Node):
    def __init__(self, url):
        self.url = url

    def render(self, context):
        return requests.get(self.url).text

@register.tag
def fans(parser, token):
    return FanNode(token.split_contents()[1])
""",
    ),
    example(
        Pattern.DIRECT_CALL,
        "A manager's create runs the model's own save",
        [("app.Skill.save", F)],
        "Django's `QuerySet.create` saves the new object through its `save()`: the "
        "override's HTTP call runs in the view. The site is the create (`run_inside`); "
        "`migrator apply` leaves it and says how to move the fetch.",
        """
import requests
from django.db import models
from django.http import HttpResponse

class Skill(models.Model):
    name = models.CharField(max_length=40)

    def save(self, *args, **kwargs):
        requests.get("https://skills.example.com/" + self.name)
        super().save(*args, **kwargs)

def add_skill(request):
    Skill.objects.create(name=request.POST["name"])
    return HttpResponse()
""",
    ),
    example(
        Pattern.DIRECT_CALL,
        "INVALID: a management command that mails",
        [],
        "Batch work run from cron is the command's own work, not a request handler's.",
        """
from django.core.mail import send_mail
from django.core.management.base import BaseCommand

class Command(BaseCommand):
    def handle(self, *args, **options):
        send_mail("Digest", "...", None, ["team@example.com"])
""",
    ),
    example(
        Pattern.DIRECT_CALL,
        "INVALID: a handler that hands the mail to Celery",
        [],
        "`.delay` already leaves the process: nothing slow runs in the request.",
        """
from flask import Blueprint

from tasks import send_welcome

bp = Blueprint("accounts", __name__)

@bp.route("/signup", methods=["POST"])
def signup():
    send_welcome.delay("a@example.com")
    return "", 201
""",
    ),
    example(
        Pattern.DIRECT_CALL,
        "INVALID: a retry's back-off sleep is no slow work of the request",
        [],
        "A sleep written in an `except` handler runs only when the work before it raised (here "
        "a deadlock, retried): the request's normal path never waits, so the helper that "
        "holds it is not slow work to move. Slow work written in a handler (a request posted "
        "when a lookup fails) still is, and so is a sleep on the normal path.",
        """
import asyncio

from fastapi import FastAPI
from sqlalchemy.exc import OperationalError

app = FastAPI()

async def create_row(session, row):
    for attempt in range(3):
        try:
            session.add(row)
            await session.commit()
            return row
        except OperationalError:
            await session.rollback()
            await asyncio.sleep(0.1 * 2**attempt)

@app.post("/rows")
async def add_row(session, row: dict):
    await create_row(session, row)
    return {}
""",
    ),
    example(
        Pattern.DIRECT_CALL,
        "Slow work in an except handler, and a sleep on the normal path",
        [("app.report_missing", F), ("app.wait_for_build", F)],
        "Only a sleep is a back-off: a request posted in a handler is slow work whenever the "
        "lookup before it fails, and a sleep written outside every handler makes each "
        "request wait.",
        """
import time

import requests
from flask import Flask

app = Flask(__name__)

def report_missing(payload):
    try:
        return payload["id"]
    except KeyError:
        requests.post("https://errors.example.com", json=payload)

def wait_for_build():
    time.sleep(2)

@app.post("/items")
def add_item():
    report_missing({})
    wait_for_build()
    return "", 201
""",
    ),
]
