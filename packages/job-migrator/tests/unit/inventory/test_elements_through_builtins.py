"""Rows keep their model through the builtins and idioms that pass elements on.

``for kid in sorted(page.children.all(), key=...)``: Python's ``list``, ``tuple``,
``sorted``, ``reversed``, ``set``, ``iter``, a slice and a comprehension that keeps its
loop variable all iterate the elements of what they are given, and ``enumerate`` pairs
each with a count; a name bound to one of them iterates the same. A related manager's
``first()`` / ``last()`` gives one of its rows, Django's QuerySet API is read (its
``select_for_update``, ``using``, async reads), and ``ForeignKey("self")`` holds a row of
the model itself. Each project also has a ``Mailbox`` whose ``snapshot`` mails, so a
``snapshot()`` the scan cannot type stays undecided: only the typing decides these
verdicts, and every adversary (a rebound name, a shadowed builtin, a comprehension
yielding something else, a splat, a relation to another model) must stay ``unknown``.
"""

from __future__ import annotations

from inventory import Idempotency
from tests.unit.inventory.conftest import Verdicts

MODELS = (
    "from django.db import models\n\n\n"
    "class Page(models.Model):\n"
    "    title = models.CharField(max_length=10)\n"
    "    parent = models.ForeignKey('self', related_name='children', null=True,\n"
    "                               on_delete=models.CASCADE)\n"
    "    owner = models.ForeignKey('Owner', null=True, on_delete=models.CASCADE)\n\n"
    "    def snapshot(self):\n"
    "        Page.objects.filter(pk=self.pk).update(title='x')\n"
)
MAILBOX = (
    "import smtplib\n\n\n"
    "class Mailbox:\n"
    "    def snapshot(self):\n"
    "        smtplib.SMTP('localhost').sendmail('a@example.com', ['b@example.com'], 'x')\n"
)
JOBS = (
    "from app.models import Page\n\n\n"
    "def listed(page: Page):\n"
    "    kids = list(page.children.all())\n"
    "    for kid in kids:\n"
    "        kid.snapshot()\n\n\n"
    "def sorted_rows():\n"
    "    for kid in sorted(Page.objects.all(), key=lambda p: p.title):\n"
    "        kid.snapshot()\n\n\n"
    "def counted():\n"
    "    for i, kid in enumerate(Page.objects.filter(title='a')):\n"
    "        kid.snapshot()\n\n\n"
    "def sliced():\n"
    "    for kid in Page.objects.order_by('title')[:10]:\n"
    "        kid.snapshot()\n\n\n"
    "def kept():\n"
    "    kids = [k for k in Page.objects.all() if k.title]\n"
    "    for kid in reversed(kids):\n"
    "        kid.snapshot()\n\n\n"
    "def last_child(page: Page):\n"
    "    kid = page.children.filter(title='a').last()\n"
    "    kid.snapshot()\n\n\n"
    "def locked():\n"
    "    for kid in Page.objects.select_for_update().using('default').filter(title='a'):\n"
    "        kid.snapshot()\n\n\n"
    "def parent_of(page):\n"
    "    page.parent.snapshot()\n\n\n"
    "def rebound(page, box):\n"
    "    kids = list(page.children.all())\n"
    "    kids = box\n"
    "    for kid in kids:\n"
    "        kid.snapshot()\n\n\n"
    "def shadowed(page):\n"
    "    list = page.make_list\n"
    "    for kid in list(page.children.all()):\n"
    "        kid.snapshot()\n\n\n"
    "def something_else(page):\n"
    "    for kid in [k.helper for k in Page.objects.all()]:\n"
    "        kid.snapshot()\n\n\n"
    "def splatted(groups):\n"
    "    for kid in sorted(*groups):\n"
    "        kid.snapshot()\n\n\n"
    "def other_model(page):\n"
    "    page.owner.snapshot()\n"
)
VIEWS = (
    "import threading\n\n"
    "from app import jobs\n"
    "from app.mail import Mailbox\n"
    "from app.models import Page\n\n\n"
    "def view(request):\n"
    "    page = Page.objects.get(pk=1)\n"
    + "".join(
        f"    threading.Thread(target=jobs.{name}, args=(page,)).start()\n"
        for name in (
            "listed",
            "last_child",
            "parent_of",
            "shadowed",
            "something_else",
            "other_model",
        )
    )
    + "".join(
        f"    threading.Thread(target=jobs.{name}).start()\n"
        for name in ("sorted_rows", "counted", "sliced", "kept", "locked")
    )
    + "    threading.Thread(target=jobs.rebound, args=(page, Mailbox())).start()\n"
    + "    threading.Thread(target=jobs.splatted, args=([Mailbox()],)).start()\n"
)


def test_rows_keep_their_model_through_builtins_and_idioms(app_verdicts: Verdicts) -> None:
    verdicts = app_verdicts(models=MODELS, mail=MAILBOX, jobs=JOBS, views=VIEWS)
    typed = ("listed", "sorted_rows", "counted", "sliced", "kept", "last_child", "locked")
    assert {name: verdicts[name] for name in typed} == dict.fromkeys(typed, Idempotency.IDEMPOTENT)


def test_a_recursive_foreign_key_holds_a_row_of_the_model_itself(app_verdicts: Verdicts) -> None:
    assert (
        app_verdicts(models=MODELS, mail=MAILBOX, jobs=JOBS, views=VIEWS)["parent_of"]
        == Idempotency.IDEMPOTENT
    )


def test_what_is_not_an_element_of_the_rows_stays_untyped(app_verdicts: Verdicts) -> None:
    verdicts = app_verdicts(models=MODELS, mail=MAILBOX, jobs=JOBS, views=VIEWS)
    adversaries = ("rebound", "shadowed", "something_else", "splatted", "other_model")
    assert {name: verdicts[name] for name in adversaries} == dict.fromkeys(
        adversaries, Idempotency.UNKNOWN
    )
