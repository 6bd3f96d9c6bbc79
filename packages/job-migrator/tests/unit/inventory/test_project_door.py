"""``inventory.project``: what codemods and migrator use of the analyzer, and the one test-code rule."""

from __future__ import annotations

import pytest

from inventory import project


def test_all_is_exactly_the_door() -> None:
    assert sorted(project.__all__) == [
        "PythonEnvError",
        "SourceFile",
        "TEST_DIRS",
        "WalkResult",
        "dotted_source",
        "is_test_file",
        "is_test_path",
        "parse_module",
        "walk",
    ]
    assert {n for n in vars(project) if not n.startswith("_")} == set(project.__all__)


@pytest.mark.parametrize(
    ("rel", "test_code"),
    [
        ("app/test_views.py", True),
        ("app/views_test.py", True),
        ("conftest.py", True),
        ("shop/tests.py", True),  # Django's startapp module
        ("tests/helpers.py", True),
        ("src/app/test/factories.py", True),
        ("app/views.py", False),
        ("app/testing.py", False),
        ("contest/views.py", False),
        ("tests_data.py", False),
    ],
)
def test_what_is_test_code(rel: str, test_code: bool) -> None:
    assert project.is_test_path(rel) is test_code


def test_parse_module_reads_python_3_12_syntax_with_lines_kept() -> None:
    """PEP 695 (``type`` aliases, type parameters) is read under any supported Python, each
    statement on its own line, as the scan reads it."""
    tree = project.parse_module(
        "type Ids = list[int]\n\n\ndef first[T](xs: list[T]) -> T:\n    return xs[0]\n"
    )
    assert [(type(n).__name__, n.lineno) for n in tree.body][1] == ("FunctionDef", 4)
    with pytest.raises(SyntaxError):
        project.parse_module("def broken(:\n")
