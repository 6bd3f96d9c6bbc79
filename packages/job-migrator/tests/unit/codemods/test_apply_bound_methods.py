"""A bound method whose instance a runtime codec stores moves as the method itself (issue 21).

``report.render("pdf")`` on a dataclass instance, ``order.notify()`` on an ORM-loaded
model: ``@job`` goes on the method where it is defined and the site becomes
``report.render.enqueue("pdf")``; the runtime binds the job like a plain method and
stores the instance as the call's first argument (tagged JSON, or by reference). An
instance of undeclared type stays put, and the reason's change (declare it) moves it.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from codemods import Status, plan_apply
from codemods._types import Crossing
from inventory.models import Argument, Inventory, Pattern
from tests.unit.codemods.conftest import build_inventory

REPORTS = """from dataclasses import dataclass

import requests


@dataclass
class Report:
    report_id: int
    title: str

    def render(self, fmt: str) -> None:
        requests.put(f"https://files.example.com/{self.report_id}.{fmt}", data=self.title)

    @classmethod
    def rebuild_all(cls) -> None:
        requests.post("https://files.example.com/rebuild")
"""

MODELS = """from django.db import models


class Order(models.Model):
    email = models.EmailField()

    def notify(self, subject: str) -> None:
        send(self.email, subject)

    def pay(self) -> None:
        self.notify("Paid")


class SignupView:
    def post(self, request):
        self.welcome(request.user.email)

    def welcome(self, email: str) -> None:
        send(email, "Welcome")
"""

VIEWS = """import threading

from app.models import Order
from app.reports import Report


def export(report_id: int):
    report = Report(report_id, "Q3")
    threading.Thread(target=report.render, args=("pdf",)).start()


def paid(order_id: int):
    order = Order.objects.get(pk=order_id)
    order.notify("Paid")


def again(report):
    report.render("csv")


def all_of_them():
    Report.rebuild_all()
"""


def _app(write_files: Callable[[dict[str, str]], Path], views: str = VIEWS) -> Path:
    return write_files(
        {
            "app/__init__.py": "",
            "app/reports.py": REPORTS,
            "app/models.py": MODELS,
            "app/views.py": views,
        }
    )


def _inventory(root: Path, *sites: tuple[str, Pattern, str, str]) -> Inventory:
    return build_inventory(
        root, [("app/views.py", at, pattern, job, written) for at, pattern, job, written in sites]
    )


def test_a_dataclass_instance_s_method_moves_with_its_instance_tagged(
    write_files: Callable[[dict[str, str]], Path],
) -> None:
    root = _app(write_files)
    thread = ("Thread(", Pattern.THREAD, "app.reports.Report.render", "report.render")

    result = plan_apply(root, _inventory(root, thread), scanner=None)

    [outcome] = result.outcomes
    assert outcome.status is Status.REWRITTEN, outcome.reason
    views = next(c.after for c in result.changes if c.path == "app/views.py")
    assert 'report.render.options(inline=InlineShape.THREAD).enqueue("pdf")' in views
    reports = next(c.after for c in result.changes if c.path == "app/reports.py")
    assert '    @job(pool="batch", idempotent=True)\n    def render(self, fmt: str)' in reports
    first = outcome.crossings[0]
    assert (first.name, first.source, first.how) == ("self", "report", Crossing.CODEC)
    assert first.detail == "tagged (app.reports.Report)"


def test_an_orm_loaded_instance_s_method_moves_by_reference(
    write_files: Callable[[dict[str, str]], Path],
) -> None:
    root = _app(write_files)
    call = ('order.notify("Paid")', Pattern.DIRECT_CALL, "app.models.Order.notify", "order.notify")

    result = plan_apply(root, _inventory(root, call), scanner=None)

    [outcome] = result.outcomes
    assert outcome.status is Status.REWRITTEN, outcome.reason
    views = next(c.after for c in result.changes if c.path == "app/views.py")
    assert 'order.notify.enqueue("Paid")' in views
    assert outcome.crossings[0].detail == "model instance (app.models.Order), by reference"


def test_an_instance_of_undeclared_type_stays_and_the_reason_s_change_moves_it(
    write_files: Callable[[dict[str, str]], Path],
) -> None:
    """``report`` is an unannotated parameter: no codec is known to store it. Declaring its
    type, the one change the reason names, makes the site move."""
    root = _app(write_files)
    call = (
        'report.render("csv")',
        Pattern.DIRECT_CALL,
        "app.reports.Report.render",
        "report.render",
    )

    [outcome] = plan_apply(root, _inventory(root, call), scanner=None).outcomes

    assert outcome.status is Status.SKIPPED
    assert "is called on `report`, which is neither a module-level object" in outcome.reason
    assert "parameter `report` has no annotation" in outcome.reason
    assert (
        "when `report` is a model instance (stored by reference) or a dataclass" in outcome.reason
    )

    root = _app(write_files, VIEWS.replace("def again(report):", "def again(report: Report):"))
    [outcome] = plan_apply(root, _inventory(root, call), scanner=None).outcomes

    assert outcome.status is Status.REWRITTEN, outcome.reason


REBUILD = (
    "Report.rebuild_all()",
    Pattern.DIRECT_CALL,
    "app.reports.Report.rebuild_all",
    "Report.rebuild_all",
)


def test_a_classmethod_moves_registered_above_classmethod(
    write_files: Callable[[dict[str, str]], Path],
) -> None:
    """A classmethod needs no instance: the class is importable, and the runtime binds a job
    registered above ``@classmethod`` to the class it is read from (its ``cls``)."""
    root = _app(write_files)
    result = plan_apply(root, _inventory(root, REBUILD), scanner=None)

    [outcome] = result.outcomes
    assert outcome.status is Status.REWRITTEN, outcome.reason
    views = next(c.after for c in result.changes if c.path == "app/views.py")
    assert "    Report.rebuild_all.enqueue()\n" in views
    reports = next(c.after for c in result.changes if c.path == "app/reports.py")
    assert (
        '    @job(pool="batch", idempotent=True)\n    @classmethod\n    def rebuild_all' in reports
    )
    first = outcome.crossings[0]
    assert (first.name, first.source, first.how) == ("cls", "Report", Crossing.CODEC)
    assert first.detail == "class (app.reports.Report or a subclass), by its import path"


_RUN_MOVED = """
from queue_runtime import Mode, Settings, configure
from queue_runtime.registry import default_registry
from queue_runtime.testing import memory_stores
from requests import posted

