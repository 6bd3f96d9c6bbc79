"""``target = "django-tasks"`` end to end: apply writes Django's API, a real worker runs the task.

A small Django project (written here) starts a thread for a thumbnail; ``plan_apply`` +
``write`` turn it into ``@task`` and ``make_thumbnail.enqueue(7, 128)``. Then, with a Python
that has Django 6.1 (``QUEUE_RUNTIME_DJANGO6_PYTHON``; ``.ci/run``'s Django step sets it), the
view is called, the task is queued through ``queue_runtime.django.TaskBackend``, a
``queue-runtime worker --django-settings`` runs it (its effect: a file), and Django's
``get_result`` reports it SUCCESSFUL. A schema and Redis prefix of the test's own.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from codemods import Status, plan_apply, write
from inventory.models import (
    Argument,
    CallSite,
    Confidence,
    Idempotency,
    Inventory,
    Job,
    Location,
    Pattern,
)
from tests.e2e._queue_env import app_env, private_queue

DJANGO6 = os.environ.get("QUEUE_RUNTIME_DJANGO6_PYTHON", "")
pytestmark = [
    pytest.mark.pg,
    pytest.mark.redis,
    pytest.mark.skipif(
        not DJANGO6,
        reason="QUEUE_RUNTIME_DJANGO6_PYTHON names no Python with Django 6.1 and queue-runtime"
        " (.ci/run's Django step sets it)",
    ),
]

SETTINGS = """SECRET_KEY = "e2e-only"
USE_TZ = True
INSTALLED_APPS = ["shop"]
DATABASES = {"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": ":memory:"}}
TASKS = {"default": {"BACKEND": "queue_runtime.django.TaskBackend"}}
"""

TASKS = """from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "out"


def make_thumbnail(image_id, size):
    OUT.mkdir(exist_ok=True)
    (OUT / f"{image_id}-{size}.png").write_text("thumb")
    return f"{image_id}-{size}.png"
"""

VIEWS = """import threading

from shop.tasks import make_thumbnail


def upload(request):
    threading.Thread(target=make_thumbnail, args=(7, 128)).start()
    return "ok"
"""

CLIENT = """import json, os, time
import django

os.environ["DJANGO_SETTINGS_MODULE"] = "shop.settings"
django.setup()
from django.tasks.signals import task_enqueued
from shop.tasks import make_thumbnail
from shop.views import upload

ids = []
task_enqueued.connect(lambda sender, task_result, **kw: ids.append(task_result.id), weak=False)
upload(None)
deadline = time.monotonic() + 60
result = make_thumbnail.get_result(ids[0])
while not result.is_finished and time.monotonic() < deadline:
    time.sleep(0.1)
    result.refresh()
print(json.dumps({"status": str(result.status), "value": result.return_value,
                  "attempts": result.attempts}))
"""


def _inventory(root: Path) -> Inventory:
    job = "shop.tasks.make_thumbnail"
    args = [
        Argument(name="#0", source="7", serialisable=True),
        Argument(name="#1", source="128", serialisable=True),
    ]
    site = CallSite(
        location=Location(path="shop/views.py", line=7),
        pattern=Pattern.THREAD,
        job=job,
        arguments=args,
    )
    verdict = Job(
        qualname=job,
        location=Location(path="shop/tasks.py", line=6),
        idempotency=Idempotency.IDEMPOTENT,
        confidence=Confidence.HIGH,
        parameters=["image_id", "size"],
    )
    return Inventory(root=str(root), sites=[site], jobs=[verdict])


@pytest.fixture
def project(tmp_path: Path) -> Iterator[Path]:
    shop = tmp_path / "shop"
    shop.mkdir()
    files = {"__init__.py": "", "settings.py": SETTINGS, "tasks.py": TASKS, "views.py": VIEWS}
    for name, text in {**files, "worker.py": ""}.items():
        (shop / name).write_text(text)
    (tmp_path / "pyproject.toml").write_text('[tool.migrator]\ntarget = "django-tasks"\n')
    with private_queue(tmp_path):
        yield tmp_path


def _python(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [DJANGO6, *args],
        cwd=root,
        env=app_env(root),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_the_migrated_view_enqueues_a_django_task_that_a_worker_runs(project: Path) -> None:
    result = plan_apply(project, _inventory(project), scanner=None)
    assert [o.status for o in result.outcomes] == [Status.REWRITTEN], result.outcomes
    write(result)
    assert "from django.tasks import task\n" in (project / "shop" / "tasks.py").read_text()
    assert "make_thumbnail.enqueue(7, 128)" in (project / "shop" / "views.py").read_text()
    migrated = _python(project, "-m", "queue_runtime.cli", "migrate")
    assert migrated.returncode == 0, migrated.stderr[-3000:]
    log = project / "worker.log"
    command = [DJANGO6, "-m", "queue_runtime.cli", "worker", "shop.worker"]
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [*command, "--django-settings", "shop.settings"],
            cwd=project,
            env=app_env(project),
            stdout=out,
            stderr=out,
        )
    try:
        client = _python(project, "-c", CLIENT)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    assert client.returncode == 0, client.stderr[-3000:] + log.read_text()[-3000:]
    found = json.loads(client.stdout.strip().splitlines()[-1])
    assert found == {"status": "SUCCESSFUL", "value": "7-128.png", "attempts": 1}, log.read_text()
    assert (project / "out" / "7-128.png").read_text() == "thumb"
