"""What a method returning its own class's instance and a function returning a tuple give,
to a caller in another module: ``-> Self`` (PEP 673), ``return cls(...)`` in a classmethod,
``return self``; ``a, b = pair()`` (annotated ``-> tuple[A, B]`` or returning a tuple),
awaited too. The method called on what they give is followed; what is not known stays a gap."""

from __future__ import annotations

from pathlib import Path

import pytest

from inventory import Idempotency
from tests.unit.inventory.fake_venv import scanned_job

MODELS = """\
from typing import Optional, Self

import requests


class Repo:
    def install(self):
        requests.post("https://example.com/install")

    @classmethod
    def load(cls, name) -> Self:
        return cls.__new__(cls)

    @classmethod
    def build(cls, name):
        if not name:
            return None
        return cls()

    def named(self, name):
        self.name = name
        return self

    def other(self, name):
        if name:
            return self
        return name


class Quiet(Repo):
    def install(self):
        return None


class Index:
    pass


def lookup(name):
    return name


def pair(name):
    return Repo(), Index()


def annotated(name) -> "tuple[Index, Repo]":
    return lookup(name)


async def fetched(name) -> Optional[tuple[Index, Repo]]:
    return await lookup(name)


def mixed(name) -> tuple[Repo, ...]:
    return lookup(name)
"""

VIEWS = """\
import threading

from shop.jobs import job


def view(request):
    threading.Thread(target=job, args=("x",)).start()
"""


def _job(tmp_path: Path, body: str) -> tuple[Idempotency, list[str]]:
    files = {
        "shop/__init__.py": "",
        "shop/models.py": MODELS,
        "shop/views.py": VIEWS,
        "shop/jobs.py": "from shop.models import Quiet, Repo, annotated, fetched, mixed, pair\n\n\n"
        + body,
    }
    return scanned_job(tmp_path, files, "shop.jobs.job")


@pytest.mark.parametrize(
    "body",
    [
        "def job(name):\n    Repo.load(name).install()\n",
        "def job(name):\n    repo = Repo.build(name)\n    if repo:\n        repo.install()\n",
        "def job(name):\n    Repo().named(name).install()\n",
        "def job(name):\n    repo, index = pair(name)\n    repo.install()\n",
        "def job(name):\n    index, repo = annotated(name)\n    repo.install()\n",
        "async def job(name):\n    index, repo = await fetched(name)\n    repo.install()\n",
    ],
)
def test_the_class_a_return_gives_is_followed(tmp_path: Path, body: str) -> None:
    verdict, unexplained = _job(tmp_path, body)
    # Repo.install posts: followed, the job repeats a POST on retry.
    assert verdict is Idempotency.NON_IDEMPOTENT, unexplained
    assert unexplained == []


@pytest.mark.parametrize(
    "body",
    [
        # returns self in one branch and its argument in the other: not one class
        "def job(name):\n    Repo().other(name).install()\n",
        # the other position of the tuple
        "def job(name):\n    repo, index = annotated(name)\n    repo.install()\n",
        # tuple[Repo, ...] has no positions
        "def job(name):\n    a, b = mixed(name)\n    a.install()\n",
    ],
)
def test_what_is_not_known_stays_a_gap(tmp_path: Path, body: str) -> None:
    verdict, unexplained = _job(tmp_path, body)
    assert verdict is Idempotency.UNKNOWN
    assert [u for u in unexplained if u.endswith(".install")], unexplained


@pytest.mark.parametrize(
    "body",
    [
        "def job(name):\n    Quiet.load(name).install()\n",
        "def job(name):\n    Quiet.build(name).install()\n",
        "def job(name):\n    Quiet().named(name).install()\n",
    ],
)
def test_a_subclass_gets_an_instance_of_itself(tmp_path: Path, body: str) -> None:
    """Called on a subclass, the inherited ``-> Self`` method gives the subclass: its own
    ``install`` (no effect) runs, not the base's POST."""
    verdict, unexplained = _job(tmp_path, body)
    assert verdict is Idempotency.IDEMPOTENT, unexplained
