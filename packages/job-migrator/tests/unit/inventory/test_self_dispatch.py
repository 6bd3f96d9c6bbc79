"""``self.m()`` / ``cls.m()`` in a base class runs the receiver's class's ``m``: overrides.

Written from Python's data model (a method call looks the name up along the instance's
class's MRO: "Method Resolution Order", the tutorial's "Inheritance" section) and the
template-method idiom it enables (a base's ``run`` calling ``self.deliver()``, which each
subclass defines), not from any scanned project. Before, an override was reached only as a
guess when the base's method was empty (the job stayed ``unknown``) and not at all when it
had a body of its own."""

from __future__ import annotations

import pytest

from inventory import Idempotency, Inventory, scan
from inventory._classify._dispatch import MAX_OVERRIDES
from inventory.models import EffectKind, Job

_JOBS = """\
import threading

import requests


class Exporter:
    def run(self, rows):
        self.prepare(rows)
        self.deliver(rows)

    def prepare(self, rows):
        return list(rows)

    def deliver(self, rows):
        raise NotImplementedError


class FileExporter(Exporter):
    def deliver(self, rows):
        with open("/tmp/out.csv", "w") as f:
            f.write(str(rows))


class WebhookExporter(FileExporter):
    def deliver(self, rows):
        requests.post("https://hooks.example/x", json=rows)


class Report:
    def build(self):
        return self.render()

    def render(self):
        return str(len("text"))


class AuditedReport(Report):
    def render(self):
        requests.post("https://audit.example/log", json={})
        return super().render()


class Settings:
    def load(self):
        return self.read()

    def read(self):
        return {}


class Registry:
    @classmethod
    def refresh(cls):
        cls.fetch()

    @classmethod
    def fetch(cls):
        return None


class RemoteRegistry(Registry):
    @classmethod
    def fetch(cls):
        requests.get("https://registry.example/")


class Plain(Report):
    def publish(self):
        Report.render(self)


def view(request):
    threading.Thread(target=Exporter().run, args=([1],)).start()
    threading.Thread(target=Report().build).start()
    threading.Thread(target=AuditedReport().render).start()
    threading.Thread(target=Settings().load).start()
    threading.Thread(target=Registry.refresh).start()
    threading.Thread(target=Plain().publish).start()
"""


def _plugins(count: int) -> str:
    """A base whose ``handle`` ``count`` subclasses override; only the last one (by name)
    has an effect, a POST."""
    lines = [
        "import threading",
        "import requests",
        "class Plugin:",
        "    def run(self):",
        "        self.handle()",
        "    def handle(self):",
        "        pass",
    ]
    for i in range(count):
        body = "requests.post('https://p.example/')" if i == count - 1 else "return None"
        lines += [f"class P{i:02d}(Plugin):", "    def handle(self):", f"        {body}"]
    lines += ["def view(request):", "    threading.Thread(target=Plugin().run).start()"]
    return "\n".join(lines) + "\n"


def _scan(tmp_path_factory: pytest.TempPathFactory, name: str, source: str) -> Inventory:
    root = tmp_path_factory.mktemp(name) / "app"
    (root / "app").mkdir(parents=True)
    (root / "app" / "__init__.py").write_text("", encoding="utf-8")
    (root / "app" / "jobs.py").write_text(source, encoding="utf-8")
    return scan(root, use_cache=False, jobs=1)


@pytest.fixture(scope="module")
def inventory(tmp_path_factory: pytest.TempPathFactory) -> Inventory:
    return _scan(tmp_path_factory, "dispatch", _JOBS)


def _line(text: str) -> int:
    return next(i for i, line in enumerate(_JOBS.splitlines(), 1) if text in line)


def _job(inventory: Inventory, name: str) -> Job:
    found = inventory.job(f"app.jobs.{name}")
    assert found is not None, name
    return found


def test_an_empty_base_method_runs_every_override_below(inventory: Inventory) -> None:
    """The grandchild's override counts too; each effect is evidence at its own line."""
    job = _job(inventory, "Exporter.run")
    assert job.idempotency is Idempotency.NON_IDEMPOTENT
    where = {(e.kind, e.chain[1]) for e in job.effects}
    assert where == {
        (EffectKind.FILE_WRITE, "app.jobs.FileExporter.deliver"),
        (EffectKind.HTTP_POST, "app.jobs.WebhookExporter.deliver"),
    }
    assert {e.location.line for e in job.effects} == {
        _line("with open("),
        _line('requests.post("https://hooks'),
    }
    assert not any("guessed" in e.message for e in job.evidence)


def test_a_base_method_with_a_body_is_combined_with_its_overrides(inventory: Inventory) -> None:
    job = _job(inventory, "Report.build")
    assert job.idempotency is Idempotency.NON_IDEMPOTENT  # the worst of the two wins
    assert [(e.kind, e.chain[1]) for e in job.effects] == [
        (EffectKind.HTTP_POST, "app.jobs.AuditedReport.render")
    ]


def test_super_call_runs_the_base_method_only(inventory: Inventory) -> None:
    job = _job(inventory, "AuditedReport.render")
    assert [e.kind for e in job.effects] == [EffectKind.HTTP_POST]
    assert all(len(e.chain) == 1 for e in job.effects)


def test_a_class_no_subclass_overrides_runs_its_own_method(inventory: Inventory) -> None:
    job = _job(inventory, "Settings.load")
    assert job.idempotency is Idempotency.IDEMPOTENT
    assert job.effects == []


def test_cls_in_a_classmethod_dispatches_too(inventory: Inventory) -> None:
    job = _job(inventory, "Registry.refresh")
    assert [(e.kind, e.chain[1]) for e in job.effects] == [
        (EffectKind.HTTP_GET, "app.jobs.RemoteRegistry.fetch")
    ]


def test_a_method_called_on_a_named_class_is_that_class_s(inventory: Inventory) -> None:
    """``Report.render(self)`` names the class: AuditedReport's override does not run."""
    job = _job(inventory, "Plain.publish")
    assert job.effects == []
    assert job.idempotency is Idempotency.IDEMPOTENT


def test_overrides_past_the_cap_are_one_gap(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Sorted by name, the first MAX_OVERRIDES are followed: the POSTing one is not."""
    inventory = _scan(tmp_path_factory, "plugins", _plugins(MAX_OVERRIDES + 2))
    job = inventory.job("app.jobs.Plugin.run")
    assert job is not None
    assert job.effects == []
    assert job.idempotency is Idempotency.UNKNOWN
    gaps = [m.message for m in job.evidence if m.message.startswith("unresolved calls")]
    assert gaps == [
        "unresolved calls (overridden by more classes than are followed: which one runs is "
        "only known at run time): app.jobs.Plugin.handle"
    ]


def test_within_the_cap_every_override_is_followed(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    inventory = _scan(tmp_path_factory, "few_plugins", _plugins(MAX_OVERRIDES))
    job = inventory.job("app.jobs.Plugin.run")
    assert job is not None
    last = f"app.jobs.P{MAX_OVERRIDES - 1:02d}.handle"
    assert [(e.kind, e.chain[1]) for e in job.effects] == [(EffectKind.HTTP_POST, last)]
    assert job.idempotency is Idempotency.NON_IDEMPOTENT
