"""Types from annotated containers, attribute defaults, builtin attributes, reverse relations."""

from __future__ import annotations

from textwrap import dedent

from inventory._classify._index import SymbolIndex, SymbolKind
from inventory._extract import extract_source
from inventory.summary import FileSummary


def _summary(source: str, module: str = "app") -> FileSummary:
    return extract_source(dedent(source), f"{module.replace('.', '/')}.py", module)


def _calls(summary: FileSummary, function: str) -> dict[int, set[str]]:
    """line -> the targets of the calls on it."""
    fn = next(f for f in summary.functions if f.qualname == function)
    found: dict[int, set[str]] = {}
    for call in fn.calls:
        found.setdefault(call.span.line, set()).add(call.target)
    return found


_REGISTRY = """
from typing import Dict, Optional

class Worker:
    def stop(self):
        pass

workers: Dict[str, Worker] = {}
names: dict[str, str] = {}

def find(key):
    return workers.get(key)

def find_or_none(key):
    if not key:
        return None
    return workers[key]

def shadowed(workers):
    return workers.get("x")

def local_shadow():
    workers = {}
    return workers.get("x")

def plain(key):
    return names.get(key)
"""


def test_lookups_in_an_annotated_mapping_return_its_value_class() -> None:
    summary = _summary(_REGISTRY)
    assert summary.assignments["find()"] == "app.Worker"
    assert summary.assignments["find_or_none()"] == "app.Worker"


def test_a_parameter_or_local_of_the_same_name_hides_the_module_container() -> None:
    summary = _summary(_REGISTRY)
    assert "shadowed()" not in summary.assignments
    assert "local_shadow()" not in summary.assignments


def test_builtin_values_give_no_class() -> None:
    assert "plain()" not in _summary(_REGISTRY).assignments


def test_walrus_and_iteration_over_values_are_typed() -> None:
    summary = _summary(
        """
        from typing import Optional

        class Job:
            def cancel(self):
                pass

        jobs: "dict[str, Job]" = {}
        queue: Optional[list[Job]] = None

        def stop(key):
            if job := jobs.get(key):
                job.cancel()
            for other in jobs.values():
                other.cancel()
            for name in jobs:
                name.cancel()
            for queued in queue:
                queued.cancel()
        """
    )
    calls = _calls(summary, "app.stop")
    assert calls[13] == {"app.Job.cancel"}
    assert calls[15] == {"app.Job.cancel"}
    assert calls[17] == {"?.cancel"}  # iterating a mapping gives its keys
    assert calls[19] == {"app.Job.cancel"}


def test_self_containers_annotated_in_a_method() -> None:
    summary = _summary(
        """
        class Conn:
            def close(self):
                pass

        class Pool:
            def __init__(self):
                self.conns: dict[str, Conn] = {}

            def get(self, key):
                return self.conns.get(key)

            def drop(self, key):
                self.conns.pop(key).close()
                conn = self.conns[key]
                conn.close()
        """
    )
    pool = next(c for c in summary.classes if c.name == "Pool")
    assert pool.attributes["conns"] == "app.dict"
    assert pool.attributes["conns[]"] == "app.Conn"
    assert summary.assignments["Pool.get()"] == "app.Conn"
    calls = _calls(summary, "app.Pool.drop")
    assert "app.Conn.close" in calls[14]  # self.conns.pop(key).close()
    assert calls[16] == {"app.Conn.close"}


def test_a_value_of_an_unannotated_container_is_of_unknown_type() -> None:
    """``dict.*`` explains a dict's own methods, not those of what it holds."""
    summary = _summary(
        """
        def flush(key):
            pending = {}
            pending.get(key).send()
            pending.pop(key).send()
        """
    )
    calls = _calls(summary, "app.flush")
    assert "?.send" in calls[4] and "?.send" in calls[5]


def test_attribute_defaults_of_one_class_type_the_attribute() -> None:
    summary = _summary(
        """
        from typing import Optional

        class A:
            pass

        class B:
            pass

        class Holder:
            def __init__(self, a=None, b: Optional[B] = None, c=None, d: Optional[A] = None):
                self.a = a or A()
                self.b = A() if b is None else b
                self.c = B() if c is None else c
                self.d = d or A()
        """
    )
    holder = next(c for c in summary.classes if c.name == "Holder")
    assert holder.attributes["a"] == "app.A"
    assert holder.attributes["b"] == "__union__.app:A|app:B"  # A or B: their union
    assert holder.attributes["c"] == "app.B"
    assert holder.attributes["d"] == "app.A"


