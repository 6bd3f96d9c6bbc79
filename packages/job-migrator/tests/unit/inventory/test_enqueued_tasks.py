"""An enqueue is only as harmful as the task it runs.

``refresh_stats.delay(pk)`` in a job: a retry of the job enqueues the task again, and
the task runs twice. When the task is a project function whose own work is idempotent
(here it overwrites a row), two runs end where one does, and the job's verdict does not
count the enqueue as a repeat. Every adversary keeps it one: a task that mails, a task
that enqueues a task that mails, a task pinned ``non_idempotent``, a queue call the scan
cannot name, an enqueue of a library task, and a task the scan cannot follow (a duplicate
message is known to be sent; the evidence names the task's unfollowed call, and explaining
it settles the enqueue). Tasks that enqueue each other are decided together.
"""

from __future__ import annotations

from collections.abc import Callable

from inventory import Idempotency, Inventory, Job

Scanner = Callable[[dict[str, str]], Inventory]  # the scan_project fixture (conftest)

MODELS = (
    "from django.db import models\n\n\n"
    "class Page(models.Model):\n"
    "    views = models.IntegerField(default=0)\n"
    "    parent = models.ForeignKey('self', null=True, on_delete=models.CASCADE)\n"
)
TASKS = (
    "from celery import shared_task\n"
    "from django.core.mail import send_mail\n\n"
    "from app.models import Page\n\n\n"
    "@shared_task\n"
    "def refresh_stats(pk):\n"
    "    Page.objects.filter(pk=pk).update(views=0)\n\n\n"
    "@shared_task\n"
    "def refresh_tree(pk):\n"
    "    page = Page.objects.get(pk=pk)\n"
    "    Page.objects.filter(pk=pk).update(views=0)\n"
    "    if page.parent_id:\n"
    "        refresh_tree.delay(page.parent_id)\n\n\n"
    "@shared_task\n"
    "def ping_then_tree(pk):\n"
    "    refresh_tree.delay(pk)\n"
    "    tree_then_ping.delay(pk)\n\n\n"
    "@shared_task\n"
    "def tree_then_ping(pk):\n"
    "    ping_then_tree.delay(pk)\n"
    "    send_mail('s', 'b', 'a@example.com', ['b@example.com'])\n\n\n"
    "@shared_task\n"
    "def notify(pk):\n"
    "    send_mail('s', 'b', 'a@example.com', ['b@example.com'])\n\n\n"
    "@shared_task\n"
    "def relay(pk):\n"
    "    notify.delay(pk)\n\n\n"
    "@shared_task\n"
    "def opaque(pk, hook):\n"
    "    hook.fire(pk)\n\n\n"
    "@shared_task\n"
    "def opaque_relay(pk):\n"
    "    opaque.delay(pk, None)\n\n\n"
    "@shared_task\n"
    "def opaque_loop(pk, hook):\n"
    "    hook.fire(pk)\n"
    "    loop_back.delay(pk)\n\n\n"
    "@shared_task\n"
    "def loop_back(pk):\n"
    "    opaque_loop.delay(pk, None)\n\n\n"
    "@shared_task\n"
    "def opaque_then_mail(pk, hook):\n"
    "    hook.fire(pk)\n"
    "    send_mail('s', 'b', 'a@example.com', ['b@example.com'])\n\n\n"
    "@shared_task\n"
    "def pinned(pk):\n"
    "    Page.objects.filter(pk=pk).update(views=0)\n"
)
VIEWS = (
    "import threading\n\n"
    "from django.core.mail import send_mail\n\n"
    "from app import tasks\n"
    "from app.tasks import refresh_stats, refresh_tree\n\n\n"
    "def after_edit(pk):\n"
    "    refresh_stats.delay(pk)\n\n\n"
    "def after_move(pk):\n"
    "    refresh_tree.apply_async(args=(pk,))\n\n\n"
    "def after_edit_on_commit(pk):\n"
    "    tasks.refresh_stats.delay_on_commit(pk)\n\n\n"
    "def mails(pk):\n"
    "    tasks.notify.delay(pk)\n\n\n"
    "def relays(pk):\n"
    "    tasks.relay.delay(pk)\n\n\n"
    "def cycle_with_mail(pk):\n"
    "    tasks.ping_then_tree.delay(pk)\n\n\n"
    "def opaque_task(pk):\n"
    "    tasks.opaque.delay(pk, None)\n\n\n"
    "def pinned_task(pk):\n"
    "    tasks.pinned.delay(pk)\n\n\n"
    "def opaque_relays(pk):\n"
    "    tasks.opaque_relay.delay(pk)\n\n\n"
    "def opaque_cycle(pk):\n"
    "    tasks.opaque_loop.delay(pk, None)\n\n\n"
    "def opaque_and_mails(pk):\n"
    "    tasks.opaque_then_mail.delay(pk, None)\n\n\n"
    "def opaque_then_own_mail(pk):\n"
    "    tasks.opaque.delay(pk, None)\n"
    "    send_mail('s', 'b', 'a@example.com', ['b@example.com'])\n\n\n"
    "def by_name(pk, app):\n"
    "    app.send_task('app.tasks.refresh_stats', args=(pk,))\n\n\n"
    "def view(request, pk):\n"
    + "".join(
        f"    threading.Thread(target={name}, args=(pk,)).start()\n"
        for name in (
            "after_edit",
            "after_move",
            "after_edit_on_commit",
            "mails",
            "relays",
            "cycle_with_mail",
            "opaque_task",
            "pinned_task",
            "opaque_relays",
            "opaque_cycle",
            "opaque_and_mails",
            "opaque_then_own_mail",
        )
    )
    + "    threading.Thread(target=by_name, args=(pk, request.app)).start()\n"
)
PYPROJECT = (
    '[tool.migrator.jobs."app.tasks.pinned"]\n'
    'idempotency = "non_idempotent"\n'
    'reason = "the team says so"\n'
)


