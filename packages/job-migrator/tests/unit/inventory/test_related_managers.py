"""Django related managers: a many-to-many field's manager is typed, its relation edits
converge, and nothing that merely shares the names is taken for one (scanned for real)."""

from __future__ import annotations

from collections.abc import Callable

from inventory import EffectKind, Idempotency, Inventory

Scanner = Callable[[dict[str, str]], Inventory]  # the scan_project fixture (conftest)

MODELS = (
    "from django.db import models\n\n"
    "class Label(models.Model):\n"
    "    name = models.CharField(max_length=40)\n\n"
    "class Base(models.Model):\n"
    "    labels = models.ManyToManyField(Label)\n\n"
    "    class Meta:\n"
    "        abstract = True\n\n"
    "class Ticket(Base):\n"
    "    title = models.CharField(max_length=40)\n\n"
    "class Basket:\n"
    "    def __init__(self):\n"
    "        self.labels = Labels()\n\n"
    "class Labels:\n"
    "    def add(self, name):\n"
    "        import requests\n"
    "        requests.post('https://example.com/labels', json={'name': name})\n"
)

JOBS = (
    "import threading\n\n"
    "from shop.models import Basket, Label, Ticket\n\n\n"
    "def tag(ticket_id):\n"
    "    ticket = Ticket.objects.get(pk=ticket_id)\n"
    "    ticket.labels.add(Label.objects.get(name='x'))\n"
    "    ticket.labels.clear()\n\n\n"
    "def new_label(ticket_id):\n"
    "    ticket = Ticket.objects.get(pk=ticket_id)\n"
    "    ticket.labels.create(name='fresh')\n\n\n"
    "def fill(name):\n"
    "    Basket().labels.add(name)\n\n\n"
    "def view(request):\n"
    "    threading.Thread(target=tag, args=(1,)).start()\n"
    "    threading.Thread(target=new_label, args=(1,)).start()\n"
    "    threading.Thread(target=fill, args=('a',)).start()\n"
)


def _jobs(scan_project: Scanner) -> dict[str, tuple[Idempotency, set[EffectKind]]]:
    inventory = scan_project(
        {"shop/__init__.py": "", "shop/models.py": MODELS, "shop/jobs.py": JOBS}
    )
    return {j.qualname: (j.idempotency, {e.kind for e in j.effects}) for j in inventory.jobs}


def test_relation_edits_on_an_inherited_many_to_many_field_converge(scan_project: Scanner) -> None:
    verdict, effects = _jobs(scan_project)["shop.jobs.tag"]
    assert verdict is Idempotency.IDEMPOTENT
    assert effects == {EffectKind.DB_READ, EffectKind.DB_UPSERT, EffectKind.DB_DELETE}


def test_create_through_the_manager_inserts_a_row(scan_project: Scanner) -> None:
    verdict, effects = _jobs(scan_project)["shop.jobs.new_label"]
    assert EffectKind.DB_INSERT in effects
    assert verdict is not Idempotency.IDEMPOTENT


def test_an_add_that_is_not_a_related_manager_is_followed_as_itself(scan_project: Scanner) -> None:
    # ``Basket().labels`` is a project object whose ``add`` posts: never a relation edit.
    verdict, effects = _jobs(scan_project)["shop.jobs.fill"]
    assert EffectKind.HTTP_POST in effects
    assert EffectKind.DB_UPSERT not in effects
    assert verdict is Idempotency.NON_IDEMPOTENT


def test_a_field_to_a_model_named_by_app_label_in_a_receiver(scan_project: Scanner) -> None:
    # ``ManyToManyField(to="queues.Queue")`` and a post_save receiver of its model.
    inventory = scan_project(
        {
            "queues/__init__.py": "",
            "queues/models.py": (
                "from django.db import models\n\n"
                "class Queue(models.Model):\n    name = models.CharField(max_length=40)\n\n"
                "class Job(models.Model):\n"
                "    default_queue = models.ForeignKey(Queue, on_delete=models.CASCADE)\n"
                "    queues = models.ManyToManyField(to='queues.Queue', related_name='jobs')\n"
            ),
            "queues/signals.py": (
                "from django.db.models.signals import post_save\n"
                "from django.dispatch import receiver\n\n"
                "from queues.models import Job\n\n\n"
                "@receiver(post_save, sender=Job)\n"
                "def keep_default(instance, raw=False, **kwargs):\n"
                "    if raw:\n        return\n"
                "    instance.queues.add(instance.default_queue)\n"
            ),
        }
    )
    job = next(j for j in inventory.jobs if j.qualname == "queues.signals.keep_default")
    assert job.idempotency is Idempotency.IDEMPOTENT, [e.message for e in job.evidence]
    assert {e.kind for e in job.effects} == {EffectKind.DB_UPSERT}
