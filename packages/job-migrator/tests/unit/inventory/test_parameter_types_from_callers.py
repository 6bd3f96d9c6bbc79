"""An unannotated parameter is of the class every project call passes it.

``def purge(draft): draft.archive()`` names no type, but when each call and each site that
runs ``purge`` hands it a ``Draft`` (a row a query loaded, ``self`` in a ``Draft`` method,
a caller's own parameter typed the same way), ``draft.archive()`` is ``Draft.archive``.
Each project here also has a ``Mailbox`` whose ``archive`` mails, so an ``archive()`` the
scan cannot type stays undecided: only the typing from callers decides these verdicts, and
every adversary (a caller passing another class, a value the scan cannot type, a splat,
the function handed on as a value) must leave the parameter untyped.
"""

from __future__ import annotations

from collections.abc import Callable

from inventory import EffectKind, Idempotency, Inventory

Scanner = Callable[[dict[str, str]], Inventory]  # the scan_project fixture (conftest)

MODELS = (
    "from django.db import models\n\n\n"
    "class Draft(models.Model):\n"
    "    state = models.CharField(max_length=10)\n\n"
    "    def archive(self):\n"
    "        Draft.objects.filter(pk=self.pk).update(state='archived')\n\n"
    "    def close(self):\n"
    "        from app.helpers import archive_one\n"
    "        archive_one(self)\n"
)
MAILBOX = (
    "import smtplib\n\n\n"
    "class Mailbox:\n"
    "    def archive(self):\n"
    "        smtplib.SMTP('localhost').sendmail('a@example.com', ['b@example.com'], 'gone')\n"
)
HELPERS = (
    "def archive_one(item):\n"
    "    item.archive()\n\n\n"
    "def archive_all(first):\n"
    "    archive_one(first)\n"
)
TASKS = (
    "import threading\n\n"
    "from app.helpers import archive_all\n"
    "from app.mail import Mailbox\n"
    "from app.models import Draft\n\n\n"
    "def purge(draft):\n"
    "    draft.archive()\n\n\n"
    "def through_a_helper(draft):\n"
    "    archive_all(draft)\n\n\n"
    "def by_keyword(draft=None):\n"
    "    draft.archive()\n\n\n"
    "def two_classes(thing):\n"
    "    thing.archive()\n\n\n"
    "def one_caller_unknown(thing):\n"
    "    thing.archive()\n\n\n"
    "def splatted(thing):\n"
    "    thing.archive()\n\n\n"
    "def handed_on(thing):\n"
    "    thing.archive()\n\n\n"
    "class Service:\n"
    "    def run(self, draft):\n"
    "        draft.archive()\n\n\n"
    "def uses_the_service(pk):\n"
    "    Service().run(Draft.objects.get(pk=pk))\n\n\n"
    "def view(request, pk):\n"
    "    draft = Draft.objects.get(pk=pk)\n"
    "    threading.Thread(target=purge, args=(draft,)).start()\n"
    "    threading.Thread(target=through_a_helper, args=(draft,)).start()\n"
    "    threading.Thread(target=by_keyword, kwargs={'draft': draft}).start()\n"
    "    threading.Thread(target=uses_the_service, args=(pk,)).start()\n"
    "    threading.Thread(target=draft.close).start()\n"
    "    by_keyword(draft=draft)\n"
    "    threading.Thread(target=two_classes, args=(draft,)).start()\n"
    "    two_classes(Mailbox())\n"
    "    threading.Thread(target=one_caller_unknown, args=(draft,)).start()\n"
    "    one_caller_unknown(request.user)\n"
    "    threading.Thread(target=splatted, args=(draft,)).start()\n"
    "    splatted(*request.GET.getlist('x'))\n"
    "    threading.Thread(target=handed_on, args=(draft,)).start()\n"
    "    list(map(handed_on, request.GET.getlist('x')))\n"
)
FILES = {
    "app/__init__.py": "",
    "app/models.py": MODELS,
    "app/mail.py": MAILBOX,
    "app/helpers.py": HELPERS,
    "app/tasks.py": TASKS,
}


def _jobs(
    scan_project: Scanner, files: dict[str, str] = FILES
) -> dict[str, tuple[Idempotency, set[EffectKind]]]:
    inventory = scan_project(files)
    return {j.qualname: (j.idempotency, {e.kind for e in j.effects}) for j in inventory.jobs}


def test_a_parameter_every_caller_hands_a_row_is_of_its_model(scan_project: Scanner) -> None:
    jobs = _jobs(scan_project)
    for name in ("purge", "by_keyword", "uses_the_service"):
        verdict, effects = jobs[f"app.tasks.{name}"]
        assert verdict is Idempotency.IDEMPOTENT, name
        assert EffectKind.DB_OVERWRITE in effects, name
        assert EffectKind.EMAIL_SEND not in effects, name


def test_the_type_flows_through_parameters_handed_on(scan_project: Scanner) -> None:
    # view -> through_a_helper(draft) -> archive_all(first) -> archive_one(item)
    verdict, effects = _jobs(scan_project)["app.tasks.through_a_helper"]
    assert verdict is Idempotency.IDEMPOTENT
    assert EffectKind.DB_OVERWRITE in effects


def test_self_handed_to_a_helper_is_of_its_class(scan_project: Scanner) -> None:
    verdict, effects = _jobs(scan_project)["app.models.Draft.close"]
    assert verdict is Idempotency.IDEMPOTENT
    assert EffectKind.DB_OVERWRITE in effects


