"""``x.m()`` on a receiver whose class is declared runs that class's ``m`` or an override.

Written from Python's data model: an annotation, a factory's return type or ``cls`` name a
class, and the object may be an instance of any subclass (the method is looked up along the
instance's class's MRO), so each project override below the declared class may run. A
constructor call of the class itself (``Backend().m()``) makes an instance of exactly that
class, and ``super().m()`` runs the next class of the MRO: neither dispatches. Not from any
scanned project; the census sample (bench/census/results/no-entry-point-sample-2026-12-02.md)
only said that this shape is common."""

from __future__ import annotations

import pytest

from inventory import Idempotency, Inventory, scan
from inventory.models import EffectKind, Job

_BACKENDS = """\
import requests


class Backend:
    def compute(self, spec):
        return len(spec)  # a dry run: the base does nothing outside

    @classmethod
    def build(cls, name):
        return cls().compute(name)


class CloudBackend(Backend):
    def compute(self, spec):
        requests.post("https://cloud.example/vm", json=spec)


class LocalBackend(Backend):
    def compute(self, spec):
        with open("/tmp/spec", "w") as f:
            f.write(str(spec))


class Compute:
    def get_offers(self, spec):
        raise NotImplementedError


class CloudCompute(Compute):
    def get_offers(self, spec):
        return requests.get("https://cloud.example/offers").json()


class Provider:
    def compute(self) -> Compute:
        raise NotImplementedError


def get_backend(name: str) -> Backend:
    if name == "cloud":
        return CloudBackend()
    return LocalBackend()
"""

_JOBS = """\
import threading

from app.backends import Backend, Provider, get_backend


def run_annotated(backend: Backend, spec):
    backend.compute(spec)


def run_factory(name, spec):
    get_backend(name).compute(spec)


def run_factory_bound(name, spec):
    backend = get_backend(name)
    backend.compute(spec)


def run_exact(spec):
    Backend().compute(spec)


def run_exact_bound(spec):
    backend = Backend()
    backend.compute(spec)


def offers(provider: Provider, spec):
    return provider.compute().get_offers(spec)


def offers_bound(provider: Provider, spec):
    compute = provider.compute()
    return compute.get_offers(spec)


def run_from_classmethod(name):
    Backend.build(name)


def view(request):
    threading.Thread(target=run_annotated, args=(None, {})).start()
    threading.Thread(target=run_factory, args=("cloud", {})).start()
    threading.Thread(target=run_factory_bound, args=("cloud", {})).start()
    threading.Thread(target=run_exact, args=({},)).start()
    threading.Thread(target=run_exact_bound, args=({},)).start()
    threading.Thread(target=run_from_classmethod, args=("x",)).start()
    threading.Thread(target=offers, args=(None, {})).start()
    threading.Thread(target=offers_bound, args=(None, {})).start()
"""


@pytest.fixture(scope="module")
def inventory(tmp_path_factory: pytest.TempPathFactory) -> Inventory:
    root = tmp_path_factory.mktemp("declared") / "app"
    (root / "app").mkdir(parents=True)
    (root / "app" / "__init__.py").write_text("", encoding="utf-8")
    (root / "app" / "backends.py").write_text(_BACKENDS, encoding="utf-8")
    (root / "app" / "jobs.py").write_text(_JOBS, encoding="utf-8")
    return scan(root, use_cache=False, jobs=1)


def _job(inventory: Inventory, name: str) -> Job:
    found = inventory.job(f"app.jobs.{name}")
    assert found is not None, name
    return found


_BOTH = {
    (EffectKind.HTTP_POST, "app.backends.CloudBackend.compute"),
    (EffectKind.FILE_WRITE, "app.backends.LocalBackend.compute"),
}


@pytest.mark.parametrize("name", ["run_annotated", "run_factory", "run_factory_bound"])
def test_a_declared_receiver_runs_every_override(inventory: Inventory, name: str) -> None:
    job = _job(inventory, name)
    assert {(e.kind, e.chain[1]) for e in job.effects} == _BOTH
    assert job.idempotency is Idempotency.NON_IDEMPOTENT
    assert not any("guessed" in e.message for e in job.evidence)


def test_cls_in_a_classmethod_is_the_class_or_a_subclass(inventory: Inventory) -> None:
    job = _job(inventory, "run_from_classmethod")
    assert {(e.kind, e.chain[-1]) for e in job.effects} == _BOTH


@pytest.mark.parametrize("name", ["run_exact", "run_exact_bound"])
def test_a_constructed_receiver_runs_its_class_s_own_method(
    inventory: Inventory, name: str
) -> None:
    job = _job(inventory, name)
    assert job.effects == []
    assert job.idempotency is Idempotency.IDEMPOTENT


@pytest.mark.parametrize("name", ["offers", "offers_bound"])
def test_what_a_method_declares_it_returns_dispatches_too(inventory: Inventory, name: str) -> None:
    """``provider.compute().get_offers()``: ``compute`` is declared ``-> Compute`` in another
    module; its empty ``get_offers`` runs the override, a real callee (not a guess)."""
    job = _job(inventory, name)
    assert {(e.kind, e.chain[-1]) for e in job.effects} == {
        (EffectKind.HTTP_GET, "app.backends.CloudCompute.get_offers")
    }
    assert job.idempotency is Idempotency.IDEMPOTENT
