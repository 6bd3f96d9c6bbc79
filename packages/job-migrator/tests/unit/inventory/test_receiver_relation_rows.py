"""The rows of a relation reached from a receiver's unannotated ``instance`` (``for rep in
instance.profile.reps.all(): rep.notify()``): typed once the classifier knows the
instance's model (the receiver's sender), along its ForeignKeys; a name no relation
declares stays a gap."""

from __future__ import annotations

from pathlib import Path

import pytest

from inventory import Idempotency
from tests.unit.inventory.fake_venv import scanned_job

MODELS = """\
import requests
from django.db import models
from django.db.models.signals import post_save


class Profile(models.Model):
    name = models.CharField(max_length=10)
    tags = models.ManyToManyField("Tag")


class Tag(models.Model):
    def notify(self):
        requests.post("https://hooks.example.com/tag")


class Rep(models.Model):
    profile = models.ForeignKey(Profile, related_name="reps", on_delete=models.CASCADE)

    def notify(self):
        requests.post("https://hooks.example.com/rep")


class Membership(models.Model):
    profile = models.ForeignKey(Profile, on_delete=models.CASCADE)


class Note(models.Model):
    # no related_name: Profile and Membership each get a ``note_set``
    profile = models.ForeignKey(Profile, on_delete=models.CASCADE)
    membership = models.ForeignKey("Membership", on_delete=models.CASCADE)

    def notify(self):
        requests.post("https://hooks.example.com/note")
"""


def _receiver(tmp_path: Path, body: str) -> tuple[Idempotency, list[str]]:
    files = {
        "shop/__init__.py": "",
        "shop/models.py": MODELS,
        "shop/receivers.py": "from django.db.models.signals import post_save\n\n"
        "from shop.models import Membership\n\n\n"
        + body
        + "\n\npost_save.connect(on_membership, sender=Membership)\n",
    }
    return scanned_job(tmp_path, files, "shop.receivers.on_membership")


@pytest.mark.parametrize(
    "body",
    [
        # tendenci's delete_corp_profile: the instance by keyword, its ForeignKey, a reverse relation
        "def on_membership(sender, **kwargs):\n"
        "    membership = kwargs['instance']\n"
        "    profile = membership.profile\n"
        "    for rep in profile.reps.all():\n"
        "        rep.notify()\n",
        "def on_membership(sender, instance, **kwargs):\n"
        "    for rep in instance.profile.reps.filter(pk__gt=0):\n"
        "        rep.notify()\n",
        # two ForeignKeys of one model, no related_name: each target has its ``note_set``
        "def on_membership(sender, instance, **kwargs):\n"
        "    for note in instance.note_set.all():\n"
        "        note.notify()\n"
        "    for note in instance.profile.note_set.all():\n"
        "        note.notify()\n",
        # a many-to-many field
        "def on_membership(sender, instance, **kwargs):\n"
        "    for tag in instance.profile.tags.all():\n"
        "        tag.notify()\n",
    ],
)
def test_rows_of_a_relation_of_the_instance_are_typed(tmp_path: Path, body: str) -> None:
    verdict, unexplained = _receiver(tmp_path, body)
    assert verdict is Idempotency.NON_IDEMPOTENT, unexplained
    assert unexplained == []


def test_a_name_no_relation_declares_stays_a_gap(tmp_path: Path) -> None:
    verdict, unexplained = _receiver(
        tmp_path,
        "def on_membership(sender, instance, **kwargs):\n"
        "    for rep in instance.profile.helpers.all():\n"
        "        rep.notify()\n",
    )
    assert verdict is Idempotency.UNKNOWN
    assert "rep.notify" in unexplained
