"""What Django hands a model-signal receiver by keyword, and querysets held in locals.

Django calls a receiver as ``receiver(signal=..., sender=..., instance=..., **more)``, and its
docs ask every receiver to take ``**kwargs``: many read the instance as
``kwargs["instance"]`` (or ``kwargs.get("instance")``), often through a local. That is the
sender's model however it is read. A queryset kept in a local (``qs = M.objects.filter()``)
is a queryset of M rows: ``qs.update(...)`` is M's update and ``qs.delete()`` M's delete.
Each project here also defines a ``delete`` that mails, so an untyped ``x.delete()`` stays
undecided: only the typing decides these verdicts.
"""

from __future__ import annotations

from collections.abc import Callable

from inventory import EffectKind, Idempotency, Inventory

Scanner = Callable[[dict[str, str]], Inventory]  # the scan_project fixture (conftest)

MODELS = (
    "from django.db import models\n\n\n"
    "class Group(models.Model):\n"
    "    name = models.CharField(max_length=10)\n\n\n"
    "class Owner(models.Model):\n"
    "    group = models.ForeignKey(Group, on_delete=models.CASCADE)\n"
    "    revision = models.IntegerField()\n\n\n"
    "class Tag(models.Model):\n"
    "    revision = models.IntegerField()\n\n\n"
    "class Draft(models.Model):\n"
    "    revision = models.IntegerField()\n"
)
MAILBOX = (
    "import smtplib\n\n\n"
    "class Mailbox:\n"
    "    def delete(self):\n"
    "        smtplib.SMTP('localhost').sendmail('a@example.com', ['b@example.com'], 'gone')\n"
)
RECEIVERS = (
    "from django.db.models.signals import post_delete\n"
    "from django.dispatch import receiver\n\n"
    "from app.models import Owner, Tag\n\n\n"
    "@receiver(post_delete, sender=Owner)\n"
    "def through_a_local(sender, **kwargs):\n"
    "    owner = kwargs['instance']\n"
    "    group = owner.group\n"
    "    if group:\n"
    "        group.delete()\n\n\n"
    "@receiver(post_delete, sender=Owner)\n"
    "def read_with_get(sender, **kwargs):\n"
    "    kwargs.get('instance').group.delete()\n\n\n"
    "@receiver(post_delete, sender=Owner)\n"
    "def a_copy_of_the_parameter(sender, instance, **kwargs):\n"
    "    owner = instance\n"
    "    owner.group.delete()\n\n\n"
    "@receiver(post_delete, sender=Tag)\n"
    "def a_local_named_instance(sender, **kwargs):\n"
    "    instance = kwargs['using'] and make_mailbox()\n"
    "    instance.delete()\n\n\n"
    "def make_mailbox():\n"
    "    from app.mail import Mailbox\n"
    "    return [Mailbox()][0]\n\n\n"
    "@receiver(post_delete, sender=Owner)\n"
    "def another_keyword(sender, **kwargs):\n"
    "    kwargs['using'].delete()\n\n\n"
    "def not_a_receiver(**kwargs):\n"
    "    kwargs['instance'].group.delete()\n\n\n"
    "def view(request):\n"
    "    import threading\n"
    "    threading.Thread(target=not_a_receiver, kwargs={'instance': request.user}).start()\n"
)
TASKS = (
    "import threading\n\n"
    "from django.db.models import F\n\n"
    "from app.models import Draft, Owner\n\n\n"
    "def set_revision(rev):\n"
    "    owners = Owner.objects.filter(revision__lt=rev)\n"
    "    owners.update(revision=rev)\n\n\n"
    "def bump(rev):\n"
    "    owners = Owner.objects.filter(revision__lt=rev)\n"
    "    owners = owners.exclude(group=None)\n"
    "    owners.update(revision=F('revision') + 1)\n\n\n"
    "def prune(rev):\n"
    "    stale = Draft.objects.filter(revision__lt=rev)\n"
    "    for draft in stale:\n"
    "        draft.delete()\n"
    "    stale.delete()\n\n\n"
    "def untyped(things):\n"
    "    things.delete()\n\n\n"
    "def view(request):\n"
    "    threading.Thread(target=set_revision, args=(1,)).start()\n"
    "    threading.Thread(target=bump, args=(1,)).start()\n"
    "    threading.Thread(target=prune, args=(1,)).start()\n"
    "    threading.Thread(target=untyped, args=(request.user,)).start()\n"
)
FILES = {
    "app/__init__.py": "",
    "app/models.py": MODELS,
    "app/mail.py": MAILBOX,
    "app/signals.py": RECEIVERS,
    "app/tasks.py": TASKS,
}


