"""A site that already enqueues a Django task says what moves it: the TASKS setting.

Scanned for real: ``send_receipt.enqueue(order_id)`` of a function decorated with
``django.tasks.task`` hands the work to Django's task framework, which runs it in the
request under the default ``ImmediateBackend``. apply leaves the call as it is (the code
is already what a queue needs), and the reason names the setting that moves the work,
never "already enqueues" alone, which would read as done. A second ``apply`` over a site it
moved to ``queue_runtime`` keeps the plain reason.
"""

from __future__ import annotations

from pathlib import Path

from codemods import Status, plan_apply
from inventory import scan

TASKS = """from django.tasks import task


@task()
def send_receipt(order_id):
    print(order_id)
"""

VIEWS = """from django.db import transaction

from shop.tasks import send_receipt


def checkout(request):
    transaction.on_commit(lambda: send_receipt.enqueue(request.POST["order"]))
"""

MOVED = """from django.db import transaction
from queue_runtime import job


@job(pool="batch", idempotent=True)
def send_receipt(order_id):
    print(order_id)


def checkout(request):
    transaction.on_commit(lambda: send_receipt.enqueue(request.POST["order"]))
"""


def _outcome(root: Path, job: str) -> tuple[Status, str]:
    inventory = scan(root, use_cache=False, write=False, jobs=1)
    found = inventory.job(job)
    assert found is not None, [j.qualname for j in inventory.jobs]
    [outcome] = [o for o in plan_apply(root, inventory, scanner=None).outcomes if o.site.job == job]
    return outcome.status, outcome.reason


def test_a_django_task_enqueued_on_commit_names_the_tasks_setting(tmp_path: Path) -> None:
    (tmp_path / "shop").mkdir()
    (tmp_path / "shop/__init__.py").write_text("")
    (tmp_path / "shop/tasks.py").write_text(TASKS)
    (tmp_path / "shop/views.py").write_text(VIEWS)

    inventory = scan(tmp_path, use_cache=False, write=False, jobs=1)
    job = inventory.job("shop.tasks.send_receipt")
    assert job is not None and job.django_task

    status, reason = _outcome(tmp_path, "shop.tasks.send_receipt")
    assert status is Status.ALREADY
    assert reason.startswith("already enqueues a Django task (`shop.tasks.send_receipt`)")
    assert '"BACKEND": "queue_runtime.django.TaskBackend"' in reason


def test_a_queue_runtime_job_enqueued_again_keeps_the_plain_reason(tmp_path: Path) -> None:
    (tmp_path / "shop").mkdir()
    (tmp_path / "shop/__init__.py").write_text("")
    (tmp_path / "shop/views.py").write_text(MOVED)

    inventory = scan(tmp_path, use_cache=False, write=False, jobs=1)
    job = inventory.job("shop.views.send_receipt")
    assert job is not None and not job.django_task
    outcomes = plan_apply(tmp_path, inventory, scanner=None).outcomes
    assert {o.status for o in outcomes} == {Status.ALREADY}
    assert all("Django task" not in o.reason for o in outcomes)
