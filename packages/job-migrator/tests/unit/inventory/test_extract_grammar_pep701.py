"""Python 3.12 syntax spelled for 3.11 through libcst (``inventory._extract._lower``).

Each case is what 3.12 accepts and 3.11's ``ast`` refuses; the lowered text must parse
under 3.11, keep every line where it was, and mean the same program to the extractor
(the same names called, the same strings where they can be kept).
"""

from __future__ import annotations

import ast

import pytest

from inventory._extract._lower import lower

CASES = [
    # (3.12 source, its 3.11 spelling)
    ('x = f"{row["name"]}"\n', "x = f'{row[\"name\"]}'\n"),
    ('x = f"{a} \'q\' {b["k"]}"\n', "x = f'{a} \\'q\\' {b[\"k\"]}'\n"),
    ('x = f"{a["b"]:>{w["c"]}}"\n', 'x = f\'{a["b"]:>{w["c"]}}\'\n'),
    ('x = f"{f"{y["z"]}"}"\n', "x = f'''{f'{y[\"z\"]}'}'''\n"),
    ('x = rf"\\d{m["k"]}\'"\n', 'x = rf"""\\d{m["k"]}\'"""\n'),
    ('x = f"{"\\n".join(a)}"\n', "x = f'{\"\".join(a)}'\n"),
    ('x = f"{g(\n    a,\n)}"\n', "x = f'''{g(\n    a,\n)}'''\n"),
    ("def first[T](xs: list[T]) -> T:\n    return xs[0]\n", None),
    ("class Box[T](Base):\n    pass\n", "class Box(Base):\n    pass\n"),
    ("type Rows = list[int]\n", "Rows = list[int]\n"),
]


@pytest.mark.parametrize(("source", "expected"), CASES)
def test_newer_syntax_is_spelled_for_311_on_the_same_lines(
    source: str, expected: str | None
) -> None:
    lowered = lower(source)
    assert lowered is not None
    if expected is not None:
        assert lowered == expected
    assert lowered.count("\n") == source.count("\n")
    ast.parse(lowered, feature_version=(3, 11))  # under 3.11 (CI's Python): its own grammar


def test_an_fstring_keeps_its_calls() -> None:
    lowered = lower('msg = f"{user["name"]} owes {fmt(total, "EUR")}"\n')
    assert lowered is not None
    called = {
        node.func.id
        for node in ast.walk(ast.parse(lowered))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
    }
    assert called == {"fmt"}


@pytest.mark.parametrize(
    "source",
    [
        'x = f"{d[\n    "k"  # the key\n]}"\n',  # a comment inside the braces
        "def f(:\n    pass\n",  # no grammar parses it
    ],
)
def test_what_311_cannot_spell_is_none(source: str) -> None:
    assert lower(source) is None
