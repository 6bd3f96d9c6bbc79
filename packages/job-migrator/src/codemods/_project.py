"""The application's own modules, read (never imported) when a declaration must be looked up.

Argument safety asks what an argument's declared type is: a parameter's
annotation, a helper's return annotation, a module constant, a type alias in
another module. Those live in the project's own files; this reads them once,
by dotted module name, with the stdlib ``ast`` (cheap, and no position data is
needed). A module outside the project is simply not found.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path, PurePosixPath

from inventory.project import is_test_path as _is_test_path
from inventory.project import parse_module, walk

_Def = ast.FunctionDef | ast.AsyncFunctionDef


def module_name(path: str) -> str:
    """``shop/routes/orders.py`` -> ``shop.routes.orders``; ``src/`` layouts count from below it."""
    parts = list(PurePosixPath(path).with_suffix("").parts)
    if len(parts) > 1 and parts[0] == "src":
        parts = parts[1:]
    if parts and parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


@dataclass
class ModuleInfo:
    """One parsed module: its top-level names, and where each comes from."""

    name: str
    tree: ast.Module
    text: str
    is_package: bool = False
    path: str = ""  # POSIX, relative to the root

    def segment(self, node: ast.AST) -> str:
        return ast.get_source_segment(self.text, node) or ""

    @cached_property
    def imports(self) -> dict[str, str]:
        """Bound name -> dotted target (``from .x import y as z`` -> ``pkg.x.y``)."""
        found: dict[str, str] = {}
        for stmt in self.tree.body:
            if isinstance(stmt, ast.Import):
                for alias in stmt.names:
                    bound = alias.asname or alias.name.split(".")[0]
                    found[bound] = alias.name if alias.asname else bound
            elif isinstance(stmt, ast.ImportFrom):
                base = self._from_base(stmt)
                for alias in stmt.names:
                    found[alias.asname or alias.name] = (
                        f"{base}.{alias.name}" if base else alias.name
                    )
        return found

    def _from_base(self, stmt: ast.ImportFrom) -> str:
        if not stmt.level:
            return stmt.module or ""
        package = self.name.split(".") if self.is_package else self.name.split(".")[:-1]
        package = package[: len(package) - (stmt.level - 1)]
        return ".".join([*package, *([stmt.module] if stmt.module else [])])

    @cached_property
    def assignments(self) -> dict[str, ast.expr]:
        """Module-level ``NAME = value`` (the last one wins, as at import time)."""
        found: dict[str, ast.expr] = {}
        for stmt in self.tree.body:
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
                target = stmt.targets[0]
                if isinstance(target, ast.Name):
                    found[target.id] = stmt.value
            elif (
                isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value
            ):
                found[stmt.target.id] = stmt.value
        return found

    @cached_property
    def classes(self) -> dict[str, ast.ClassDef]:
        return {s.name: s for s in self.tree.body if isinstance(s, ast.ClassDef)}

    @cached_property
    def functions(self) -> dict[str, _Def]:
        return {s.name: s for s in self.tree.body if isinstance(s, _Def)}


@dataclass
class Project:
    """The scanned root: sources already read by apply, other modules read on demand."""

    root: Path
    sources: dict[str, str] = field(default_factory=dict)  # POSIX path -> text
    _modules: dict[str, ModuleInfo | None] = field(default_factory=dict)
    _texts: dict[str, str] | None = None
    # Facts about the whole tree derived once from texts() (``ATOMIC_REQUESTS`` settings
    # lines), by name: asked at every site, they cannot change during one apply.
    facts: dict[str, list[str]] = field(default_factory=dict)

    def module(self, name: str) -> ModuleInfo | None:
        if name not in self._modules:
            self._modules[name] = self._load(name)
        return self._modules[name]

    def module_at(self, path: str) -> ModuleInfo | None:
        return self.module(module_name(path))

    def _load(self, name: str) -> ModuleInfo | None:
        base = PurePosixPath(*name.split(".")) if name else None
        if base is None:
            return None
        for prefix in ("", "src/"):
            for rel, package in (
                (f"{prefix}{base}.py", False),
                (f"{prefix}{base}/__init__.py", True),
            ):
                text = self._text(rel)
                if text is not None:
                    try:
                        return ModuleInfo(name, parse_module(text), text, package, rel)
                    except SyntaxError:
                        return None
        return None

    def _text(self, rel: str) -> str | None:
        if rel in self.sources:
            return self.sources[rel]
        path = self.root / rel
        try:
            return path.read_text(encoding="utf-8") if path.is_file() else None
        except (OSError, UnicodeDecodeError):
            return None

    def texts(self) -> dict[str, str]:
        """POSIX path -> text of every module the scan walk finds, tests included (read once).

        The scan's own walk: ``.gitignore``, virtualenvs, tool folders and migrations
        are left out here as they are from the scan.
        """
        if self._texts is None:
            read = {f.rel: self._text(f.rel) for f in walk(self.root, include_tests=True).files}
            self._texts = {path: text for path, text in read.items() if text is not None}
        return self._texts

    def test_texts(self) -> dict[str, str]:
        """POSIX path -> text of every test module (``is_test_file`` names, or under ``tests/``)."""
        return {p: t for p, t in self.texts().items() if _is_test_path(p)}

    def texts_containing(self, needle: str) -> dict[str, str]:
        """POSIX path -> text of every module whose text contains ``needle``."""
        return {p: t for p, t in self.texts().items() if needle in t}

    def lookup(self, dotted: str) -> tuple[ModuleInfo, str] | None:
        """The project module defining ``pkg.mod.Name`` and the name, through re-exports."""
        for _ in range(8):  # re-export chains are short; a cycle must not loop forever
            head, _, last = dotted.rpartition(".")
            info = self.module(head) if head else None
            if info is None:
                return None
            if last in info.classes or last in info.functions or last in info.assignments:
                return info, last
            if last not in info.imports:
                return None
            dotted = info.imports[last]
        return None


def enclosing_function(tree: ast.Module, line: int) -> _Def | None:
    """The innermost function whose lines contain ``line``."""
    found: _Def | None = None
    for node in ast.walk(tree):
        if not isinstance(node, _Def):
            continue
        inside = node.lineno <= line <= (node.end_lineno or node.lineno)
        if inside and (found is None or node.lineno >= found.lineno):
            found = node
    return found
