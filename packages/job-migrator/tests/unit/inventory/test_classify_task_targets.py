"""Site targets through a Django @task's enqueue(): the job is the task's function."""

from __future__ import annotations

from inventory._catalogue import Catalogue
from inventory._classify import classify
from inventory._extract import extract_source
from inventory.config import MigratorConfig
from inventory.models import Idempotency

FILES = {
    "shop/__init__.py": "",
    "shop/models.py": "from django.db import models\n\nclass Upload(models.Model):\n    pass\n",
    "shop/tasks.py": (
        "from django_tasks import task\nfrom shop.models import Upload\n\n"
        "@task()\ndef delete_upload(upload_id):\n"
        "    Upload.objects.filter(id=upload_id).delete()\n\n"
        "def undecorated(upload_id): ...\n"
    ),
    "shop/signals.py": (
        "from django.db import transaction\nfrom shop.tasks import delete_upload, undecorated\n\n"
        "def on_delete(instance):\n"
        "    transaction.on_commit(lambda: delete_upload.enqueue(instance.pk))\n"
        "    transaction.on_commit(lambda: undecorated.enqueue(instance.pk))\n"
    ),
}


def test_on_commit_of_a_task_enqueue_runs_the_task() -> None:
    summaries = []
    for path, source in FILES.items():
        module = path.removesuffix(".py").removesuffix("/__init__").replace("/", ".")
        summaries.append(extract_source(source, path, module, path.endswith("__init__.py")))
    config = MigratorConfig.from_toml("")
    sites, jobs = classify(summaries, config, Catalogue.load(config.catalogue))
    assert [s.job for s in sites] == ["shop.tasks.delete_upload", "unknown"]
    verdicts = {j.qualname: j.idempotency for j in jobs}
    assert verdicts["shop.tasks.delete_upload"] == Idempotency.IDEMPOTENT
