"""A job that changes, in memory, an object its caller still holds does not move.

Scanned for real. A worker runs a moved job on a copy of each argument, so the caller's
object would miss the change (and a later save of it could write the old values back):
django-polaris's ``await sync_to_async(save_as_ready)(transaction)`` followed by a use of
``transaction`` is the shape. Each refusal is followed as written (the job stops changing
the object) and the site then moves; an object made for the call, which the caller keeps
no name for, moves as it is.
"""

from __future__ import annotations

from pathlib import Path

from codemods import Status, plan_apply
from inventory import scan

MODELS = """from django.db import models


class Transfer(models.Model):
    queue = models.CharField(max_length=20)
    status = models.CharField(max_length=20)
"""

JOBS = """import threading

from shop.models import Transfer


def mark_ready(transfer):
    transfer.queue = "submit"
    transfer.save(update_fields=["queue"])


def view(request):
    transfer = Transfer.objects.get(pk=request.POST["id"])
    threading.Thread(target=mark_ready, args=(transfer,)).start()
    return transfer.queue
"""

FOLLOWED = JOBS.replace(
    """def mark_ready(transfer):
    transfer.queue = "submit"
    transfer.save(update_fields=["queue"])""",
    """def mark_ready(transfer):
    Transfer.objects.filter(pk=transfer.pk).update(queue="submit")""",
)

FRESH = JOBS.replace(
    "    threading.Thread(target=mark_ready, args=(transfer,)).start()\n",
    "    threading.Thread(\n"
    '        target=mark_ready, args=(Transfer.objects.get(pk=request.POST["id"]),)\n'
    "    ).start()\n",
)

RECEIVERS = """from django.db.models.signals import post_save
from django.dispatch import receiver

from shop.models import Transfer


@receiver(post_save, sender=Transfer)
def flag_seen(sender, instance, **kwargs):
    instance.status = "seen"
"""


def _tree(root: Path, jobs: str, receivers: str | None = None) -> Path:
    (root / "shop").mkdir(exist_ok=True)
    (root / "shop/__init__.py").write_text("")
    (root / "shop/models.py").write_text(MODELS)
    (root / "shop/jobs.py").write_text(jobs)
    if receivers is not None:
        (root / "shop/receivers.py").write_text(receivers)
    return root


def _outcome(root: Path, job: str) -> tuple[Status, str]:
    inventory = scan(root, use_cache=False, write=False, jobs=1)
    found = [o for o in plan_apply(root, inventory, scanner=None).outcomes if o.site.job == job]
    assert found, [o.site.job for o in plan_apply(root, inventory, scanner=None).outcomes]
    return found[0].status, found[0].reason


def test_a_job_changing_the_object_its_caller_holds_stays_until_it_does_not(
    tmp_path: Path,
) -> None:
    root = _tree(tmp_path, JOBS)

    status, reason = _outcome(root, "shop.jobs.mark_ready")

    assert status is Status.SKIPPED
    assert reason.startswith(
        'the job changes the transfer it is given (`transfer.queue = "submit"`): a worker runs '
        "it on a copy"
    )
    assert "the caller's `transfer` would not see the change" in reason
    (root / "shop/jobs.py").write_text(FOLLOWED)
    status, reason = _outcome(root, "shop.jobs.mark_ready")
    assert status is Status.REWRITTEN, reason


def test_an_object_made_for_the_call_moves(tmp_path: Path) -> None:
    """The caller keeps no name for ``Transfer.objects.get(...)``: nothing of its own changes."""
    root = _tree(tmp_path, FRESH)

    status, reason = _outcome(root, "shop.jobs.mark_ready")

    assert status is Status.REWRITTEN, reason


def test_a_receiver_changing_the_instance_the_sender_holds_stays(tmp_path: Path) -> None:
    """``post_save`` is sent from ``save()``, whose caller goes on with the instance."""
    root = _tree(tmp_path, FOLLOWED, RECEIVERS)

    status, reason = _outcome(root, "shop.receivers.flag_seen")

    assert status is Status.SKIPPED
    assert 'the job changes the instance it is given (`instance.status = "seen"`)' in reason


ROWS = """import threading


def note_rows(rows, seen):
    seen.append(len(rows))


def view(request):
    seen = []
    threading.Thread(target=note_rows, args=(request.POST.getlist("row"), seen)).start()
    return seen
"""


def test_a_job_appending_to_a_list_its_caller_holds_stays(tmp_path: Path) -> None:
    """``list.append`` is catalogued pure (no effect a retry repeats), yet the caller's list
    changes in place: a worker would append to its copy. Following the reason (the job
    returns what it found instead) moves the site."""
    root = _tree(tmp_path, ROWS)

    status, reason = _outcome(root, "shop.jobs.note_rows")

    assert status is Status.SKIPPED, reason
    assert "the job changes the seen it is given (`seen.append(len(rows))`)" in reason
    moved = ROWS.replace("    seen.append(len(rows))\n", "    return len(rows)\n")
    (root / "shop/jobs.py").write_text(moved)
    status, reason = _outcome(root, "shop.jobs.note_rows")
    assert status is Status.REWRITTEN, reason


M2M_MODELS = """from django.db import models


class Queue(models.Model):
    name = models.CharField(max_length=10)


class Job(models.Model):
    queues = models.ManyToManyField(Queue)
    default_queue = models.ForeignKey(Queue, on_delete=models.CASCADE, related_name="+")
"""

M2M_RECEIVERS = """from django.core.cache import cache
from django.db.models.signals import m2m_changed
from django.dispatch import Signal, receiver

from shop.models import Job

queues_checked = Signal()


@receiver(m2m_changed, sender=Job.queues.through)
def keep_default(instance, action, model, pk_set, **kwargs):
    if action == "pre_remove":
        pk_set.discard(instance.default_queue_id)


@receiver(m2m_changed, sender=Job.queues.through)
def forget_counts(instance, action, model, pk_set, **kwargs):
    for pk in pk_set:
        cache.delete(f"queue:{pk}")


@receiver(queues_checked)
def own_signal(sender, pk_set, **kwargs):
    pk_set.discard(0)
"""


def test_an_m2m_changed_receiver_changing_pk_set_stays(tmp_path: Path) -> None:
    """Django hands ``m2m_changed`` receivers ``pk_set``, the set it then adds or removes: a
    ``pre_remove`` receiver discarding from it vetoes the removal (nautobot keeps a job's
    default queue so). In a worker it would discard from a copy, and the row would go.
    Reading it moves; a ``pk_set`` of the project's own signal is of no known type (left to
    the runtime, as any call the scan cannot follow)."""
    root = tmp_path
    (root / "shop").mkdir()
    (root / "shop/__init__.py").write_text("")
    (root / "shop/models.py").write_text(M2M_MODELS)
    (root / "shop/receivers.py").write_text(M2M_RECEIVERS)

    status, reason = _outcome(root, "shop.receivers.keep_default")
    assert status is Status.SKIPPED, reason
    assert "the job changes the pk_set it is given (`pk_set.discard(" in reason
    assert _outcome(root, "shop.receivers.forget_counts")[0] is Status.REWRITTEN
    assert _outcome(root, "shop.receivers.own_signal")[0] is Status.REWRITTEN
