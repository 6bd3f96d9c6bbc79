"""PEP 695 syntax rewritten for an older ``ast``: lines and names kept."""

from __future__ import annotations

import ast

from inventory._extract._grammar import downgrade

SOURCE = """\
type Alias[T] = list[T]
class Box[T: int, *Ts](Base):
    type Inner = int
    def get[
        U,
    ](self, x: U) -> U:
        return x
x = type(3)
"""


def test_type_parameters_and_aliases_are_rewritten_lines_kept() -> None:
    rewritten = downgrade(SOURCE)
    assert rewritten is not None
    tree = ast.parse(rewritten)
    assert rewritten.count("\n") == SOURCE.count("\n")
    lines = {
        getattr(node, "name", None) or getattr(node, "id", None): node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.ClassDef | ast.Name)
    }
    assert (lines["Alias"], lines["Box"], lines["Inner"], lines["get"]) == (1, 2, 3, 4)
    assert "x = type(3)" in rewritten  # a call of ``type`` is left alone


def test_code_without_pep695_syntax_is_not_rewritten() -> None:
    assert downgrade("type = 3\nprint(type)\n") is None


def test_a_backslash_inside_an_fstring_expression_becomes_a_plain_string() -> None:
    source = "def label(mask):\n    return f\"^{mask.replace(r'\\*', 'x')}$\"\nsend(1)\n"
    rewritten = downgrade(source)
    assert rewritten is not None
    tree = ast.parse(rewritten)
    assert [n.lineno for n in ast.walk(tree) if isinstance(n, ast.Call)] == [3]
