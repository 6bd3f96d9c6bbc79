"""What an attribute annotated as a container holds, on an instance of a class of another
module (``for r in manifest.repos`` with ``manifest: Manifest`` and ``repos: list[Repo]``),
and ``next(...)`` over what is iterated: typed as a type checker types them, so the method
called on the element is followed; a mapping iterates its keys, never its values."""

from __future__ import annotations

from pathlib import Path

import pytest

from inventory import Idempotency
from tests.unit.inventory.fake_venv import scanned_job

MODELS = """\
import requests


class Repo:
    def install(self):
        requests.post("https://example.com/install")


class Manifest:
    repos: list[Repo]
    by_name: dict[str, Repo]

    def __init__(self, repos: list[Repo], by_name: dict[str, Repo]):
        self.repos = repos
        self.by_name = by_name


class Plain:
    def __init__(self, repos):
        self.repos = repos
"""

VIEWS = """\
import threading

from shop.jobs import job


def view(request, manifest, plain):
    threading.Thread(target=job, args=(manifest, plain)).start()
"""


def _job(tmp_path: Path, body: str) -> tuple[Idempotency, list[str]]:
    files = {
        "shop/__init__.py": "",
        "shop/models.py": MODELS,
        "shop/views.py": VIEWS,
        "shop/jobs.py": "from shop.models import Manifest, Plain\n\n\n" + body,
    }
    return scanned_job(tmp_path, files, "shop.jobs.job")


@pytest.mark.parametrize(
    "body",
    [
        # iterating the attribute, directly and through enumerate / sorted
        "def job(manifest: Manifest, plain):\n    for r in manifest.repos:\n        r.install()\n",
        "def job(manifest: Manifest, plain):\n"
        "    for i, r in enumerate(sorted(manifest.repos, key=id)):\n        r.install()\n",
        # one value of it: an index, a subscript written inline, a mapping's get / values()
        "def job(manifest: Manifest, plain):\n    first = manifest.repos[0]\n    first.install()\n",
        "def job(manifest: Manifest, plain):\n    manifest.repos[-1].install()\n",
        "def job(manifest: Manifest, plain):\n"
        "    repo = manifest.by_name.get('x')\n    if repo:\n        repo.install()\n",
        "def job(manifest: Manifest, plain):\n"
        "    for r in manifest.by_name.values():\n        r.install()\n",
        # next(): the first match, the first element
        "def job(manifest: Manifest, plain):\n"
        "    r = next((r for r in manifest.repos if r), None)\n    if r:\n        r.install()\n",
        "def job(manifest: Manifest, plain):\n"
        "    if (r := next(iter(manifest.repos))):\n        r.install()\n",
        "def job(manifest: Manifest, plain):\n"
        "    repos: list[Manifest] = []\n"
        "    m = next(iter(repos))\n    m.repos[0].install()\n",
        # min / max / random.choice pick one; filter keeps some; pop() takes the last
        "def job(manifest: Manifest, plain):\n"
        "    r = max(manifest.repos, key=id, default=None)\n    if r:\n        r.install()\n",
        "import random\n\n"
        "def job(manifest: Manifest, plain):\n"
        "    r = random.choice(manifest.repos)\n    r.install()\n",
        "def job(manifest: Manifest, plain):\n"
        "    for r in filter(None, manifest.repos):\n        r.install()\n",
        "def job(manifest: Manifest, plain):\n    manifest.repos.pop().install()\n",
        # a local list of them: indexed, popped
        "def job(manifest: Manifest, plain):\n"
        "    repos = sorted(manifest.repos, key=id)\n    repos[0].install()\n    repos.pop().install()\n",
        "def job(manifest: Manifest, plain):\n    manifest.by_name.get('x').install()\n",
        "def job(manifest: Manifest, plain):\n"
        "    manifest.by_name.setdefault('x', None).install()\n",
    ],
)
def test_the_element_of_an_annotated_attribute_is_followed(tmp_path: Path, body: str) -> None:
    verdict, unexplained = _job(tmp_path, body)
    # Repo.install posts: followed, the job repeats a POST on retry.
    assert verdict is Idempotency.NON_IDEMPOTENT, unexplained
    assert unexplained == []


