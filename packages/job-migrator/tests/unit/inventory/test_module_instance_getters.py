"""Getters of module-level instances, and hand-offs of a method of what a call returned.

``return _client`` with ``_client = Client()`` at module level, and the lazy singleton
(``_layer: Optional[Layer] = None``; ``global _layer; if _layer is None: _layer = ...;
return _layer``) are the commonest way Python code hands out a service object; a call
of ``get_client().send(...)`` in a view runs that class's method. And ``layer =
get_layer(); asyncio.create_task(layer.save(step))`` (or a ``lambda``, a ``partial``)
runs the method of what ``get_layer()`` returns, as the same call written on its own
does. Before, each of these was a guessed site ("the receiver's type is not known
here") or an ``unknown`` job.
"""

from __future__ import annotations

import textwrap

from inventory._catalogue import Catalogue
from inventory._classify import classify
from inventory._extract import extract_source
from inventory.config import MigratorConfig
from inventory.models import CallSite, Idempotency, Job

_SERVICES = """
import os
from typing import Optional

import httpx


class Store:
    def put(self, step):
        httpx.put(f"https://store.example.com/{step['id']}", json=step)


class BaseLayer:
    async def save(self, step: dict) -> None:
        raise NotImplementedError


class RemoteLayer(BaseLayer):
    async def save(self, step: dict) -> None:
        async with httpx.AsyncClient() as client:
            await client.put(f"https://layer.example.com/{step['id']}", json=step)


class Mailer:
    def send(self, to):
        httpx.post("https://mail.example.com/send", json={"to": to})


_store = Store()


def get_store():
    return _store


_layer: Optional[BaseLayer] = None


def get_layer():
    global _layer
    if _layer is None and os.environ.get("LAYER_URL"):
        _layer = RemoteLayer()
    return _layer


_mailer = None


def get_mailer():
    global _mailer
    if _mailer is None:
        _mailer = Mailer()
    return _mailer


def store_of(_store):
    return _store
"""

_VIEWS = """
import asyncio
import threading
from functools import partial

from django.db import transaction
from fastapi import FastAPI

from app.services import get_layer, get_mailer, get_store, store_of

app = FastAPI()


@app.post("/put")
def put(step: dict):
    get_store().put(step)
    return {}


@app.post("/mail")
def mail(to: str):
    get_mailer().send(to)
    return {}


@app.post("/task")
async def task(step: dict):
    layer = get_layer()
    if layer:
        asyncio.create_task(layer.save(step))
    return {}


@app.post("/thread")
def thread(step: dict):
    store = get_store()
    threading.Thread(target=lambda: store.put(step)).start()
    return {}


@app.post("/commit")
def commit(step: dict):
    store = get_store()
    transaction.on_commit(partial(store.put, step))
    return {}


@app.post("/shadowed")
def shadowed(step: dict, other):
    store_of(other).put(step)
    return {}
"""


def _scan(
    module: str = "services", source: str = _SERVICES, views: str = _VIEWS
) -> tuple[dict[str, list[CallSite]], dict[str, Job]]:
    summaries = [
        extract_source("", "app/__init__.py", "app"),
        extract_source(textwrap.dedent(source), f"app/{module}.py", f"app.{module}"),
        extract_source(textwrap.dedent(views), "app/views.py", "app.views"),
    ]
    sites, jobs = classify(summaries, MigratorConfig(), Catalogue.load(), None)
    by_view: dict[str, list[CallSite]] = {}
    for site in sites:
        by_view.setdefault(site.enclosing_function.rpartition(".")[2], []).append(site)
    return by_view, {job.qualname: job for job in jobs}


def test_a_getter_of_a_module_instance_gives_that_class() -> None:
    sites, jobs = _scan()
    [site] = sites["put"]
    assert site.job == "app.services.Store.put" and not site.unresolved_reason
    assert jobs["app.services.Store.put"].idempotency is Idempotency.IDEMPOTENT