def test_builtin_attributes_only_when_every_assignment_agrees() -> None:
    summary = _summary(
        """
        from django.core.cache import cache

        class Buffer:
            def __init__(self):
                self.items = []
                self.seen = set()
                self.loaded = []
                self.declared: list[str] = []
                self.mixed = {}

            def load(self):
                self.loaded = cache.get("k")
                self.declared = cache.get("k")
                self.mixed = []
        """
    )
    buffer = next(c for c in summary.classes if c.name == "Buffer")
    assert buffer.attributes["items"] == "app.list"
    assert buffer.attributes["seen"] == "app.set"
    assert buffer.attributes["declared"] == "app.list"
    assert buffer.attributes.get("loaded", "").endswith("()")  # what cache.get returns
    assert "mixed" not in buffer.attributes


def test_what_a_builtin_attribute_holds_is_not_the_builtin() -> None:
    summary = _summary(
        """
        class Outbox:
            def __init__(self):
                self.queue = []

            def flush(self):
                self.queue.pop().send()
        """
    )
    assert _calls(summary, "app.Outbox.flush")[7] == {"app.list.pop", "?.send"}


_MODELS = """
from django.db import models

class Folder(models.Model):
    pass

class Doc(models.Model):
    folder = models.ForeignKey(Folder, on_delete=models.CASCADE, related_name="docs")
    owner = models.ForeignKey("auth.User", on_delete=models.CASCADE)
    hidden = models.ForeignKey(Folder, on_delete=models.CASCADE, related_name="+")
    also = models.ForeignKey(Folder, on_delete=models.CASCADE)

class Note(models.Model):
    folder = models.ForeignKey(Folder, on_delete=models.CASCADE)

class Tree(models.Model):
    parent = models.ForeignKey("self", on_delete=models.CASCADE, related_name="kids")

    class Meta:
        abstract = True

class Walker:
    def walk(self):
        for kid in self.kids.filter(x=1):
            kid.save()

class Branch(Walker, Tree):
    pass
"""


def _index() -> SymbolIndex:
    return SymbolIndex([_summary(_MODELS, "shop.models"), _package("shop")])


def _package(name: str) -> FileSummary:
    return extract_source("", f"{name}/__init__.py", name, True)


def test_foreign_keys_record_reverse_managers() -> None:
    summary = _summary(_MODELS, "shop.models")
    doc = next(c for c in summary.classes if c.name == "Doc")
    # ``owner`` ("auth.User") and ``also`` (Folder) each give their target a ``doc_set``
    assert doc.related == {
        "docs": "shop.models.Folder",
        "doc_set": "__model__.auth.User",
        "doc_set#2": "shop.models.Folder",
    }
    tree = next(c for c in summary.classes if c.name == "Tree")
    assert tree.related == {"kids": "shop.models.Tree"}


def test_a_reverse_manager_reads_the_leaf_model() -> None:
    index = _index()
    found = index.resolve("shop.models.Folder.docs.filter().update")
    assert found.name == "shop.models.Doc.objects.filter().update"
    assert index.resolve("shop.models.Folder.note_set.all").name == "shop.models.Note.objects.all"
    assert index.resolve("shop.models.Folder.docs[].delete").name == "shop.models.Doc.delete"


def test_rows_of_an_unknown_relation_are_of_unknown_type() -> None:
    found = _index().resolve("shop.models.Folder.missing[].save")
    assert (found.kind, found.name) == (SymbolKind.MEMBER, "?.save")


def test_a_self_relation_on_an_abstract_base_holds_the_concrete_class() -> None:
    index = _index()
    assert index.reverse_model("shop.models.Walker", "kids") == "shop.models.Branch"
    assert index.reverse_model("shop.models.Branch", "kids") == "shop.models.Branch"
    calls = _calls(_summary(_MODELS, "shop.models"), "shop.models.Walker.walk")
    assert calls[25] == {"shop.models.Walker.kids[].save"}