@pytest.mark.parametrize(
    "body",
    [
        # a dict iterates its keys: not a Repo
        "def job(manifest: Manifest, plain):\n    for k in manifest.by_name:\n        k.install()\n",
        # an attribute no annotation types
        "def job(manifest: Manifest, plain: Plain):\n    for r in plain.repos:\n        r.install()\n",
        # next() over what is not known
        "def job(manifest: Manifest, plain):\n    r = next(iter(plain))\n    r.install()\n",
        # max(a, b) compares its two arguments: it is not an element of the first
        "def job(manifest: Manifest, plain):\n"
        "    r = max(manifest.repos, plain)\n    r.install()\n",
    ],
)
def test_what_is_not_known_stays_a_gap(tmp_path: Path, body: str) -> None:
    verdict, unexplained = _job(tmp_path, body)
    assert verdict is Idempotency.UNKNOWN
    assert [u for u in unexplained if u.endswith(".install")], unexplained


RELATIONS = """\
from typing import List, Optional

import requests
from sqlalchemy.orm import DeclarativeBase, Mapped, relationship


class Base(DeclarativeBase):
    pass


class Source(Base):
    __tablename__ = "sources"

    def publish(self):
        requests.post("https://example.com/publish")


class Agent(Base):
    __tablename__ = "agents"
    sources: Mapped[List["Source"]] = relationship("Source")
    spare: Mapped[Optional[list[Source]]] = relationship("Source")
    names: Mapped[list[str]]

    def publish_all(self):
        return [s.publish() for s in self.sources]
"""


@pytest.mark.parametrize(
    ("job", "body"),
    [
        ("shop.models.Agent.publish_all", ""),
        (
            "shop.jobs.job",
            "def job(agent: Agent):\n    for s in agent.sources:\n        s.publish()\n",
        ),
        ("shop.jobs.job", "def job(agent: Agent):\n    agent.spare[0].publish()\n"),
    ],
)
def test_a_sqlalchemy_relationship_collection_holds_its_rows(
    tmp_path: Path, job: str, body: str
) -> None:
    """``sources: Mapped[List["Source"]] = relationship(...)`` (SQLAlchemy 2's declarative
    mapping): iterating the attribute gives Source rows."""
    files = {
        "shop/__init__.py": "",
        "shop/models.py": RELATIONS,
        "shop/views.py": "import threading\n\nfrom shop.jobs import job\nfrom shop.models import Agent\n\n\n"
        "def view(request, agent: Agent):\n"
        "    threading.Thread(target=job, args=(agent,)).start()\n"
        "    threading.Thread(target=agent.publish_all).start()\n",
        "shop/jobs.py": "from shop.models import Agent\n\n\n"
        + (body or "def job(agent: Agent):\n    pass\n"),
    }
    verdict, unexplained = scanned_job(tmp_path, files, job)
    assert verdict is Idempotency.NON_IDEMPOTENT, unexplained


def test_a_value_of_a_library_objects_attribute_keeps_what_its_method_name_says() -> None:
    """``hass = request.app[KEY]`` (aiohttp's Request: a library class): the value's type
    is not known, so ``hass.loop.call_soon_threadsafe(...)`` is still read by its method
    name (a hand-off to the event loop), and an annotation on the assignment wins."""
    from inventory._extract import extract_source

    summary = extract_source(
        "from aiohttp import web\n"
        "from shop.models import Registry\n\n\n"
        "async def upload(request: web.Request, fut):\n"
        "    hass = request.app['hass']\n"
        "    hass.loop.call_soon_threadsafe(fut.set_result, None)\n"
        "    registry: Registry = request.app['registry']\n"
        "    registry.refresh()\n",
        "shop/views.py",
        "shop.views",
    )
    assert [(s.span.line, s.target) for s in summary.sites] == [(7, "?.set_result")]
    calls = {c.span.line: c.target for f in summary.functions for c in f.calls}
    assert calls[7] == "?.call_soon_threadsafe"
    assert calls[9] == "shop.models.Registry.refresh"
