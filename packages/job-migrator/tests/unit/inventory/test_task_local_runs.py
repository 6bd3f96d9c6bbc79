"""A broker task run in the caller: Celery's ``apply`` / ``run``, Huey's ``call_local``,
Dramatiq's ``actor.fn``.

Each framework documents one call that runs the task's function where it is called, with
no broker: a view that calls it mails (or renders) inside the request, exactly as a plain
call of the function would. The scan follows those calls into the task's body; it never
reads one framework's local run on another framework's task (a method the task object
does not have), nor an enqueue (``.delay``, ``.apply_async``) as a local run.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from inventory import Inventory, Pattern

Scanner = Callable[[dict[str, str]], Inventory]

TASKS = """\
import dramatiq
from celery import Celery, shared_task
from django.core.mail import send_mail
from huey.contrib.djhuey import db_task

from app.celery import app

local_app = Celery("shop")


def mail(pk):
    send_mail("Receipt", str(pk), "shop@example.com", ["buyer@example.com"])


@shared_task
def celery_shared(pk):
    mail(pk)


@app.task(bind=True)
def celery_project_app(self, pk):
    mail(pk)


@local_app.task
def celery_local_app(pk):
    mail(pk)


@db_task()
def huey_task(pk):
    mail(pk)


@dramatiq.actor
def dramatiq_actor(pk):
    mail(pk)
"""
CELERY_APP = 'from celery import Celery\n\napp = Celery("shop")\n'


def views(call: str) -> str:
    return (
        "from django.http import HttpResponse\n\n"
        "from app import tasks\n\n\n"
        "def checkout(request):\n"
        f"    {call}\n"
        "    return HttpResponse()\n"
    )


URLS = (
    "from django.urls import path\n\n"
    "from app.views import checkout\n\n"
    'urlpatterns = [path("checkout/", checkout)]\n'
)


def scan_call(scan_project: Scanner, call: str) -> list[str]:
    """The jobs of the direct-call sites the scan reports in the view calling ``call``."""
    inventory = scan_project(
        {
            "app/__init__.py": "",
            "app/celery.py": CELERY_APP,
            "app/tasks.py": TASKS,
            "app/views.py": views(call),
            "app/urls.py": URLS,
        }
    )
    return [
        site.job
        for site in inventory.sites
        if site.pattern is Pattern.DIRECT_CALL and site.location.path == "app/views.py"
    ]


@pytest.mark.parametrize(
    ("call", "job"),
    [
        ("tasks.celery_shared.apply((7,))", "app.tasks.celery_shared"),
        ("tasks.celery_shared.apply(args=(7,))", "app.tasks.celery_shared"),
        ("tasks.celery_shared.run(7)", "app.tasks.celery_shared"),
        ("tasks.celery_project_app.apply((7,))", "app.tasks.celery_project_app"),
        ("tasks.celery_local_app.apply((7,))", "app.tasks.celery_local_app"),
        ("tasks.huey_task.call_local(7)", "app.tasks.huey_task"),
        ("tasks.dramatiq_actor.fn(7)", "app.tasks.dramatiq_actor"),
        # Celery and Dramatiq run a task called as a function in the caller (Huey enqueues).
        ("tasks.celery_shared(7)", "app.tasks.celery_shared"),
        ("tasks.dramatiq_actor(7)", "app.tasks.dramatiq_actor"),
    ],
)
def test_a_local_run_of_a_task_is_slow_work_in_the_request(
    scan_project: Scanner, call: str, job: str
) -> None:
    assert scan_call(scan_project, call) == [job]


@pytest.mark.parametrize(
    "call",
    [
        "tasks.celery_shared.delay(7)",  # leaves the process: an enqueue, no direct call
        "tasks.celery_shared.apply_async((7,))",
        "tasks.huey_task.apply((7,))",  # Huey's task has no Celery apply
        "tasks.celery_shared.call_local(7)",  # nor a Celery task Huey's call_local
        "tasks.celery_shared.fn(7)",  # nor Dramatiq's fn
        "tasks.dramatiq_actor.run(7)",
        "tasks.mail.apply((7,))",  # an undecorated function is no task
        "tasks.huey_task(7)",  # calling a Huey task enqueues it
    ],
)
def test_no_other_call_of_a_task_is_read_as_a_local_run(scan_project: Scanner, call: str) -> None:
    assert scan_call(scan_project, call) == []


def test_a_huey_task_called_in_a_job_is_an_enqueue_a_retry_repeats(
    scan_project: Scanner,
) -> None:
    """``huey_task(pk)`` hands the work to Huey's queue: a job that calls it does not mail,
    it enqueues, and a retry of the job enqueues again (as ``.delay`` does)."""
    inventory = scan_project(
        {
            "app/__init__.py": "",
            "app/celery.py": CELERY_APP,
            "app/tasks.py": TASKS + "\n\ndef checkout_done(pk):\n    huey_task(pk)\n    mail(pk)\n",
            "app/views.py": views("tasks.checkout_done(7)"),
            "app/urls.py": URLS,
        }
    )
    job = inventory.job("app.tasks.checkout_done")
    assert job is not None
    messages = [e.message for e in job.evidence]
    assert (
        "huey.api.TaskWrapper.__call__: enqueues further work: a retry enqueues it twice"
        in messages
    )
