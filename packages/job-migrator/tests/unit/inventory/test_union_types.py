"""Union types: ``x = a or b`` / ``a if c else b`` with operands of different known types.

A call on such a receiver runs the method of one of the members: each member's method is
followed (as for a single type), and the call is explained only when all of them are.
"""

from __future__ import annotations

import textwrap

from inventory._catalogue import Catalogue
from inventory._classify import classify
from inventory._classify._index import union_members
from inventory._extract import extract_source
from inventory._extract.values._values import union_parts, union_type
from inventory.config import MigratorConfig
from inventory.models import EffectKind, Idempotency
from inventory.summary import FileSummary

_MODELS = """
import requests
from django.db import models

class Shelf(models.Model):
    slug = models.SlugField()

    def path(self):
        return (self.slug,)

class Library(models.Model):
    slug = models.SlugField()

    def path(self):
        return ("lib", self.slug)

class Loud(models.Model):
    def path(self):
        requests.post("https://hooks.example.com/path")
        return ()

class Book(models.Model):
    shelf = models.ForeignKey(Shelf, null=True, on_delete=models.CASCADE)
    library = models.ForeignKey(Library, on_delete=models.CASCADE)
    loud = models.ForeignKey(Loud, null=True, on_delete=models.CASCADE)
    slug = models.SlugField()

    def where(self):
        owner = self.shelf or self.library
        return (*owner.path(), self.slug)

    def where_loud(self):
        owner = self.shelf if self.shelf_id else self.loud
        return owner.path()

    def where_unknown(self, other):
        owner = self.shelf or self.library or other.thing
        return owner.path()

    def where_maybe(self):
        owner = self.shelf or None
        return owner.path()
"""

_JOBS = """
from django.db.models.signals import post_save
from django.dispatch import receiver

from lib.models import Book


@receiver(post_save, sender=Book)
def refresh(sender, instance, **kwargs):
    instance.where()


@receiver(post_save, sender=Book)
def refresh_loud(sender, instance, **kwargs):
    instance.where_loud()


@receiver(post_save, sender=Book)
def refresh_unknown(sender, instance, **kwargs):
    instance.where_unknown(kwargs)
"""


def _summaries() -> list[FileSummary]:
    return [
        extract_source("", "lib/__init__.py", "lib"),
        extract_source(textwrap.dedent(_MODELS), "lib/models.py", "lib.models"),
        extract_source(textwrap.dedent(_JOBS), "lib/jobs.py", "lib.jobs"),
    ]


def _calls(summaries: list[FileSummary], qualname: str) -> list[str]:
    (fn,) = [f for s in summaries for f in s.functions if f.qualname == qualname]
    return [c.target for c in fn.calls]


def test_union_type_flattens_and_bounds() -> None:
    union = union_type(["a.A", "b.B", "a.A"])
    assert union_parts(union) == ["a.A", "b.B"]
    assert union_type([union, "c.C"]) == union_type(["a.A", "b.B", "c.C"])
    assert union_type(["a.A", ""]) == ""  # an operand of unknown type
    assert union_type(["a.A", "a.A"]) == "a.A"
    assert union_type([f"m.C{i}" for i in range(5)]) == ""  # more than 4 members
    assert union_type(["a.A", "pkg.f()"]) == ""


def test_union_members_put_the_rest_of_the_name_on_each() -> None:
    name = f"{union_type(['a.A', 'b.c.B'])}.path"
    assert union_members(name) == ["a.A.path", "b.c.B.path"]
    assert union_members("a.A.path") is None


def test_or_of_two_foreign_keys_is_their_union() -> None:
    summaries = _summaries()
    (target,) = _calls(summaries, "lib.models.Book.where")
    assert union_members(target) == ["lib.models.Shelf.path", "lib.models.Library.path"]
    (loud,) = _calls(summaries, "lib.models.Book.where_loud")
    assert union_members(loud) == ["lib.models.Shelf.path", "lib.models.Loud.path"]


def test_an_operand_of_unknown_type_keeps_the_call_untyped() -> None:
    summaries = _summaries()
    assert _calls(summaries, "lib.models.Book.where_unknown") == ["?.path"]
    assert _calls(summaries, "lib.models.Book.where_maybe") == ["lib.models.Shelf.path"]


def test_a_call_on_a_union_follows_every_member() -> None:
    _, jobs = classify(_summaries(), MigratorConfig(), Catalogue.load(), None)
    verdicts = {j.qualname.rsplit(".", 1)[-1]: j for j in jobs}
    quiet = verdicts["refresh"]
    assert quiet.idempotency == Idempotency.IDEMPOTENT, quiet.effects
    loud = verdicts["refresh_loud"]
    assert EffectKind.HTTP_POST in {e.kind for e in loud.effects}
    assert loud.idempotency != Idempotency.IDEMPOTENT
    assert verdicts["refresh_unknown"].idempotency != Idempotency.IDEMPOTENT


def test_an_attribute_defaulted_to_another_class_is_a_union() -> None:
    source = """
        import requests

        class Quiet:
            def push(self, item):
                return item

        class Noisy:
            def push(self, item):
                requests.post("https://example.com", json=item)

        class Sender:
            def __init__(self, quiet: Quiet | None = None):
                self.sink = quiet or Noisy()

            def send(self, item):
                self.sink.push(item)
        """
    summary = extract_source(textwrap.dedent(source), "app.py", "app")
    (target,) = _calls([summary], "app.Sender.send")
    assert union_members(target) == ["app.Quiet.push", "app.Noisy.push"]


def test_a_foreign_key_named_by_a_string_is_the_model_of_that_name() -> None:
    summaries = _summaries()
    source = """
        from django.db import models

        class Pin(models.Model):
            shelf = models.ForeignKey("lib.Shelf", null=True, on_delete=models.CASCADE)
            library = models.ForeignKey("lib.Library", on_delete=models.CASCADE)

            def where(self):
                owner = self.shelf or self.library
                return owner.path()
        """
    pins = extract_source(textwrap.dedent(source), "lib/pins.py", "lib.pins")
    (target,) = _calls([pins], "lib.pins.Pin.where")
    assert union_members(target) == ["__model__.lib.Shelf.path", "__model__.lib.Library.path"]
    jobs = """
        from django.db.models.signals import post_save
        from django.dispatch import receiver

        from lib.pins import Pin


        @receiver(post_save, sender=Pin)
        def refresh_pin(sender, instance, **kwargs):
            instance.where()
        """
    starter = extract_source(textwrap.dedent(jobs), "lib/pin_jobs.py", "lib.pin_jobs")
    _, found = classify([*summaries, pins, starter], MigratorConfig(), Catalogue.load(), None)
    (job,) = [j for j in found if j.qualname == "lib.pin_jobs.refresh_pin"]
    assert job.idempotency == Idempotency.IDEMPOTENT, job.evidence


def test_a_conditional_with_an_operand_of_unknown_type_stays_untyped() -> None:
    source = """
        class Quiet:
            def push(self, item):
                return item

        def send(item, other, flag):
            sink = Quiet() if flag else other
            sink.push(item)
            maybe = Quiet() if flag else None
            maybe.push(item)
        """
    summary = extract_source(textwrap.dedent(source), "app.py", "app")
    pushes = [t for t in _calls([summary], "app.send") if t.endswith(".push")]
    assert pushes == ["?.push", "app.Quiet.push"]