def _jobs(scan_project: Scanner, pyproject: str = PYPROJECT) -> dict[str, Job]:
    inventory = scan_project(
        {
            "app/__init__.py": "",
            "app/models.py": MODELS,
            "app/tasks.py": TASKS,
            "app/views.py": VIEWS,
            "pyproject.toml": pyproject,
        }
    )
    return {job.qualname.rsplit(".", 1)[-1]: job for job in inventory.jobs}


def _verdicts(scan_project: Scanner) -> dict[str, Idempotency]:
    return {name: job.idempotency for name, job in _jobs(scan_project).items()}


def test_enqueueing_an_idempotent_task_repeats_nothing(scan_project: Scanner) -> None:
    verdicts = _verdicts(scan_project)
    assert verdicts["after_edit"] == Idempotency.IDEMPOTENT
    assert verdicts["after_edit_on_commit"] == Idempotency.IDEMPOTENT
    # the task enqueues itself for the parent page: decided together, still idempotent
    assert verdicts["after_move"] == Idempotency.IDEMPOTENT


def test_the_evidence_names_the_task_and_why(scan_project: Scanner) -> None:
    inventory = scan_project(
        {
            "app/__init__.py": "",
            "app/models.py": MODELS,
            "app/tasks.py": TASKS,
            "app/views.py": VIEWS,
        }
    )
    job = next(j for j in inventory.jobs if j.qualname == "app.views.after_edit")
    messages = [e.message for e in job.evidence]
    assert any(
        "enqueues app.tasks.refresh_stats, whose own work is idempotent" in m for m in messages
    ), messages
    assert not any("a retry enqueues it twice" in m for m in messages), messages
    assert [e.kind.value for e in job.effects] == ["enqueue"]  # the effect is still reported


def test_a_task_that_repeats_something_keeps_the_enqueue_a_repeat(scan_project: Scanner) -> None:
    verdicts = _verdicts(scan_project)
    assert verdicts["mails"] == Idempotency.NON_IDEMPOTENT  # the task mails
    assert verdicts["relays"] == Idempotency.NON_IDEMPOTENT  # its task enqueues one that mails
    # a cycle of tasks, one of which mails: none of them is settled
    assert verdicts["cycle_with_mail"] == Idempotency.NON_IDEMPOTENT
    assert verdicts["pinned_task"] == Idempotency.NON_IDEMPOTENT  # the pinned verdict counts
    assert verdicts["by_name"] == Idempotency.NON_IDEMPOTENT  # send_task('...'): no function


def test_a_task_the_scan_cannot_follow_keeps_the_enqueue_a_repeat(scan_project: Scanner) -> None:
    jobs = _jobs(scan_project)
    for name in ("opaque_task", "opaque_relays", "opaque_cycle", "opaque_and_mails"):
        job = jobs[name]
        assert job.idempotency == Idempotency.NON_IDEMPOTENT, name
        assert job.unexplained == [], name  # its own calls are all followed
    assert jobs["opaque_then_own_mail"].idempotency == Idempotency.NON_IDEMPOTENT
    # the evidence names the task and the call to explain
    messages = [e.message for e in jobs["opaque_task"].evidence]
    assert any(
        "enqueues app.tasks.opaque, whose own verdict is unknown" in m and "hook.fire" in m
        for m in messages
    ), messages


def test_explaining_the_tasks_gap_settles_the_enqueue(scan_project: Scanner) -> None:
    pure = '[[tool.migrator.catalogue.pure]]\ncall = "?.fire"\nreceiver = "^hook$"\n'
    jobs = _jobs(scan_project, PYPROJECT + pure)
    for name in ("opaque_task", "opaque_relays", "opaque_cycle"):
        assert jobs[name].idempotency == Idempotency.IDEMPOTENT, name
    assert jobs["opaque_and_mails"].idempotency == Idempotency.NON_IDEMPOTENT  # it also mails
    # a firing said to repeat something makes the enqueue a repeat for that reason
    effect = (
        '[[tool.migrator.catalogue.effect]]\ncall = "?.fire"\nreceiver = "^hook$"\n'
        'effect = "http_post"\n'
    )
    jobs = _jobs(scan_project, PYPROJECT + effect)
    assert jobs["opaque_task"].idempotency == Idempotency.NON_IDEMPOTENT
    messages = [e.message for e in jobs["opaque_task"].evidence]
    assert not any("whose own verdict is unknown" in m for m in messages), messages
