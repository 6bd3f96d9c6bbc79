"""A manager class whose base is ``Manager.from_queryset(QS)`` has the queryset's methods.

Django's docs ("Creating a manager with QuerySet methods"): ``from_queryset()`` "returns a
subclass of your base Manager with a copy of the custom QuerySet methods". The scan read
``objects = M.from_queryset(QS)()`` already; a class deriving from the call
(``class ScheduledJobsManager(BaseManager.from_queryset(RestrictedQuerySet))``, nautobot has
34 of them in the census) kept the call's text as its base, so ``cls.objects.update_or_create``
and the queryset's own methods were unresolved and the jobs ``unknown``."""

from __future__ import annotations

from collections.abc import Callable

from inventory import Idempotency, Inventory

Scanner = Callable[[dict[str, str]], Inventory]  # the scan_project fixture (conftest)

APP = """import threading

from django.core.mail import send_mail
from django.db import models
from django.db.models.manager import BaseManager


class RestrictedQuerySet(models.QuerySet):
    def restrict(self, user):
        return self.filter(owner=user)

    def announce(self):
        send_mail("New", "rows", "a@example.com", ["b@example.com"])
        return self


class JobsManager(BaseManager.from_queryset(RestrictedQuerySet)):
    pass


class Stamp(models.Model):
    ident = models.IntegerField()
    objects = JobsManager()

    @classmethod
    def update_changed(cls):
        cls.objects.update_or_create(ident=1, defaults={"ident": 2})
        return cls.objects.restrict(None).count()

    @classmethod
    def shout(cls):
        cls.objects.announce()


def view(request):
    threading.Thread(target=Stamp.update_changed).start()
    threading.Thread(target=Stamp.shout).start()
"""


def test_the_manager_has_the_querysets_methods(scan_project: Scanner) -> None:
    jobs = {j.qualname: j for j in scan_project({"app.py": APP}).jobs}
    changed = jobs["app.Stamp.update_changed"]
    assert changed.idempotency is Idempotency.IDEMPOTENT, changed.evidence
    assert "django.db.models.QuerySet.update_or_create" in {e.api for e in changed.effects}


def test_a_queryset_method_with_an_effect_is_followed(scan_project: Scanner) -> None:
    shout = {j.qualname: j for j in scan_project({"app.py": APP}).jobs}["app.Stamp.shout"]
    assert shout.idempotency is Idempotency.NON_IDEMPOTENT, shout.evidence
    assert any("send_mail" in e.api for e in shout.effects)
