"""Module-level names a job's code reads, and the statements that bind them (for the fingerprint).

A constant (``RATE = 1``), a module-level instance (``client = Client()``) or
any other module-level value is fingerprinted by the **text** of the
statements that bind it at module level, never by its value: a value can
change while the process runs (a cache filled, a counter bumped), the text
cannot, so every process of one deploy computes the same fingerprint.

Statements at module level count, and those in its ``if`` / ``try`` /
``with`` blocks; a ``from m import NAME`` is followed to ``m`` (the caller
decides whether ``m`` is project code). ``ast`` only, each module parsed once
per :class:`ModuleDefinitions`.
"""

from __future__ import annotations

import ast
import functools
import importlib.util
import inspect
import sys
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Binding:
    """A module-level name: ``module`` (a module's ``__name__``) and ``name``."""

    module: str
    name: str


@dataclass(frozen=True, slots=True)
class Definition:
    """What binds a name: the statements' text, the names they read, where it is imported from."""

    text: str
    reads: list[str]
    imported: list[Binding]


@dataclass(frozen=True, slots=True)
class _Parsed:
    lines: list[str]
    package: str
    bound: dict[str, list[ast.stmt]]
    stars: list[ast.ImportFrom]


class ModuleDefinitions:
    """Each module's source parsed once; a new instance reads reloaded modules again."""

    def __init__(self) -> None:
        self._parsed: dict[str, _Parsed | None] = {}

    def definition(self, binding: Binding) -> Definition | None:
        """The statements binding ``binding``; None when its module has no readable source."""
        parsed = self._module(binding.module)
        if parsed is None:
            return None
        statements = parsed.bound.get(binding.name, [])
        imports = [s for s in statements if isinstance(s, ast.ImportFrom)]
        own = [s for s in statements if not isinstance(s, ast.ImportFrom)]
        imported = [Binding(m, n) for s in imports for m, n in _imported(s, binding.name, parsed)]
        if not statements:  # maybe `from m import *`: the name, if anywhere, is there
            imported = [Binding(_target(s, parsed), binding.name) for s in parsed.stars]
        text = "".join(_lines(parsed.lines, s) for s in own)
        reads = list(dict.fromkeys(name for s in own for name in names_in(s)))
        return Definition(text, reads, imported)

    def _module(self, name: str) -> _Parsed | None:
        if name not in self._parsed:
            self._parsed[name] = _parse(name)
        return self._parsed[name]


def names_in(node: ast.AST) -> Iterator[str]:
    """The names and attribute names a node's code mentions, in ``ast.walk`` order."""
    for child in ast.walk(node):
        if isinstance(child, ast.Name):
            yield child.id
        elif isinstance(child, ast.Attribute):
            yield child.attr


def source_names(source: str | None) -> list[str]:
    """The names a function's or class's source mentions (defaults and decorators included)."""
    if source is None:
        return []
    try:
        tree = ast.parse(textwrap.dedent(source))
    except (SyntaxError, ValueError):  # a lambda's line, a body dedent cannot straighten
        return []
    return list(dict.fromkeys(names_in(tree)))


def _parse(name: str) -> _Parsed | None:
    module = sys.modules.get(name)
    if module is None:
        return None
    try:
        source = inspect.getsource(module)
    except (OSError, TypeError):
        return None
    return _parse_source(source, module.__package__ or name.rpartition(".")[0])


@functools.lru_cache(maxsize=128)
def _parse_source(source: str, package: str) -> _Parsed | None:
    """Keyed by the text: a reloaded module with other text is parsed again."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    parsed = _Parsed(source.splitlines(keepends=True), package, {}, [])
    for statement in _statements(tree.body):
        if isinstance(statement, ast.ImportFrom) and statement.names[0].name == "*":
            parsed.stars.append(statement)
        for bound in _bound_names(statement):
            parsed.bound.setdefault(bound, []).append(statement)
    return parsed


def _lines(lines: list[str], statement: ast.stmt) -> str:
    """The whole lines of a statement (``ast.get_source_segment`` splits the file each call)."""
    return "".join(lines[statement.lineno - 1 : statement.end_lineno or statement.lineno])


def _statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Module-level statements, and those of its if / try / with blocks (never def or class)."""
    for statement in body:
        yield statement
        if isinstance(statement, ast.If):
            yield from _statements(statement.body + statement.orelse)
        elif isinstance(statement, ast.Try | ast.TryStar):
            handlers = [s for h in statement.handlers for s in h.body]
            blocks = statement.body + handlers + statement.orelse + statement.finalbody
            yield from _statements(blocks)
        elif isinstance(statement, ast.With):
            yield from _statements(statement.body)


def _bound_names(statement: ast.stmt) -> Iterator[str]:
    if isinstance(statement, ast.Assign):
        for target in statement.targets:
            yield from (n.id for n in ast.walk(target) if isinstance(n, ast.Name))
    elif isinstance(statement, ast.AnnAssign | ast.AugAssign):
        if isinstance(statement.target, ast.Name):
            yield statement.target.id
    elif isinstance(statement, ast.ImportFrom):
        yield from (a.asname or a.name for a in statement.names if a.name != "*")
    elif isinstance(statement, ast.Import):
        yield from (a.asname or a.name.split(".")[0] for a in statement.names)
    elif isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        yield statement.name


def _imported(statement: ast.ImportFrom, name: str, parsed: _Parsed) -> Iterator[tuple[str, str]]:
    for alias in statement.names:
        if (alias.asname or alias.name) == name:
            yield _target(statement, parsed), alias.name


def _target(statement: ast.ImportFrom, parsed: _Parsed) -> str:
    relative = "." * statement.level + (statement.module or "")
    try:
        return importlib.util.resolve_name(relative, parsed.package or None)
    except (ImportError, ValueError):  # a relative import beyond the top: nothing to follow
        return relative