def _jobs(scan_project: Scanner) -> dict[str, tuple[Idempotency, set[EffectKind]]]:
    inventory = scan_project(FILES)
    return {j.qualname: (j.idempotency, {e.kind for e in j.effects}) for j in inventory.jobs}


def test_a_receivers_keyword_instance_is_the_senders_model(scan_project: Scanner) -> None:
    jobs = _jobs(scan_project)
    for name in ("through_a_local", "read_with_get", "a_copy_of_the_parameter"):
        verdict, effects = jobs[f"app.signals.{name}"]
        assert verdict is Idempotency.IDEMPOTENT, name
        assert effects == {EffectKind.DB_DELETE}, name


def test_other_keywords_and_functions_that_are_no_receiver_stay_untyped(
    scan_project: Scanner,
) -> None:
    jobs = _jobs(scan_project)
    # ``using`` is a database alias, not the instance; a plain function's ``**kwargs`` is
    # whatever its callers pass: either could be the Mailbox whose delete mails
    assert jobs["app.signals.another_keyword"][0] is not Idempotency.IDEMPOTENT
    # a local that merely shares the name ``instance`` is not the sender's model
    assert jobs["app.signals.a_local_named_instance"][0] is not Idempotency.IDEMPOTENT
    assert jobs["app.signals.not_a_receiver"][0] is not Idempotency.IDEMPOTENT


def test_a_queryset_in_a_local_is_its_models_rows(scan_project: Scanner) -> None:
    jobs = _jobs(scan_project)
    assert jobs["app.tasks.set_revision"] == (
        Idempotency.IDEMPOTENT,
        {EffectKind.DB_READ, EffectKind.DB_OVERWRITE},
    )
    # (Draft: deleting an Owner or a Tag would also run their receivers above)
    assert jobs["app.tasks.prune"][0] is Idempotency.IDEMPOTENT
    assert EffectKind.DB_DELETE in jobs["app.tasks.prune"][1]


def test_an_increment_through_a_local_queryset_is_still_an_increment(
    scan_project: Scanner,
) -> None:
    verdict, effects = _jobs(scan_project)["app.tasks.bump"]
    assert EffectKind.DB_INCREMENT in effects
    assert verdict is not Idempotency.IDEMPOTENT


def test_an_untyped_delete_may_still_be_the_projects_mail(scan_project: Scanner) -> None:
    assert _jobs(scan_project)["app.tasks.untyped"][0] is not Idempotency.IDEMPOTENT


def test_swapper_loads_the_default_model(scan_project: Scanner) -> None:
    files = {
        **FILES,
        "app/swapped.py": (
            "import threading\n\n"
            "from swapper import load_model\n\n\n"
            "def clear(rev):\n"
            "    Owner = load_model('app', 'Owner')\n"
            "    Owner.objects.filter(revision=rev).update(revision=0)\n\n\n"
            "def view(request):\n"
            "    threading.Thread(target=clear, args=(1,)).start()\n"
        ),
    }
    jobs = {j.qualname: j for j in scan_project(files).jobs}
    job = jobs["app.swapped.clear"]
    assert job.idempotency is Idempotency.IDEMPOTENT
    assert any(e.kind is EffectKind.DB_OVERWRITE for e in job.effects)
    assert not job.unexplained
