"""Sites that run a task framework's task in the caller, moved or left as apply says.

A Django task run inline is written ``send.call(x)`` (Django 6 tasks are not called
directly): it moves as ``send.enqueue(x)``, Django's own API, never as
``send.call.enqueue(x)``, which is no API and would break the request. A broker's task
run in the caller (Celery's ``apply`` / ``run``, Huey's ``call_local``, Dramatiq's ``fn``)
runs there on purpose and already has a queue of its own: apply leaves it, and its reason
says so. Each case is the real scanner over a small project, then apply's own plan.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from codemods import ApplyOptions, ApplyResult, SiteOutcome, Status, plan_apply
from inventory import Inventory, scan

TASKS = """\
import dramatiq
from celery import shared_task
from django.tasks import task
from huey.contrib.djhuey import db_task
from PIL import Image


def render(path):
    with Image.open(path) as image:
        image.thumbnail((128, 128))
        image.save(path + ".thumb.png")


@task
def django_thumbnail(path):
    render(path)


@shared_task
def celery_thumbnail(path):
    render(path)


@db_task()
def huey_thumbnail(path):
    render(path)


@dramatiq.actor
def dramatiq_thumbnail(path):
    render(path)
"""


def view(body: str, is_async: bool = False, declared: bool = False) -> str:
    """The view running ``body``; ``declared``: its ``path`` is a URL parameter declared
    ``str`` (proven JSON), else read from the form (not proven)."""
    params = "request, path: str" if declared else "request"
    header = f"async def upload({params}):" if is_async else f"def upload({params}):"
    read = "" if declared else '    path = request.POST["path"]\n'
    return (
        "import threading\n\n"
        "from django.http import JsonResponse\n\n"
        "from app import tasks\n\n\n"
        f"{header}\n"
        f"{read}"
        f"    {body}\n"
        '    return JsonResponse({"ok": True})\n'
    )


URLS = (
    "from django.urls import path\n\n"
    "from app.views import upload\n\n"
    'urlpatterns = [path("upload/<path>", upload)]\n'
)


def project(root: Path, views: str) -> tuple[Inventory, ApplyResult]:
    """The app with ``views`` as its views module, scanned, and apply's plan for it."""
    files = {
        "app/__init__.py": "",
        "app/tasks.py": TASKS,
        "app/views.py": views,
        "app/urls.py": URLS,
    }
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    inventory = scan(root, use_cache=False, write=False, jobs=1)
    return inventory, plan_apply(root, inventory, ApplyOptions())


def applied(
    root: Path, body: str, is_async: bool = False, declared: bool = False
) -> tuple[SiteOutcome, str]:
    """The one site's outcome in the view, and the view as apply would write it."""
    written = view(body, is_async, declared)
    _, result = project(root, written)
    [outcome] = [o for o in result.outcomes if o.site.location.path == "app/views.py"]
    changed = {c.path: c.after for c in result.changes}
    after = changed.get("app/views.py", written)
    ast.parse(after)  # a codemod never writes code that does not parse
    return outcome, after


def test_a_django_task_run_with_call_moves_as_its_enqueue(tmp_path: Path) -> None:
    outcome, after = applied(tmp_path, "tasks.django_thumbnail.call(path)", declared=True)
    assert outcome.status is Status.REWRITTEN, outcome.reason
    assert "tasks.django_thumbnail.enqueue(path)" in after
    assert ".call" not in after


def test_a_django_task_handed_to_a_thread_by_call_moves_as_its_enqueue(tmp_path: Path) -> None:
    """Django's task object has no ``.options()``: the thread's shape is not written."""
    body = "threading.Thread(target=tasks.django_thumbnail.call, args=(path,)).start()"
    outcome, after = applied(tmp_path, body, declared=True)
    assert outcome.status is Status.REWRITTEN, outcome.reason
    assert "    tasks.django_thumbnail.enqueue(path)\n" in after
    assert ".call" not in after and ".options(" not in after


