"""Python 3.12 syntax spelled for 3.11 through libcst (``inventory._extract._lower``).

Each case is what 3.12 accepts and 3.11's ``ast`` refuses; the lowered text must parse
under 3.11, keep every line where it was, and mean the same program to the extractor
(the same names called, the same strings where they can be kept).
"""

from __future__ import annotations

import ast
import glob
import json
import os
import shutil
import subprocess
import sys

import pytest

from inventory._extract import parse_module
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


# What Python 3.12 itself makes of each source, against what the extractor's 3.11 parse of
# the lowered text makes of it: the same program, once type parameters are dropped and a
# ``type`` alias is read as an assignment (the two rewrites the scan documents), and without
# the empty string 3.12's parser leaves at the end of a nested format spec.
_NORMALISER = r"""
import ast
class Norm(ast.NodeTransformer):
    def visit_JoinedStr(self, node):
        node.values = [v for v in node.values if not (isinstance(v, ast.Constant) and v.value == "")]
        return self.generic_visit(node)
    def visit_TypeAlias(self, node):
        name = ast.Name(node.name.id, ast.Store())
        return ast.copy_location(ast.Assign(targets=[name], value=self.visit(node.value)), node)
    def generic_visit(self, node):
        if hasattr(node, "type_params"):
            node.type_params = []
        return super().generic_visit(node)
def normalised(tree):
    return ast.dump(Norm().visit(tree)).replace(", type_params=[]", "")
"""
_REFERENCE = (
    _NORMALISER
    + r"""
import json, sys
print(json.dumps([normalised(ast.parse(s)) for s in json.load(sys.stdin)]))
"""
)

PROGRAMS = [
    'def label(d, n):\n    return f"{d["name"]}: {n:>{d["width"]}} {f"{d["x"]}"}"\n',
    "def first[T: (int, str)](xs: list[T]) -> T:\n    return xs[0]\n\n\nclass Box[T]:\n"
    "    def get(self) -> T:\n        return f\"{self.items['a']!r:>10}\"\n",
    "type Pair[K, V] = tuple[K, V]\n",
    # with a PEP 701 f-string 3.11's tokenizer cannot split: the whole file through libcst
    'type Pair[K, V] = tuple[K, V]\n\n\nclass Box[T]:\n    label = f"{names["box"]}"\n',
    "def mail(user):\n    send(\n        f\"{user.first_name} <{user.emails['primary']}>\",\n"
    '        subject=f"Hi {", ".join(user.groups)}",\n    )\n',
    'def url(hass):\n    return (\n        f"{get_url(\n            hass,\n            allow_ip=True,\n'
    '        )}/api"\n    )\n',
]


def _newer_python() -> str | None:
    """A Python 3.12 or later on this machine (pyenv's, or on PATH) that really runs (a
    pyenv shim for a version not selected does not), to parse the reference with."""
    found = sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/3.1[2-9]*/bin/python")))
    found += [path for name in ("python3.13", "python3.12") if (path := shutil.which(name))]
    probe = "import sys; sys.exit(sys.version_info < (3, 12))"
    for path in found:
        if subprocess.run([path, "-c", probe], capture_output=True).returncode == 0:
            return path
    return None


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="3.12 and later parse it as written")
def test_the_lowered_file_is_the_program_python_312_reads() -> None:
    newer = _newer_python()
    if newer is None:
        pytest.skip("no Python 3.12 or later on this machine to parse the reference with")
    done = subprocess.run(
        [newer, "-c", _REFERENCE],
        input=json.dumps(PROGRAMS),
        capture_output=True,
        text=True,
        check=True,
    )
    scope: dict[str, object] = {}
    exec(_NORMALISER, scope)  # the test's own normaliser (never the scanned code)
    normalised = scope["normalised"]
    assert callable(normalised)
    for source, reference in zip(PROGRAMS, json.loads(done.stdout), strict=True):
        assert normalised(parse_module(source)) == reference, source
