"""A catalogue glob's wildcard stops at a call's result unless the entry spells one.

A resolved target names every call it goes through (``acme.connect().send`` is the ``send``
of what ``acme.connect`` returned). fnmatch's ``*`` crossed those: a user's ``acme.*``
(every function of acme is pure) also explained ``send`` on the connection acme hands back,
and the shipped ``typing.[a-z_]*`` / ``copy.*`` did the same to a job's own methods (stop 50).
An entry about what a call returns spells it (``sqlalchemy.select().*``) and then reaches
the whole chain after it."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest

from inventory import Idempotency, Inventory
from inventory._catalogue import Catalogue, CatalogueSpec, PureEntry, glob_regex
from tests.unit.inventory.classify_builders import CATALOGUE, call

Scanner = Callable[[dict[str, str]], Inventory]


@pytest.mark.parametrize(
    ("pattern", "target", "matches"),
    [
        ("acme.*", "acme.connect", True),
        ("acme.*", "acme.sub.helper", True),
        ("acme.*", "acme.connect().send", False),
        ("acme.?", "acme.x", True),
        ("acme.[a-c]*", "acme.connect().send", False),
        ("acme.[!x]*", "acme.connect", True),
        ("acme.connect().*", "acme.connect().send", True),
        ("acme.connect().*", "acme.connect().cursor().execute", True),
        ("acme.*.run", "acme.make().run", False),
    ],
)
def test_wildcards_stop_at_a_call_unless_the_entry_spells_one(
    pattern: str, target: str, matches: bool
) -> None:
    assert bool(re.match(glob_regex(pattern), target)) is matches


def test_a_pure_glob_explains_the_module_not_what_its_functions_return() -> None:
    merged = Catalogue.load(CatalogueSpec(pure=[PureEntry(call="acme.*")]))
    assert merged.is_pure(call("acme.connect"), "acme.connect", unknown_receiver=False)
    sent = "acme.connect().send"
    assert not merged.is_pure(call(sent), sent, unknown_receiver=False)


def test_the_shipped_pure_globs_do_not_reach_through_a_call() -> None:
    # ``typing.[a-z_]*``, ``copy.*``, ``json.*``: the modules' functions, not what they
    # hand back (a job, a parsed document), whose methods are read or left a gap.
    for target in ("typing.cast().run", "copy.copy().run", "json.loads().post"):
        assert not CATALOGUE.is_pure(call(target), target, unknown_receiver=False), target


PYPROJECT = """[[tool.migrator.catalogue.pure]]
call = "acme.*"
"""

APP = """import threading

import acme


def ping():
    acme.version()


def deliver(body):
    acme.connect().send(body)


def view(body):
    threading.Thread(target=ping).start()
    threading.Thread(target=deliver, args=(body,)).start()
"""


def test_a_job_using_what_a_pure_module_returns_is_a_gap(scan_project: Scanner) -> None:
    jobs = {j.qualname: j for j in scan_project({"pyproject.toml": PYPROJECT, "app.py": APP}).jobs}
    assert jobs["app.ping"].idempotency is Idempotency.IDEMPOTENT, jobs["app.ping"].evidence
    deliver = jobs["app.deliver"]
    assert deliver.idempotency is Idempotency.UNKNOWN, deliver.evidence
    assert [u.call for u in deliver.unexplained] == ["acme.connect().send"]


RESULTS = """import random
import threading

import sqlalchemy as sa
from django.contrib.contenttypes.models import ContentType
from PIL import ImageOps
from prometheus_client import Counter
from sqlalchemy import func
from sqlalchemy.sql.expression import exists

HITS = Counter("hits", "Hits", ["kind"])


def token():
    return random.getrandbits(64).to_bytes(8, "big")


def count():
    HITS.labels("x").inc()


def thumb(img):
    return ImageOps.fit(img, (10, 10)).convert("RGB")


def ctype(db):
    return ContentType.objects.db_manager(db).get_by_natural_key("auth", "user")


def query(table, name):
    return sa.select(table).where(func.lower(table.c.name).like(name), exists().where(table.c.id > 1))


def view():
    threading.Thread(target=token).start()
    threading.Thread(target=count).start()
    threading.Thread(target=thumb, args=(1,)).start()
    threading.Thread(target=ctype, args=("default",)).start()
    threading.Thread(target=query, args=(1, "a")).start()
"""


def test_what_documented_calls_return_is_typed_not_globbed(scan_project: Scanner) -> None:
    """The chains the crossing glob used to explain, each typed from its documentation:
    getrandbits returns an int, a metric's labels() its child metric, ImageOps.fit an
    Image, a manager's db_manager() the manager; SQLAlchemy's expression constructors
    and ``func.<name>()`` build SQL up to the end of the chain."""
    jobs = {j.qualname: j for j in scan_project({"app.py": RESULTS}).jobs}
    for name in ("token", "thumb", "ctype", "query"):
        job = jobs[f"app.{name}"]
        assert job.idempotency is Idempotency.IDEMPOTENT, (name, job.unexplained)
    assert {e.api for e in jobs["app.count"].effects} == {"prometheus_client.Counter.inc"}
    assert {e.api for e in jobs["app.ctype"].effects} == {
        "django.contrib.contenttypes.models.ContentType.objects.get_by_natural_key"
    }