settings = Settings(mode=Mode.QUEUE)
runtime = configure(settings, stores=memory_stores(settings))

from app import views

views.all_of_them()
assert posted == [], "queued, not run in the request"
[claimed] = runtime.store.claim("batch", 10, "test")
definition = default_registry.definition(claimed.name)
args, kwargs = definition.codec.decode(claimed.args)
definition.fn(*args, **kwargs)
print(claimed.name, claimed.args["cls"]["cls"], posted)
"""


def test_the_moved_classmethod_is_queued_and_runs_on_its_class(
    write_files: Callable[[dict[str, str]], Path],
) -> None:
    root = _app(write_files)
    result = plan_apply(root, _inventory(root, REBUILD), scanner=None)
    for change in result.changes:
        (root / change.path).write_text(change.after)
    (root / "app/models.py").write_text("Order = None\n")  # Django models need settings
    # what the job calls, recorded (the network is not under test)
    (root / "requests.py").write_text("posted = []\n\n\ndef post(url):\n    posted.append(url)\n")

    ran = subprocess.run(
        [sys.executable, "-c", _RUN_MOVED], cwd=root, capture_output=True, text=True, check=False
    )

    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.split(" ", 2) == [
        "app.reports.Report.rebuild_all",
        "app.reports:Report",
        "['https://files.example.com/rebuild']\n",
    ]


def test_self_in_a_model_s_method_is_the_model_instance_and_a_view_s_self_stays(
    write_files: Callable[[dict[str, str]], Path],
) -> None:
    root = _app(write_files)
    sites = [
        (
            "app/models.py",
            'self.notify("Paid")',
            Pattern.DIRECT_CALL,
            "app.models.Order.notify",
            "self.notify",
        ),
        (
            "app/models.py",
            "self.welcome(request",
            Pattern.DIRECT_CALL,
            "app.models.SignupView.welcome",
            "self.welcome",
        ),
    ]

    result = plan_apply(root, build_inventory(root, sites), scanner=None)

    paid, welcome = sorted(result.outcomes, key=lambda o: o.site.location.line)
    assert paid.status is Status.REWRITTEN, paid.reason
    assert paid.crossings[0].detail == "model instance (app.models.Order), by reference"
    models = next(c.after for c in result.changes if c.path == "app/models.py")
    assert 'self.notify.enqueue("Paid")' in models
    assert welcome.status is Status.SKIPPED
    assert "`self` is a SignupView, which is not a model, dataclass, pydantic or attrs class" in (
        welcome.reason
    )


def test_a_module_written_in_python_3_12_syntax_is_read_as_the_scan_reads_it(
    write_files: Callable[[dict[str, str]], Path],
) -> None:
    """``type OrderId = int`` (PEP 695) does not parse with Python 3.11's ``ast``; apply reads
    such a module as the scan does, so a declaration in it counts: the argument is proven
    JSON, not left to be checked at run time. (A module apply must edit has to compile
    under the Python running migrator: that rail stays.)"""
    root = write_files(
        {
            "app/__init__.py": "",
            "app/types.py": "type OrderId = int\n",
            "app/jobs.py": "def send(order_id):\n    ...\n",
            "app/views.py": (
                "from app.jobs import send\nfrom app.types import OrderId\n\n\n"
                "def view(oid: OrderId):\n    send(oid)\n"
            ),
        }
    )
    inventory = build_inventory(
        root, [("app/views.py", "send(oid)", Pattern.DIRECT_CALL, "app.jobs.send")]
    )
    inventory.sites[0].arguments = [Argument(name="#0", source="oid", serialisable=None)]

    [outcome] = plan_apply(root, inventory, scanner=None).outcomes

    assert outcome.status is Status.REWRITTEN, outcome.reason
    assert [c.how for c in outcome.crossings] == [Crossing.JSON], outcome.crossings


def test_a_method_overridden_in_a_subclass_stays(
    write_files: Callable[[dict[str, str]], Path],
) -> None:
    """An instance of the subclass would call its own ``render``, which has no ``.enqueue``,
    and a worker would run the base one: the site stays, the reason names the override."""
    reports = REPORTS + (
        "\n\n@dataclass\nclass Draft(Report):\n    def render(self, fmt: str) -> None:\n"
        "        return None\n"
    )
    root = _app(write_files)
    (root / "app/reports.py").write_text(reports)
    thread = ("Thread(", Pattern.THREAD, "app.reports.Report.render", "report.render")

    [outcome] = plan_apply(root, _inventory(root, thread), scanner=None).outcomes

    assert outcome.status is Status.SKIPPED
    assert "`report.render` is overridden in app.reports.Draft" in outcome.reason


LOCAL_CLASS = """import requests


