"""``return cls.model_validate(data)`` in a classmethod: pydantic's documented alternate
constructors return an instance of the class they are called on, as ``return cls(...)``
does, so the classmethod's result is typed and its methods are followed. Another class
method called on ``cls`` says nothing about what it returns."""

from __future__ import annotations

from inventory.models import EffectKind, Idempotency, Job
from tests.unit.inventory.fake_venv import classified_jobs

_MODEL = """
import requests
from pydantic import BaseModel


class Card(BaseModel):
    title: str

    @classmethod
    def blank(cls, title):
        return cls.model_construct(title=title)

    @classmethod
    def parsed(cls, data):
        return cls.model_validate(data)

    @classmethod
    def cached(cls, title):
        return cls.lookup(title)

    @classmethod
    def lookup(cls, title):
        return CACHE.get(title)

    def publish(self):
        requests.post("https://hooks.example.com/cards", json={"title": self.title})


CACHE = {}
"""

_JOBS = """
import threading

from shop.models import Card


def from_blank(title):
    Card.blank(title).publish()


def from_data(data):
    card = Card.parsed(data)
    card.publish()


def from_cache(title):
    card = Card.cached(title)
    card.publish()


def start(title, data):
    threading.Thread(target=from_blank, args=(title,)).start()
    threading.Thread(target=from_data, args=(data,)).start()
    threading.Thread(target=from_cache, args=(title,)).start()
"""


def _jobs() -> dict[str, Job]:
    return classified_jobs(
        {"shop/__init__.py": "", "shop/models.py": _MODEL, "shop/jobs.py": _JOBS}
    )


def test_a_pydantic_constructor_on_cls_returns_the_class() -> None:
    jobs = _jobs()
    for name in ("shop.jobs.from_blank", "shop.jobs.from_data"):
        job = jobs[name]
        assert job.idempotency == Idempotency.NON_IDEMPOTENT, [e.message for e in job.evidence]
        assert {e.kind for e in job.effects} == {EffectKind.HTTP_POST}
        assert any("Card.publish" in " ".join(e.chain) for e in job.effects)


def test_another_class_method_on_cls_types_nothing() -> None:
    """``cls.lookup(title)`` returns whatever the cache holds: the card it names is not
    known to be a Card, so its ``publish()`` is never decided as Card's."""
    job = _jobs()["shop.jobs.from_cache"]
    assert job.idempotency != Idempotency.IDEMPOTENT
    assert not any("Card.publish" in " ".join(e.chain) for e in job.effects)