def test_callers_that_disagree_or_cannot_be_read_type_nothing(scan_project: Scanner) -> None:
    jobs = _jobs(scan_project)
    # another class (the Mailbox mails), a value the scan cannot type, a splat that may put
    # anything in the parameter, and the function handed to map() with unknown values:
    # each could be the Mailbox, so none may be called idempotent
    for name in ("two_classes", "one_caller_unknown", "splatted", "handed_on"):
        assert jobs[f"app.tasks.{name}"][0] is not Idempotency.IDEMPOTENT, name


def test_a_signal_receivers_other_parameters_are_not_typed_by_callers(
    scan_project: Scanner,
) -> None:
    # Django calls the receiver with the signal's arguments: a project call that hands
    # ``other`` a Draft says nothing of what Django passes
    files = {
        **FILES,
        "app/signals.py": (
            "from django.db.models.signals import post_save\n\n"
            "from app.models import Draft\n\n\n"
            "def saved(sender, other=None, **kwargs):\n"
            "    other.archive()\n\n\n"
            "post_save.connect(saved)\n\n\n"
            "def replay(pk):\n"
            "    saved(Draft, other=Draft.objects.get(pk=pk))\n"
        ),
    }
    assert _jobs(scan_project, files)["app.signals.saved"][0] is not Idempotency.IDEMPOTENT


HOLDERS = (
    "import threading\n\n"
    "from app.mail import Mailbox\n"
    "from app.models import Draft\n\n\n"
    "class Archiver:\n"
    "    def __init__(self, target):\n"
    "        self.target = target\n\n"
    "    def run(self):\n"
    "        self.target.archive()\n\n\n"
    "class Shared:\n"
    "    def __init__(self, target):\n"
    "        self.target = target\n\n"
    "    def run(self):\n"
    "        self.target.archive()\n\n\n"
    "class Swapped:\n"
    "    def __init__(self, target):\n"
    "        self.target = target\n\n"
    "    def swap(self, other):\n"
    "        self.target = other\n\n"
    "    def run(self):\n"
    "        self.target.archive()\n\n\n"
    "def archive_later(pk):\n"
    "    Archiver(Draft.objects.get(pk=pk)).run()\n\n\n"
    "def shared_later(pk):\n"
    "    Shared(Draft.objects.get(pk=pk)).run()\n\n\n"
    "def swapped_later(pk):\n"
    "    held = Swapped(Draft.objects.get(pk=pk))\n"
    "    held.swap(Mailbox())\n"
    "    held.run()\n\n\n"
    "def view(request, pk):\n"
    "    threading.Thread(target=archive_later, args=(pk,)).start()\n"
    "    threading.Thread(target=shared_later, args=(pk,)).start()\n"
    "    threading.Thread(target=swapped_later, args=(pk,)).start()\n"
    "    Shared(Mailbox()).run()\n"
)


def test_an_attribute_set_from_a_typed_parameter_is_of_its_class(scan_project: Scanner) -> None:
    jobs = _jobs(scan_project, {**FILES, "app/holders.py": HOLDERS})
    verdict, effects = jobs["app.holders.archive_later"]
    assert verdict is Idempotency.IDEMPOTENT
    assert EffectKind.DB_OVERWRITE in effects


def test_an_attribute_whose_parameter_callers_disagree_or_two_parameters_set_is_untyped(
    scan_project: Scanner,
) -> None:
    jobs = _jobs(scan_project, {**FILES, "app/holders.py": HOLDERS})
    # Shared is also made with a Mailbox; Swapped's target is set from two parameters
    assert jobs["app.holders.shared_later"][0] is not Idempotency.IDEMPOTENT
    assert jobs["app.holders.swapped_later"][0] is not Idempotency.IDEMPOTENT


def test_a_method_started_through_its_class_takes_self_first(scan_project: Scanner) -> None:
    """``Thread(target=Courier.run, args=(courier, mailbox))``: the first argument is
    ``self``, the second is ``parcel``; read one place off, ``parcel`` would be a Draft."""
    files = {
        **FILES,
        "app/courier.py": (
            "import threading\n\n"
            "from app.mail import Mailbox\n"
            "from app.models import Draft\n\n\n"
            "class Courier:\n"
            "    def run(self, parcel, note=None):\n"
            "        parcel.archive()\n\n\n"
            "def view(request, pk):\n"
            "    draft = Draft.objects.get(pk=pk)\n"
            "    threading.Thread(target=Courier.run, args=(draft, Mailbox())).start()\n"
        ),
    }
    verdict, _ = _jobs(scan_project, files)["app.courier.Courier.run"]
    assert verdict is not Idempotency.IDEMPOTENT


def test_one_class_named_two_ways_by_two_callers_agrees(scan_project: Scanner) -> None:
    """A site hands ``name: str`` (the Inventory's ``Argument.type`` says ``builtins.str``)
    and a direct call hands the same parameter (the summary writes ``app.jobs.str``): one
    class, so ``text`` is a ``str`` and its methods are the builtin's."""
    files = {
        "app/__init__.py": "",
        "app/jobs.py": (
            "import threading\n\n\n"
            "def clean(text):\n    return text.strip().lower()\n\n\n"
            "def start(name: str):\n"
            "    threading.Thread(target=clean, args=(name,)).start()\n\n\n"
            "def view(request, name: str):\n    clean(name)\n    start(name)\n"
        ),
    }
    inventory = scan_project(files)
    (site,) = [s for s in inventory.sites if s.job == "app.jobs.clean"]
    assert [a.type for a in site.arguments] == ["builtins.str"]
    job = inventory.job("app.jobs.clean")
    assert job is not None and job.idempotency is Idempotency.IDEMPOTENT
