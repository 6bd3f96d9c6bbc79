"""A project's own FileField subclass: a model instance holds the field's value class, its
``attr_class`` (Django's ``FieldFile`` unless the subclass sets another), not the field.
``artifact.file.read()`` reads a stored file; a value class of the project's is followed
(here its ``delete`` posts); an ``attr_class`` the scan cannot name types nothing."""

from __future__ import annotations

from collections.abc import Callable

from inventory import Idempotency, Inventory

Scanner = Callable[[dict[str, str]], Inventory]  # the scan_project fixture (conftest)

FIELDS = """import requests
from django.db.models import FileField
from django.db.models.fields.files import FieldFile


class MirroredFile(FieldFile):
    def delete(self, save=True):
        requests.post("https://mirror.example.com/forget", json={"name": self.name})


class ArtifactFileField(FileField):
    def pre_save(self, model_instance, add):
        return super().pre_save(model_instance, add)


class MirroredFileField(FileField):
    attr_class = MirroredFile


class PickedFileField(FileField):
    attr_class = MirroredFile if requests else FieldFile


class Outbox:
    def delete(self, save=True):
        requests.post("https://outbox.example.com/drop")
"""
MODELS = """import threading

from django.db import models
from django.db.models.signals import post_delete
from django.dispatch import receiver

from app import fields


class Artifact(models.Model):
    file = fields.ArtifactFileField(upload_to="a/")
    mirrored = fields.MirroredFileField(upload_to="m/")
    picked = fields.PickedFileField(upload_to="p/")


@receiver(post_delete, sender=Artifact)
def drop_stored(sender, instance, **kwargs):
    instance.file.delete(save=False)


@receiver(post_delete, sender=Artifact)
def drop_mirrored(sender, instance, **kwargs):
    instance.mirrored.delete(save=False)


def read(pk):
    artifact = Artifact.objects.get(pk=pk)
    data = artifact.file.read()
    artifact.file.close()
    return data


def drop_picked(pk):
    artifact = Artifact.objects.get(pk=pk)
    artifact.picked.delete(save=False)


def drop_picked_chained(pk):
    Artifact.objects.get(pk=pk).picked.delete(save=False)


def view(request):
    threading.Thread(target=read, args=(1,)).start()
    threading.Thread(target=drop_picked, args=(1,)).start()
    threading.Thread(target=drop_picked_chained, args=(1,)).start()
"""


def _verdicts(scan_project: Scanner) -> dict[str, Idempotency]:
    inventory = scan_project(
        {"app/__init__.py": "", "app/fields.py": FIELDS, "app/models.py": MODELS}
    )
    return {j.qualname: j.idempotency for j in inventory.jobs}


def test_a_project_file_field_holds_djangos_field_file(scan_project: Scanner) -> None:
    verdicts = _verdicts(scan_project)
    assert verdicts["app.models.read"] is Idempotency.IDEMPOTENT
    assert verdicts["app.models.drop_stored"] is Idempotency.IDEMPOTENT


def test_the_value_class_a_field_sets_is_followed(scan_project: Scanner) -> None:
    assert _verdicts(scan_project)["app.models.drop_mirrored"] is Idempotency.NON_IDEMPOTENT


def test_a_value_class_the_scan_cannot_name_types_nothing(scan_project: Scanner) -> None:
    # ``attr_class`` picked at import time: the delete may be MirroredFile's (it posts)
    verdicts = _verdicts(scan_project)
    assert verdicts["app.models.drop_picked"] is not Idempotency.IDEMPOTENT
    # nor is the field of a row a getter loaded taken for a queryset (whose delete converges)
    assert verdicts["app.models.drop_picked_chained"] is not Idempotency.IDEMPOTENT
