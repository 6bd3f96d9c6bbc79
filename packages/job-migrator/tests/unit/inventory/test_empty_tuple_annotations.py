"""``tuple[()]`` (the empty tuple type) in any annotation: the file is still summarised.

The census found a whole module skipped with ``IndexError`` because a return annotation
``-> KeysView[str] | tuple[()]`` has a subscript with no type argument at all."""

from __future__ import annotations

from textwrap import dedent

import pytest

from inventory._extract import extract_source
from inventory.summary import FileSummary

_EMPTY_TUPLES = """
from collections.abc import KeysView
from typing import Optional

from django.db.models import QuerySet

import requests


class Registry:
    items: dict[str, int] | tuple[()]
    maybe: Optional[()]

    def keys(self, key: str) -> KeysView[str] | tuple[()]:
        return ()

    def nothing(self) -> tuple[()]:
        return ()

    def odd(self) -> QuerySet[()]:
        return ()

    def guarded(self, arg: Optional[()] = None) -> Optional[()]:
        return None

    def notify(self) -> None:
        for _key in self.keys("x"):
            requests.post("https://example.invalid/hook")
"""


def _summary(source: str) -> FileSummary:
    return extract_source(dedent(source).lstrip(), "app/registry.py", "app.registry")


def test_a_module_with_empty_tuple_annotations_is_summarised() -> None:
    summary = _summary(_EMPTY_TUPLES)
    names = {f.name for f in summary.functions}
    assert {"keys", "nothing", "odd", "guarded", "notify"} <= names


@pytest.mark.parametrize(
    "annotation",
    ["tuple[()]", "list[int] | tuple[()]", "Optional[()]", "'tuple[()]'", "Annotated[()]"],
)
def test_an_empty_tuple_annotation_has_no_element_type(annotation: str) -> None:
    source = f"""
    from typing import Annotated, Optional

    class Stat:
        def refresh(self):
            pass

    def rows() -> {annotation}:
        return ()

    def caller():
        for row in rows():
            row.refresh()
    """
    caller = next(f for f in _summary(source).functions if f.name == "caller")
    targets = {c.receiver_source: c.target for c in caller.calls}
    assert targets.get("row") != "app.registry.Stat"


def test_the_calls_of_a_function_beside_them_are_still_resolved() -> None:
    notify = next(f for f in _summary(_EMPTY_TUPLES).functions if f.name == "notify")
    assert "requests.post" in {c.target for c in notify.calls}
