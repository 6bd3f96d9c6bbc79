"""Import boundaries hold: the import-linter contracts, and no import cycle inside any package."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import grimp
import pytest

ROOT = Path(__file__).resolve().parents[3]
PACKAGES = ("queue_runtime", "inventory", "codemods", "migrator")


def test_import_linter_contracts_are_kept() -> None:
    lint_imports = Path(sys.executable).parent / "lint-imports"
    result = subprocess.run(
        [str(lint_imports), "--no-cache"], cwd=ROOT, capture_output=True, text=True, timeout=240
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert " 0 broken." in result.stdout


def _cycles(graph: grimp.ImportGraph, package: str) -> Iterator[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    modules = sorted(m for m in graph.modules if m == package or m.startswith(package + "."))
    inside = set(modules)
    edges = {m: sorted(graph.find_modules_directly_imported_by(m) & inside) for m in modules}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    for root in modules:
        if root in index:
            continue
        work = [(root, 0)]
        while work:
            node, i = work.pop()
            if i == 0:
                index[node] = low[node] = len(index)
                stack.append(node)
                on_stack.add(node)
            if i < len(edges[node]):
                work.append((node, i + 1))
                nxt = edges[node][i]
                if nxt not in index:
                    work.append((nxt, 0))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    yield sorted(component)
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    # Imports inside functions count (a lazy import that closes a circle is still a circle);
    # imports under `if TYPE_CHECKING:` do not run, so they do not.
    return grimp.build_graph(*PACKAGES, exclude_type_checking_imports=True, cache_dir=None)


@pytest.mark.parametrize("package", PACKAGES)
def test_no_import_cycle_inside_the_package(graph: grimp.ImportGraph, package: str) -> None:
    assert list(_cycles(graph, package)) == []


def test_no_import_cycle_inside_inventory_even_through_type_only_imports() -> None:
    # inventory's rooms are layered (import-linter counts `if TYPE_CHECKING:` imports too):
    # a type-only import that closes a circle would let a runtime import close it next.
    graph = grimp.build_graph("inventory", exclude_type_checking_imports=False, cache_dir=None)
    assert list(_cycles(graph, "inventory")) == []


def test_the_cycle_finder_finds_a_cycle(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pkg = tmp_path / "knot"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from knot import b\n")
    (pkg / "b.py").write_text("def f():\n    from knot import c\n")
    (pkg / "c.py").write_text("import knot.a\n")
    (pkg / "d.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import knot.a\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    graph = grimp.build_graph("knot", exclude_type_checking_imports=True, cache_dir=None)
    found = list(_cycles(graph, "knot"))
    assert found == [["knot.a", "knot.b", "knot.c"]]


def _private(module: str) -> bool:
    return any(part.startswith("_") and not part.startswith("__") for part in module.split("."))


@pytest.mark.parametrize("tool", ["migrator", "codemods"])
def test_the_tools_import_no_private_module_of_another_package(
    graph: grimp.ImportGraph, tool: str
) -> None:
    # The import-linter contract names the private top-level modules; this checks every depth
    # (queue_runtime.testing._ledger, inventory._extract._resolve, ...), new modules included.
    crossings = sorted(
        (importer, imported)
        for importer in graph.modules
        if importer == tool or importer.startswith(tool + ".")
        for imported in graph.find_modules_directly_imported_by(importer)
        if imported.split(".")[0] in set(PACKAGES) - {tool} and _private(imported)
    )
    assert crossings == []


def test_the_private_module_check_sees_a_private_import() -> None:
    assert _private("inventory._extract._resolve") and _private("queue_runtime.testing._ledger")
    assert not _private("inventory.project") and not _private("codemods.__init__")


def test_no_two_test_modules_share_a_basename() -> None:
    """The test folders are not packages and pytest imports each test module by its basename
    (its default ``prepend`` import mode): a second ``test_x.py`` anywhere stops the whole
    run at collection ("import file mismatch"), the README's test command included."""
    seen: dict[str, Path] = {}
    clashes = []
    for path in sorted(ROOT.glob("**/test_*.py")):
        rel = path.relative_to(ROOT)
        if any(part.startswith(".") or part in ("fixtures", "_work") for part in rel.parts):
            continue
        if path.name in seen:
            clashes.append(f"{seen[path.name]} and {rel}")
        seen.setdefault(path.name, rel)
    assert clashes == []


MAX_FUNCTION_LINES = 60  # issue 23: a command's library reads in steps, not one long body


def _long_functions(root: Path) -> list[str]:
    import ast

    found = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                lines = (node.end_lineno or node.lineno) - node.lineno + 1
                if lines > MAX_FUNCTION_LINES:
                    found.append(f"{path.relative_to(root)}:{node.lineno} {node.name} ({lines})")
    return found


def test_no_function_in_migrator_is_over_sixty_lines() -> None:
    assert _long_functions(ROOT / "packages" / "job-migrator" / "src" / "migrator") == []


def test_the_long_function_check_sees_one(tmp_path: Path) -> None:
    body = "".join(f"    x{i} = {i}\n" for i in range(MAX_FUNCTION_LINES))
    (tmp_path / "long.py").write_text(f"def long():\n{body}", encoding="utf-8")
    assert _long_functions(tmp_path) == [f"long.py:1 long ({MAX_FUNCTION_LINES + 1})"]