def test_a_django_task_with_an_unproven_argument_stays_saying_what_to_pass(
    tmp_path: Path,
) -> None:
    """Django's ``enqueue`` refuses what is not JSON with ``TypeError``: the call stays, and
    the reason names Django's API, not a queue_runtime target the job cannot have."""
    body = "tasks.django_thumbnail.call(path)"
    outcome, after = applied(tmp_path, body)
    assert outcome.status is Status.SKIPPED
    assert "path is not proven JSON; the job is a Django task" in outcome.reason
    assert "queue-runtime" not in outcome.reason
    assert body in after


def test_an_awaited_acall_of_a_django_task_is_left_saying_what_to_write(tmp_path: Path) -> None:
    body = "await tasks.django_thumbnail.acall(path)"
    outcome, after = applied(tmp_path, body, is_async=True)
    assert outcome.status is Status.SKIPPED
    assert "`await tasks.django_thumbnail.aenqueue(...)`" in outcome.reason
    assert body in after


@pytest.mark.parametrize(
    ("body", "broker", "method", "enqueue"),
    [
        ("tasks.celery_thumbnail.apply((path,))", "Celery", "apply", ".delay(...)"),
        ("tasks.celery_thumbnail.run(path)", "Celery", "run", ".delay(...)"),
        ("tasks.huey_thumbnail.call_local(path)", "Huey", "call_local", "(...)"),
        ("tasks.dramatiq_thumbnail.fn(path)", "Dramatiq", "fn", ".send(...)"),
        (
            "threading.Thread(target=tasks.celery_thumbnail.apply, args=((path,),)).start()",
            "Celery",
            "apply",
            ".delay(...)",
        ),
    ],
)
def test_a_brokers_task_run_in_the_request_is_left_on_its_own_queue(
    tmp_path: Path, body: str, broker: str, method: str, enqueue: str
) -> None:
    outcome, after = applied(tmp_path, body)
    assert outcome.status is Status.SKIPPED
    assert f"is a task of {broker}, and `.{method}(...)` runs it here on purpose" in outcome.reason
    task = body.split(f".{method}")[0].rpartition("=")[2]
    assert f"`{task}{enqueue}`" in outcome.reason  # its own queue's enqueue, by its name
    assert body in after


@pytest.mark.parametrize(
    ("body", "broker", "enqueue"),
    [
        ("tasks.celery_thumbnail(path)", "Celery", "`tasks.celery_thumbnail.delay(...)`"),
        ("tasks.dramatiq_thumbnail(path)", "Dramatiq", "`tasks.dramatiq_thumbnail.send(...)`"),
        (
            "threading.Thread(target=tasks.celery_thumbnail, args=(path,)).start()",
            "Celery",
            "`tasks.celery_thumbnail.delay(...)`",
        ),
    ],
)
def test_a_brokers_task_called_as_a_function_is_not_wrapped_in_a_second_queue(
    tmp_path: Path, body: str, broker: str, enqueue: str
) -> None:
    """Celery and Dramatiq run a task called as a function in the caller. ``@job`` stacked
    on the task object would hide ``.delay`` / ``.send`` from every other caller of it (an
    ``AttributeError`` in another request): the task file is left alone, and the reason
    names its own queue's enqueue."""
    outcome, after = applied(tmp_path, body, declared=True)
    assert outcome.status is Status.SKIPPED, outcome.reason
    assert f"is a task of {broker}, run here in the request as a function" in outcome.reason
    assert enqueue in outcome.reason
    assert body in after
    assert (tmp_path / "app/tasks.py").read_text() == TASKS


def test_following_the_reason_takes_the_call_out_of_the_request(tmp_path: Path) -> None:
    """Written as the reason says, the call is the task's own enqueue: no site is left
    in the view for apply to move or refuse."""
    inventory, result = project(tmp_path, view("tasks.celery_thumbnail.delay(path)", declared=True))
    in_view = [o for o in result.outcomes if o.site.location.path == "app/views.py"]
    assert all(o.status is not Status.REWRITTEN for o in in_view)
    assert not [
        s
        for s in inventory.sites
        if s.location.path == "app/views.py"
        and s.job.endswith("celery_thumbnail")
        and s.pattern.value != "enqueue"
    ]
    assert not result.changes
