"""A model's FileField holds Django's FieldFile: ``instance.file.delete()`` removes the
stored file (converges) even in a project where some class defines its own ``delete``."""

from __future__ import annotations

from collections.abc import Callable

from inventory import EffectKind, Idempotency, Inventory

Scanner = Callable[[dict[str, str]], Inventory]  # the scan_project fixture (conftest)

FILES = {
    "docs/__init__.py": "",
    "docs/models.py": (
        "import requests\n"
        "from django.db import models\n"
        "from django.db.models.signals import post_delete\n"
        "from django.dispatch import receiver\n\n\n"
        "class Upload(models.Model):\n"
        "    file = models.FileField(upload_to='uploads/')\n"
        "    preview = models.ImageField(upload_to='previews/', null=True)\n\n\n"
        "class Mirror:\n"
        "    def delete(self, name):\n"
        "        requests.post('https://mirror.example.com/forget', json={'name': name})\n\n\n"
        "@receiver(post_delete, sender=Upload)\n"
        "def drop_files(sender, instance, **kwargs):\n"
        "    instance.file.delete(save=False)\n"
        "    if instance.preview:\n"
        "        instance.preview.delete(save=False)\n\n\n"
        "def replace(upload_id, name, content):\n"
        "    upload = Upload.objects.get(pk=upload_id)\n"
        "    upload.file.save(name, content)\n\n\n"
        "def forget(thing):\n"
        "    thing.delete('x')\n\n\n"
        "def view(request):\n"
        "    import threading\n"
        "    threading.Thread(target=replace, args=(1, 'a.txt', request.body)).start()\n"
        "    threading.Thread(target=forget, args=(request.user,)).start()\n"
    ),
}


def _jobs(scan_project: Scanner) -> dict[str, tuple[Idempotency, set[EffectKind]]]:
    inventory = scan_project(FILES)
    return {j.qualname: (j.idempotency, {e.kind for e in j.effects}) for j in inventory.jobs}


def test_deleting_a_receivers_stored_files_converges(scan_project: Scanner) -> None:
    verdict, effects = _jobs(scan_project)["docs.models.drop_files"]
    assert verdict is Idempotency.IDEMPOTENT
    assert effects == {EffectKind.DB_DELETE}


def test_saving_new_content_into_a_file_field_is_repeated_by_a_retry(scan_project: Scanner) -> None:
    verdict, effects = _jobs(scan_project)["docs.models.replace"]
    assert EffectKind.FILE_APPEND in effects
    assert verdict is not Idempotency.IDEMPOTENT


def test_a_delete_on_an_untyped_receiver_still_may_be_the_projects(scan_project: Scanner) -> None:
    # ``thing`` could be a Mirror, whose delete posts: never taken for a FieldFile.
    verdict, _ = _jobs(scan_project)["docs.models.forget"]
    assert verdict is not Idempotency.IDEMPOTENT
