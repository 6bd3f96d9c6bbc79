"""Types through helpers (issue 10): elements of what a helper returns, querysets a helper
returns, and new instances a helper returns. The edges of each rule, beyond the rule examples."""

from __future__ import annotations

from textwrap import dedent

import pytest

from inventory._catalogue import Catalogue
from inventory._classify import classify
from inventory._classify._index import SymbolIndex, SymbolKind
from inventory._extract import extract_source
from inventory.config import MigratorConfig
from inventory.models import EffectKind, Idempotency, Job
from inventory.summary import FileSummary

_STATS = """
from collections.abc import Generator, Iterable, Iterator, Sequence
from typing import Optional

class Stat:
    def refresh(self):
        pass

class Holder:
    def a(self) -> Iterable[Stat]: ...
    def b(self) -> list["Stat"]: ...
    def c(self) -> "tuple[Stat, ...]": ...
    def d(self) -> Optional[Sequence[Stat]]: ...
    def e(self) -> Generator[Stat | None, None, None]: ...
    def f(self) -> Iterator[Stat] | None: ...
    def pair(self) -> tuple[Stat, int]: ...
    def names(self) -> list[str]: ...
    def built(self):
        for i in range(3):
            yield Stat()
    def mixed(self):
        yield Stat()
        yield from self.a()
    def untyped(self, x):
        yield Stat()
        yield x
"""


def _summary(module: str, source: str) -> FileSummary:
    path = module.replace(".", "/") + ".py"
    return extract_source(dedent(source).lstrip(), path, module)


def _calls(summary: FileSummary, function: str) -> dict[str, str]:
    fn = next(f for f in summary.functions if f.name == function)
    return {c.receiver_source: c.target for c in fn.calls}


def test_element_types_from_annotations_and_yields() -> None:
    summary = _summary("app.stats", _STATS)
    elements = {k: v for k, v in summary.assignments.items() if k.endswith("()[]")}
    typed = {f"Holder.{name}()[]": "app.stats.Stat" for name in "abcdef"}
    assert elements == {**typed, "Holder.built()[]": "app.stats.Stat"}
    # a generator's ``return`` is not what calling it gives
    assert "Holder.built()" not in summary.assignments


def test_loop_and_comprehension_variables_in_the_same_file() -> None:
    summary = _summary(
        "app.stats",
        _STATS
        + """
def job(holder: Holder, s):
    for stat in holder.a():
        stat.refresh()
    [item.refresh() for item in Holder().built()]
    for pair in holder.pair():
        pair.refresh()
    s.refresh()
""",
    )
    fn = next(f for f in summary.functions if f.name == "job")
    targets = [(c.receiver_source, c.target) for c in fn.calls if c.target.endswith("refresh")]
    assert ("stat", "app.stats.Stat.refresh") in targets
    assert ("item", "app.stats.Stat.refresh") in targets
    assert ("pair", "?.refresh") in targets  # tuple[Stat, int]: elements of two types
    assert ("s", "?.refresh") in targets  # a parameter: untouched


def test_a_comprehension_variable_does_not_outlive_the_comprehension() -> None:
    summary = _summary(
        "app.stats",
        _STATS
        + """
def job(stat):
    [stat.refresh() for stat in Holder().built()]
    stat.refresh()
""",
    )
    fn = next(f for f in summary.functions if f.name == "job")
    targets = [c.target for c in fn.calls if c.target.endswith("refresh")]
    assert targets == ["app.stats.Stat.refresh", "?.refresh"]


def test_elements_of_a_helper_of_another_module_are_typed_by_the_index() -> None:
    stats = _summary("app.stats", _STATS)
    jobs = _summary(
        "app.jobs",
        """
        from app.stats import Holder

        def job():
            for stat in Holder().b():
                stat.refresh()
            for odd in Holder().mixed():
                odd.refresh()
        """,
    )
    calls = {c.receiver_source: c for c in jobs.functions[0].calls}
    assert calls["stat"].returned_from == "app.stats.Holder.b()[]"
    index = SymbolIndex([stats, jobs])
    found = index.resolve("app.stats.Holder.b()[].refresh")
    assert (found.kind, found.name) == (SymbolKind.FUNCTION, "app.stats.Stat.refresh")
    assert index.resolve("app.stats.Holder.mixed()[].refresh").kind != SymbolKind.FUNCTION