def test_a_lazy_singleton_assigned_under_global_gives_what_it_builds() -> None:
    sites, jobs = _scan()
    [site] = sites["mail"]
    assert site.job == "app.services.Mailer.send"
    assert jobs["app.services.Mailer.send"].idempotency is Idempotency.NON_IDEMPOTENT


def test_an_annotated_lazy_singleton_gives_its_declared_class_and_its_overrides() -> None:
    # _layer: Optional[BaseLayer]: the declared class; RemoteLayer's save is followed as
    # an override, so the PUT decides the verdict.
    sites, jobs = _scan()
    [site] = sites["task"]
    assert site.job == "app.services.BaseLayer.save" and not site.unresolved_reason
    assert jobs["app.services.BaseLayer.save"].idempotency is Idempotency.IDEMPOTENT


def test_a_lambda_and_a_partial_over_a_method_of_a_returned_object_resolve() -> None:
    sites, _ = _scan()
    [thread] = sites["thread"]
    [commit] = sites["commit"]
    assert thread.job == commit.job == "app.services.Store.put"


def test_a_parameter_named_like_the_module_instance_is_not_it() -> None:
    # store_of(_store) returns its parameter, whatever the caller passes: not the
    # module's Store. The call stays a guess, as any call on an unknown receiver.
    sites, _ = _scan()
    found = sites.get("shadowed", [])
    assert all(s.unresolved_reason for s in found)


_REBOUND = """
from typing import Optional

import requests


class Backend:
    def charge(self, order_id):
        requests.get(f"https://pay.example.com/orders/{order_id}")


class StripeBackend(Backend):
    def charge(self, order_id):
        requests.post("https://api.stripe.com/v1/charges", json={"order": order_id})


class Fake:
    def charge(self, order_id):
        requests.post("https://fake.example.com/charges", json={"order": order_id})


_plain = Backend()


def get_plain():
    return _plain


def use_fake():
    global _plain
    _plain = Fake()


_declared: Optional[Backend] = None


def get_declared():
    global _declared
    if _declared is None:
        _declared = Backend()
    return _declared


def go_live():
    global _declared
    _declared = StripeBackend()


if requests.__version__:
    _branched = Backend()
else:
    _branched = Fake()


def get_branched():
    return _branched
"""

_PAY_VIEWS = """
from flask import Flask

from app.pay import get_branched, get_declared, get_plain

app = Flask(__name__)


@app.post("/plain/<oid>")
def plain(oid):
    get_plain().charge(oid)
    return "ok"


@app.post("/declared/<oid>")
def declared(oid):
    get_declared().charge(oid)
    return "ok"


@app.post("/branched/<oid>")
def branched(oid):
    get_branched().charge(oid)
    return "ok"
"""


def _pay_sites() -> dict[str, list[CallSite]]:
    return _scan("pay", _REBOUND, _PAY_VIEWS)[0]


def test_a_module_instance_another_function_rebinds_is_not_taken_for_its_first_class() -> None:
    # use_fake() puts a Fake (no Backend at all) there at run time: calling the getter's
    # value a Backend would hide Fake's POST. It stays a guess, never idempotent.
    [site] = _pay_sites()["plain"]
    assert site.unresolved_reason and site.idempotency is not Idempotency.IDEMPOTENT


def test_an_annotated_global_rebound_elsewhere_keeps_its_declared_class_and_overrides() -> None:
    # go_live() binds a StripeBackend, a Backend as declared: both charges are followed.
    jobs = {s.job for s in _pay_sites()["declared"]}
    assert {"app.pay.Backend.charge", "app.pay.StripeBackend.charge"} <= jobs


def test_a_module_instance_bound_in_the_branches_of_an_if_is_not_one_class() -> None:
    [site] = _pay_sites()["branched"]
    assert site.unresolved_reason and site.idempotency is not Idempotency.IDEMPOTENT
