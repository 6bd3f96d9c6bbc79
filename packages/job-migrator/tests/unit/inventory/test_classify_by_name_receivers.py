"""Calls on receivers of unknown type, resolved by method name (issue 10, 10C).

A handler (or a helper it calls) calls ``x.m()`` on an object the resolver could not
type; the project classes defining ``m`` say what it may run. Reproductions of the
shapes: a model method on a value a helper returned, a plugin family, a name shared by
unrelated classes (not guessed), and the soundness rule (a guess is never idempotent).
"""

from __future__ import annotations

import textwrap

from inventory._catalogue import Catalogue
from inventory._classify import classify
from inventory._extract import extract_source
from inventory.config import MigratorConfig
from inventory.models import CallSite, EffectKind, Idempotency, Job, Pattern


def run(source: str) -> tuple[list[CallSite], dict[str, Job]]:
    summary = extract_source(textwrap.dedent(source), "app.py", "app")
    sites, jobs = classify([summary], MigratorConfig(), Catalogue.load(), None)
    direct = [s for s in sites if s.pattern is Pattern.DIRECT_CALL]
    return direct, {j.qualname: j for j in jobs}


def test_a_helper_calling_the_only_project_method_of_that_name_is_slow() -> None:
    """Two calls down: the view calls a project helper, the helper calls ``ticket.send()``
    on a ticket it looked up; the one ``send`` of the project mails, so the helper is
    reported as slow work of the request."""
    sites, jobs = run(
        """
        from django.core.mail import send_mail
        from django.db import models
        from django.http import HttpResponse

        from desk.lookups import find_ticket

        class Ticket(models.Model):
            def send(self, roles):
                send_mail("Ticket", "...", None, roles)

        def close_and_notify(pk):
            ticket = find_ticket(pk)
            ticket.send(["submitter"])

        def close(request, pk):
            close_and_notify(pk)
            return HttpResponse()
        """
    )
    assert [(s.job, s.location.line) for s in sites] == [("app.close_and_notify", 17)]
    # What the guessed method does may happen, not must: a gap for the verdict, never an
    # effect that makes the job idempotent or certainly non-idempotent.
    helper = jobs["app.close_and_notify"]
    assert EffectKind.EMAIL_SEND not in {e.kind for e in helper.effects}
    assert helper.idempotency is Idempotency.UNKNOWN
    assert any("send_mail" in e.message for e in helper.evidence)


def test_a_family_of_overrides_gives_an_unknown_job_with_the_candidates() -> None:
    sites, _ = run(
        """
        import requests
        from flask import Blueprint

        bp = Blueprint("hooks", __name__)
        TARGETS = {}

        class Target:
            def deliver(self, payload):
                requests.post("https://hooks.example/in", json=payload)

        class Quiet(Target):
            def deliver(self, payload):
                return None

        @bp.post("/hooks/<name>/test")
        def test_hook(name):
            TARGETS[name].deliver({"ping": True})
            return "", 204
        """
    )
    assert [(s.job, s.location.line) for s in sites] == [("unknown", 18)]
    assert (
        "deliver is defined on Quiet, Target in the project, with slow work in 1 of them"
        in sites[0].unresolved_reason
    )
    assert sites[0].idempotency is Idempotency.UNKNOWN


def test_unrelated_classes_not_all_slow_are_not_guessed() -> None:
    sites, _ = run(
        """
        from django.core.mail import send_mail
        from django.http import HttpResponse

        from desk.lookups import find

        class Mailer:
            def push(self):
                send_mail("x", "...", None, ["a@example.com"])

        class Stack:
            def push(self):
                return None

        def view(request):
            find(1).push()
            return HttpResponse()
        """
    )
    assert sites == []


def test_container_and_logger_method_names_are_never_guessed() -> None:
    sites, _ = run(
        """
        from django.core.mail import send_mail
        from django.http import HttpResponse

        class Settings:
            def update(self, values):
                send_mail("changed", "...", None, ["ops@example.com"])

        def view(request):
            request.session.update({"seen": True})
            return HttpResponse()
        """
    )
    assert sites == []


def test_a_guessed_job_that_is_idempotent_leaves_its_site_unknown() -> None:
    """The receiver may be a library object with a method of that name: a site whose job
    is a guess is never moved as ``idempotent``."""
    sites, jobs = run(
        """
        import requests
        from django.http import HttpResponse

        from shop.lookups import find_rate

        class Rate:
            def refresh_quote(self):
                self.value = requests.get("https://fx.example/eur").json()["rate"]

        def quote(request):
            find_rate("EUR").refresh_quote()
            return HttpResponse()
        """
    )
    assert [s.job for s in sites] == ["app.Rate.refresh_quote"]
    assert sites[0].idempotency is Idempotency.UNKNOWN
    assert jobs["app.Rate.refresh_quote"].idempotency is Idempotency.IDEMPOTENT


def test_a_call_of_an_abstract_method_runs_its_overrides() -> None:
    """The receiver is typed as the base (a helper's ``-> Provider`` return), whose method
    only raises NotImplementedError: the overrides are what the call runs (each a site of
    its own, the base's empty method none: ``_dispatch``)."""
    sites, _ = run(
        """
        import abc

        import httpx
        from fastapi import APIRouter

        router = APIRouter()

        class Provider(abc.ABC):
            async def get_token(self, code):
                raise NotImplementedError()

        class GitHub(Provider):
            async def get_token(self, code):
                async with httpx.AsyncClient() as client:
                    return (await client.post("https://gh.example/token", data=code)).json()

        def pick() -> Provider:
            return GitHub()

        @router.get("/callback")
        async def callback(code: str):
            provider: Provider = pick()
            return await provider.get_token(code)
        """
    )
    assert [(s.job, s.location.line) for s in sites] == [("app.GitHub.get_token", 24)]
    assert sites[0].idempotency is not Idempotency.IDEMPOTENT


def test_money_behind_a_guessed_call_stays_an_effect() -> None:
    """A possible balance change is not softened into a gap: ``unsafe`` is the stricter
    verdict, and it is never moved without a reviewer."""
    _, jobs = run(
        """
        from django.db import models

        from billing.lookups import accounts_of

        class Account(models.Model):
            balance = models.IntegerField()

            def charge_fee(self, fee):
                self.balance -= fee
                self.save()

        def charge_all(sender, instance, **kwargs):
            for account in accounts_of(instance):
                account.charge_fee(5)

        models.signals.post_save.connect(charge_all)
        """
    )
    assert jobs["app.charge_all"].idempotency is Idempotency.UNSAFE


def test_few_unrelated_classes_are_followed_deeper_down_as_possible_work() -> None:
    """Two unrelated classes define ``allocate``; one moves stock: the caller may move it."""
    _, jobs = run(
        """
        from django.db import models
        from django.db.models import F

        from shop.lookups import lines_of

        class StockRecord(models.Model):
            num_allocated = models.IntegerField()

            def allocate(self, quantity):
                StockRecord.objects.filter(pk=self.pk).update(
                    num_allocated=F("num_allocated") + quantity
                )

        class Planner:
            def allocate(self, quantity):
                return quantity

        def place(sender, instance, **kwargs):
            for line in lines_of(instance):
                line.stockrecord.allocate(line.quantity)

        models.signals.post_save.connect(place)
        """
    )
    assert jobs["app.place"].idempotency is Idempotency.UNSAFE
