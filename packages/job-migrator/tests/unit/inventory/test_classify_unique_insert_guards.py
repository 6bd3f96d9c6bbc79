"""Inserts refused on a repeat by a unique constraint -> ``needs_key`` (issue 10, 10C).

``Preferences.objects.create(user=instance)`` with ``user`` a OneToOneField: a second
run with the same inputs fails on the constraint instead of adding a row. The guard
holds only while the constraint exists and every field of it comes from the inputs.
"""

from __future__ import annotations

import textwrap

import pytest

from inventory._catalogue import Catalogue
from inventory._classify import classify
from inventory._extract import extract_source
from inventory.config import MigratorConfig
from inventory.models import Idempotency

MODELS = """
from django.conf import settings
from django.db import models

class Preferences(models.Model):
    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE)

class Badge(models.Model):
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE)
    kind = models.CharField(max_length=20)

    class Meta:
        unique_together = ("user", "kind")

class Coupon(models.Model):
    code = models.CharField(max_length=20, unique=True)

class Invite(models.Model):
    email = models.EmailField()
    team = models.IntegerField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["email", "team"], name="one_invite"),
            models.UniqueConstraint(fields=["email"], condition=models.Q(team=0), name="x"),
        ]

class Note(models.Model):
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE)
"""


def verdicts(jobs_source: str) -> dict[str, Idempotency]:
    source = MODELS + textwrap.dedent(jobs_source)
    summary = extract_source(source, "app.py", "app")
    receivers = [f.name for f in summary.functions if f.params[:1] == ["sender"]]
    connects = "".join(f"models.signals.post_save.connect({r})\n" for r in receivers)
    summary = extract_source(source + connects, "app.py", "app")
    _, jobs = classify([summary], MigratorConfig(), Catalogue.load(), None)
    return {j.qualname.removeprefix("app."): j.idempotency for j in jobs}


def test_unique_keys_are_extracted() -> None:
    summary = extract_source(MODELS, "app.py", "app")
    keys = {c.name: c.unique_keys for c in summary.classes}
    assert keys["Preferences"] == ["user"]
    assert keys["Badge"] == ["user+kind"]
    assert keys["Coupon"] == ["code"]
    assert keys["Invite"] == ["email+team"]  # the conditional constraint is not a key
    assert keys["Note"] == []


@pytest.mark.parametrize(
    ("job", "body"),
    [
        ("one_to_one", "Preferences.objects.create(user=instance)"),
        ("together_with_a_literal", 'Badge.objects.create(user=instance, kind="first")'),
        ("together_by_id", "Badge.objects.create(user_id=instance.pk, kind=kind)"),
        ("unique_field", "Coupon.objects.create(code=code)"),
        ("constraint", "Invite.objects.create(email=email, team=team)"),
    ],
)
def test_an_insert_on_a_unique_key_from_the_inputs_needs_a_key(job: str, body: str) -> None:
    found = verdicts(
        f"def {job}(sender, instance, kind='', code='', email='', team=0):\n    {body}\n"
    )
    assert found[job] is Idempotency.NEEDS_KEY


@pytest.mark.parametrize(
    ("job", "body"),
    [
        ("no_unique_key", "Note.objects.create(user=instance)"),
        ("part_of_the_key", "Badge.objects.create(user=instance)"),
        ("minted", 'Coupon.objects.create(code=f"{instance.pk}-{uuid.uuid4()}")'),
        ("not_from_inputs", "Coupon.objects.create(code=make_code())"),
    ],
)
def test_an_insert_a_repeat_can_repeat_is_not_guarded(job: str, body: str) -> None:
    found = verdicts(
        f"import uuid\nfrom codes import make_code\n\ndef {job}(sender, instance):\n    {body}\n"
    )
    assert found[job] is Idempotency.NON_IDEMPOTENT
