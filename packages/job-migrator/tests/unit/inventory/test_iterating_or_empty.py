"""``for job in jobs or []`` iterates ``jobs``' elements (215 such loops in the census).

``a or []`` is ``a`` when ``a`` is truthy, else an empty list, which has no element: the loop
variable is an element of ``a``, as in ``for job in jobs``. Before, ``Optional[list[Job]]``
iterated that way left ``job`` untyped and its calls unresolved. An empty dict is not
taken: iterating a dict gives its keys. And ``self.jobs = jobs`` with ``jobs: list[Job]``
is a list of ``Job`` as ``self.jobs: list[Job] = jobs`` is, when every assignment agrees."""

from __future__ import annotations

import ast
from collections.abc import Callable

from inventory import Idempotency, Inventory
from inventory._extract._resolve import Resolver
from inventory._extract._scopes import Scope, ScopeKind
from inventory._extract._source import SourceText
from inventory._extract.walker._prepass import _containers_of
from inventory._extract.walker._walk_flow import same_elements

Scanner = Callable[[dict[str, str]], Inventory]  # the scan_project fixture (conftest)

APP = """import threading
from typing import Optional

import requests


class Job:
    def run(self):
        requests.post("https://hooks.example.com/run")


class Batch:
    def __init__(self, jobs: list[Job]):
        self.jobs = jobs  # the parameter's annotation says what the attribute holds

    def run_all(self):
        for job in self.jobs or ():
            job.run()


def maybe(jobs: Optional[list[Job]]):
    for job in jobs or []:
        job.run()


def view():
    threading.Thread(target=maybe, args=(None,)).start()
    threading.Thread(target=Batch([]).run_all).start()
"""


def test_the_loop_variable_is_an_element_of_the_left_side(scan_project: Scanner) -> None:
    jobs = {j.qualname: j for j in scan_project({"app.py": APP}).jobs}
    for name in ("app.maybe", "app.Batch.run_all"):
        assert "requests.post" in {e.api for e in jobs[name].effects}, jobs[name].evidence
        assert jobs[name].idempotency is Idempotency.NON_IDEMPOTENT


def test_only_an_empty_sequence_on_the_right_is_taken() -> None:
    text = "jobs or []\njobs or set()\njobs or {}\njobs or fallback\njobs or [1]\n"
    resolver = Resolver("app", Scope(ScopeKind.MODULE, "app"), {}, SourceText(text))
    loops = [stmt.value for stmt in ast.parse(text).body if isinstance(stmt, ast.Expr)]
    found = [same_elements(loop, resolver) for loop in loops]
    assert [isinstance(f, ast.Name) and f.id == "jobs" for f in found] == [
        True,
        True,
        False,  # a dict iterates its keys
        False,
        False,
    ]


def test_an_attribute_set_from_annotated_parameters_holds_their_class_when_they_agree() -> None:
    text = """
class Batch:
    def __init__(self, jobs: list[Job], more: list[Job], other: list[Other]):
        self.jobs = jobs
        self.pending = []
        self.pending = more
        self.mixed = jobs
        self.mixed = other
"""
    resolver = Resolver("app", Scope(ScopeKind.MODULE, "app"), {}, SourceText(text))
    cls = next(n for n in ast.parse(text).body if isinstance(n, ast.ClassDef))
    found = _containers_of(cls, resolver)
    assert found["jobs"] == ("builtins.list", "app.Job")
    assert found["pending"] == ("builtins.list", "app.Job")  # a literal [] holds nothing yet
    assert found["mixed"] == ("builtins.list", "")  # two classes: neither is known