def build():
    class Local:
        @classmethod
        def ping(cls):
            requests.post("https://files.example.com/ping")

    Local.ping()
"""


def test_a_classmethod_of_a_class_inside_a_function_stays_and_moves_at_module_level(
    write_files: Callable[[dict[str, str]], Path],
) -> None:
    """No name a worker imports reaches a class made inside a function: the reason says to
    move the class to module level, and there it moves."""
    root = write_files({"app/__init__.py": "", "app/build.py": LOCAL_CLASS})
    local = (
        "app/build.py",
        "Local.ping()",
        Pattern.DIRECT_CALL,
        "app.build.build.<locals>.Local.ping",
        "Local.ping",
    )

    [outcome] = plan_apply(root, build_inventory(root, [local]), scanner=None).outcomes

    assert outcome.status is Status.SKIPPED
    assert outcome.reason.startswith("@classmethod of a class defined inside a function")

    lifted = LOCAL_CLASS.replace("def build():\n    class Local:", "class Local:").replace(
        "\n    Local.ping()", "\n\ndef build():\n    Local.ping()"
    )
    root = write_files({"app/build.py": lifted.replace("\n        ", "\n    ")})
    moved = (
        "app/build.py",
        "Local.ping()",
        Pattern.DIRECT_CALL,
        "app.build.Local.ping",
        "Local.ping",
    )
    [outcome] = plan_apply(root, build_inventory(root, [moved]), scanner=None).outcomes

    assert outcome.status is Status.REWRITTEN, outcome.reason


OVERRIDDEN = """import threading

import requests


class Catalog:
    @classmethod
    def refresh(cls, url):
        requests.put(url)

    @classmethod
    def start(cls, url):
        threading.Thread(target=cls.refresh, args=(url,)).start()


class Mirror(Catalog):
    @classmethod
    def refresh(cls, url):
        requests.put(url + "/mirror")
"""


def test_a_classmethod_a_subclass_overrides_stays_when_read_from_cls_until_the_override_is_a_job(
    write_files: Callable[[dict[str, str]], Path],
) -> None:
    """``Mirror.start(url)`` runs ``cls.refresh`` with ``cls`` = Mirror: the override, which
    has no ``.enqueue``. Giving the override its own ``@job``, the change the reason names,
    makes the site move."""
    root = write_files({"app/__init__.py": "", "app/catalog.py": OVERRIDDEN})
    site = (
        "app/catalog.py",
        "Thread(",
        Pattern.THREAD,
        "app.catalog.Catalog.refresh",
        "cls.refresh",
    )

    [outcome] = plan_apply(root, build_inventory(root, [site]), scanner=None).outcomes

    assert outcome.status is Status.SKIPPED
    assert "`cls.refresh` is read from a class that may be app.catalog.Mirror" in outcome.reason
    assert "give the override the same `@job`" in outcome.reason

    registered = "from queue_runtime import job\n" + OVERRIDDEN.replace(
        "class Mirror(Catalog):\n    @classmethod",
        'class Mirror(Catalog):\n    @job(pool="batch", idempotent=True)\n    @classmethod',
    )
    root = write_files({"app/catalog.py": registered})
    [outcome] = plan_apply(root, build_inventory(root, [site]), scanner=None).outcomes

    assert outcome.status is Status.REWRITTEN, outcome.reason


def test_a_classmethod_called_by_its_own_class_moves_though_a_subclass_overrides_it(
    write_files: Callable[[dict[str, str]], Path],
) -> None:
    views = OVERRIDDEN + "\n\ndef view(url):\n    Catalog.refresh(url)\n"
    root = write_files({"app/__init__.py": "", "app/catalog.py": views})
    site = (
        "app/catalog.py",
        "Catalog.refresh(url)",
        Pattern.DIRECT_CALL,
        "app.catalog.Catalog.refresh",
        "Catalog.refresh",
    )

    [outcome] = plan_apply(root, build_inventory(root, [site]), scanner=None).outcomes

    assert outcome.status is Status.REWRITTEN, outcome.reason
