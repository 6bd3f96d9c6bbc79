"""A parameter annotated with a subscripted builtin container is that container.

PEP 585 (``set[KeyT]``, ``dict[str, int]``, ``list[Job]``) and ``typing``'s aliases
(``List[str]``, ``Dict[str, X]``, ``Optional[Set[int]]``) name the builtin type whatever
their parameters, as a bare ``set`` or ``dict`` annotation does. Before, only the bare
spelling was typed: ``locked.add(k)`` on ``locked: set[KeyT]`` was an unresolved call and
the job ``unknown`` (found in the census: dstack's ``locking.py``, modern annotated code
everywhere). A function annotated ``-> set[str]`` returns a set (``s = f(); s.add(x)``),
in its module or another, and ``-> tuple[Lock, set]`` one in each position (dstack's
``lock, lockset = self.get_lockset(ns)``). A project generic class subscripted (``Box[int]``) stays that
class."""

from __future__ import annotations

from collections.abc import Callable

from inventory import Idempotency, Inventory

Scanner = Callable[[dict[str, str]], Inventory]  # the scan_project fixture (conftest)

APP = """import threading
from typing import Dict, Generic, List, Optional, Set, TypeVar

import helpers
import requests

KeyT = TypeVar("KeyT")


class Box(Generic[KeyT]):
    def add(self, item: KeyT) -> None:
        requests.post("https://hooks.example.com/box", json={"item": str(item)})


def mark(locked: set[KeyT], keys: list[KeyT], table: dict[str, int]) -> None:
    for k in keys:
        locked.add(k)
    table.update({"a": 1})
    table.setdefault("b", 2)


def typed_aliases(names: List[str], seen: Optional[Set[int]], index: "Dict[str, int]") -> None:
    names.append("x")
    names.sort()
    if seen is not None:
        seen.discard(1)
    index.pop("a", None)


def boxed(box: Box[int]) -> None:
    box.add(1)


def pending() -> set[str]:
    return set(load())


def load():
    return []


def returned() -> None:
    names = pending()
    names.add("x")
    settings = defaults()
    settings.update({"b": 2})


def pair() -> tuple[Box[int], set]:
    return Box(), set()


def unpacked(keys) -> None:
    _box, held = pair()
    held.difference_update(keys)


def returned_elsewhere() -> None:
    options = helpers.options()
    options.setdefault("a", 1)


def view():
    threading.Thread(target=mark, args=(set(), [], {})).start()
    threading.Thread(target=typed_aliases, args=([], None, {})).start()
    threading.Thread(target=boxed, args=(Box(),)).start()
    threading.Thread(target=returned).start()
    threading.Thread(target=returned_elsewhere).start()
    threading.Thread(target=unpacked, args=([],)).start()


def defaults() -> "Dict[str, int]":
    return dict(load())
"""
HELPERS = """from typing import Any


def options() -> dict[str, Any]:
    return dict(flag=True)
"""


def test_builtin_containers_subscripted_are_typed(scan_project: Scanner) -> None:
    jobs = {j.qualname: j for j in scan_project({"app.py": APP, "helpers.py": HELPERS}).jobs}
    typed = ("app.mark", "app.typed_aliases", "app.returned", "app.returned_elsewhere")
    for name in (*typed, "app.unpacked"):
        assert jobs[name].idempotency is Idempotency.IDEMPOTENT, jobs[name].evidence
        assert not any("unresolved" in e.message for e in jobs[name].evidence)


def test_a_project_generic_class_subscripted_is_still_that_class(scan_project: Scanner) -> None:
    jobs = scan_project({"app.py": APP, "helpers.py": HELPERS}).jobs
    boxed = {j.qualname: j for j in jobs}["app.boxed"]
    assert "requests.post" in {e.api for e in boxed.effects}
    assert boxed.idempotency is Idempotency.NON_IDEMPOTENT