_CATALOG = """
from django.db import models
from django.db.models import QuerySet

class Node(models.Model):
    def tree(self):
        return self.__class__.objects.filter(depth__gt=0)

    def via_type(self):
        return type(self).objects.all()

    @classmethod
    def roots(cls):
        qs = cls.objects.filter(depth=0)
        return qs

    def mixed(self):
        if self.pk:
            return Node.objects.all()
        return []

    def touch(self):
        pass

class Leaf(models.Model):
    pass

def annotated() -> QuerySet[Node]:
    return Node.objects.none()

def either(flag):
    if flag:
        return Node.objects.all()
    return Leaf.objects.all()
"""


def test_helpers_returning_querysets() -> None:
    summary = _summary("app.catalog", _CATALOG)
    returned = summary.assignments
    for helper in ("Node.tree()", "Node.via_type()", "Node.roots()", "annotated()"):
        assert returned.get(helper) == "app.catalog.Node.objects", helper
    assert "Node.mixed()" not in returned  # one return is a list
    assert "either()" not in returned  # querysets of two models


def test_calls_and_rows_of_a_returned_queryset() -> None:
    catalog = _summary("app.catalog", _CATALOG)
    jobs = _summary(
        "app.jobs",
        """
        from app.catalog import Node, annotated

        def job(node: Node):
            node.tree().update(flag=True)
            annotated().filter(x=1).delete()
            for row in node.tree():
                row.touch()
        """,
    )
    index = SymbolIndex([catalog, jobs])
    fn = jobs.functions[0]
    names = {c.receiver_source: index.resolve(c.target).name for c in fn.calls}
    assert names["node.tree()"] == "app.catalog.Node.objects.update"
    assert names["annotated().filter(x=1)"] == "app.catalog.Node.objects.filter().delete"
    row = next(c for c in fn.calls if c.receiver_source == "row")
    assert row.returned_from == "app.catalog.Node.tree()[]"
    found = index.resolve(f"{row.returned_from}.touch")
    assert (found.kind, found.name) == (SymbolKind.FUNCTION, "app.catalog.Node.touch")


_AUDIT = """
from django.db import models

class Entry(models.Model):
    action = models.CharField(max_length=20)

class Item(models.Model):
    def to_entry(self, action):
        if not action:
            return None
        entry = Entry(action=action)
        return entry

    def existing(self, action):
        return Entry(pk=self.pk, action=action)

    def positional(self, action):
        return Entry(None, action)

    def built(self, action):
        return self.to_entry(action)
"""


def test_helpers_returning_a_new_instance() -> None:
    summary = _summary("app.audit", _AUDIT)
    assert summary.fresh_returns == {
        "Item.to_entry": "app.audit.Entry",
        "Item.built": "app.audit.Item.to_entry()",
    }
    index = SymbolIndex([summary])
    assert index.fresh_class("app.audit.Item.built") == "app.audit.Entry"
    assert index.fresh_class("app.audit.Item.existing") is None


def _job(files: dict[str, str], job: str) -> Job:
    summaries = [_summary(module, source) for module, source in files.items()]
    config = MigratorConfig.from_toml("")
    _, jobs = classify(summaries, config, Catalogue.load(config.catalogue))
    return next(j for j in jobs if j.qualname == job)


_VIEWS = """
import threading
from app.jobs import job

def view(request):
    threading.Thread(target=job, args=(request.user.id,)).start()
"""


@pytest.mark.parametrize(
    ("helper", "verdict", "kind"),
    [
        ("to_entry", Idempotency.NON_IDEMPOTENT, EffectKind.DB_INSERT),
        ("built", Idempotency.NON_IDEMPOTENT, EffectKind.DB_INSERT),
        ("existing", Idempotency.IDEMPOTENT, EffectKind.DB_OVERWRITE),
    ],
)
def test_saving_what_a_typed_helper_returns(
    helper: str, verdict: Idempotency, kind: EffectKind
) -> None:
    jobs = f"""
from app.audit import Item

def job(item_id):
    item = Item.objects.get(pk=item_id)
    change = item.{helper}("touch")
    change.save()
"""
    found = _job({"app.audit": _AUDIT, "app.jobs": jobs, "app.views": _VIEWS}, "app.jobs.job")
    assert found.idempotency == verdict, [e.message for e in found.evidence]
    assert kind in {e.kind for e in found.effects}


def test_a_method_name_whose_definitions_disagree_is_not_a_new_instance() -> None:
    other = """
from django.db import models

class Other(models.Model):
    def to_entry(self, action):
        return Other.objects.get(pk=1)
"""
    jobs = """
def save_it(obj):
    change = obj.to_entry("touch")
    change.save()

def job(item_id):
    save_it(item_id)
"""
    files = {"app.audit": _AUDIT, "app.other": other, "app.jobs": jobs, "app.views": _VIEWS}
    found = _job(files, "app.jobs.job")
    assert EffectKind.DB_INSERT not in {e.kind for e in found.effects}
