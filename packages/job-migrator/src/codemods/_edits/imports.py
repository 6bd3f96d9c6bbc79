"""The one API that edits a module's imports: add one cheaply, drop one nobody uses.

Every import a codemod adds goes through :func:`add_import` (the ``@job``
import, the status router, ``JSONResponse``, a key function) and every one
it drops through :func:`remove_unused_imports`.

libcst's ``AddImportsVisitor`` resolves scopes for the whole module, which
costs more than the rest of a rewrite together; a rewrite only needs a name
imported once. The import goes into the module's leading import block (after
the docstring and ``__future__`` imports), never after code: a decorator
above it would not see the name. Within the block it goes where
``ruff check --select I`` (isort's default profile) expects it: in its
section, sorted among the section's ``from`` imports (straight ``import x``
lines first); a section of its own, set off by blank lines, when the module
has none. Removing does need scopes (is the name still used?), so it is
libcst's ``RemoveImportsVisitor``, behind this module's API.

Which modules are the project's own is passed in (the top-level packages of the
scanned files); the standard library is ``sys.stdlib_module_names``; anything
else is third-party.
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Iterable, Sequence
from enum import IntEnum
from pathlib import PurePosixPath

import libcst as cst
from libcst.codemod import CodemodContext
from libcst.codemod.visitors import RemoveImportsVisitor

from codemods._syntax import dotted
from codemods._types import Import

_Statement = cst.SimpleStatementLine | cst.BaseCompoundStatement


class Section(IntEnum):
    """isort's sections, in the order they appear in a sorted import block."""

    FUTURE = 0
    STDLIB = 1
    THIRD_PARTY = 2
    FIRST_PARTY = 3
    LOCAL = 4  # relative imports


def project_packages(paths: Iterable[str], qualnames: Iterable[str] = ()) -> frozenset[str]:
    """The project's top-level packages and modules: ``shop/images.py`` -> ``shop``.

    ``src/`` layouts count from below ``src``; a job's qualified name
    (``shop.images.make_thumbnail``) names its package too.
    """
    names: set[str] = set()
    for path in paths:
        parts = PurePosixPath(path).parts
        if len(parts) > 1 and parts[0] == "src":
            parts = parts[1:]
        if parts:
            names.add(parts[0].removesuffix(".py") if len(parts) == 1 else parts[0])
    names.update(q.split(".", 1)[0] for q in qualnames if q)
    return frozenset(names)


def add_import(
    module: cst.Module,
    package: str,
    name: str | None,
    first_party: frozenset[str] = frozenset(),
) -> cst.Module:
    """``from package import name`` (``import package`` when name is None), once."""
    body = list(module.body)
    for i, stmt in enumerate(body):
        merged = _merged(stmt, package, name)
        if merged is not None:
            body[i] = merged
            return module.with_changes(body=body)
    text = f"from {package} import {name}\n" if name else f"import {package}\n"
    new = cst.ensure_type(cst.parse_statement(text), cst.SimpleStatementLine)
    start = 1 if body and _is_docstring(body[0]) else 0
    end = _after_leading_imports(body)
    block = [cst.ensure_type(stmt, cst.SimpleStatementLine) for stmt in body[start:end]]
    sections = [_section(stmt, first_party) for stmt in block]
    section = _section(new, first_party)
    at = _position(block, sections, new, section)
    placed = _placed(block, sections, at, new, section, start > 0)
    rest = body[end:]
    if at == len(block) and rest and (not block or not rest[0].leading_lines):
        rest[0] = _set_off_from_imports(rest[0])  # a new import block, or code stuck to it
    return module.with_changes(body=[*body[:start], *placed, *rest])


def remove_unused_imports(module: cst.Module, imports: Iterable[Import]) -> cst.Module:
    """Drop each of ``imports`` from ``module``, but only where nothing uses the name any more."""
    unused = [(i.module, i.name, i.alias) for i in dict.fromkeys(imports)]
    if not unused:
        return module
    return RemoveImportsVisitor(CodemodContext(), unused).transform_module(module)


def _position(
    block: list[cst.SimpleStatementLine],
    sections: list[Section],
    new: cst.SimpleStatementLine,
    section: Section,
) -> int:
    """Before the first import of a later section, or of its own section sorting after it."""
    key = _sort_key(new)
    for i, (stmt, other) in enumerate(zip(block, sections, strict=True)):
        if other > section or (other == section and _sort_key(stmt) > key):
            return i
    return len(block)


def _placed(
    block: list[cst.SimpleStatementLine],
    sections: list[Section],
    at: int,
    new: cst.SimpleStatementLine,
    section: Section,
    after_docstring: bool,
) -> list[cst.SimpleStatementLine]:
    """``block`` with ``new`` at ``at``, blank lines moved so that sections stay set apart."""
    block = list(block)
    same_prev = at > 0 and sections[at - 1] == section
    nxt = block[at] if at < len(block) else None
    if same_prev:  # inside its section (a later section keeps its own blank line)
        new = new.with_changes(leading_lines=[])
    elif nxt is not None and (sections[at] == section or at == 0):
        # First of its section, or a new section at the top of the block: it takes over
        # what sat above the import it now precedes (the section's blank line, comments).
        new = new.with_changes(leading_lines=nxt.leading_lines)
        lines = [] if sections[at] == section else [cst.EmptyLine()]
        block[at] = nxt.with_changes(leading_lines=lines)
    elif nxt is not None:  # a new section between two others
        new = new.with_changes(leading_lines=[cst.EmptyLine()])
        block[at] = nxt.with_changes(leading_lines=_with_blank_first(nxt.leading_lines))
    else:  # a new last section, or the only import
        blank = at > 0 or after_docstring
        new = new.with_changes(leading_lines=[cst.EmptyLine()] if blank else [])
    return [*block[:at], new, *block[at:]]


def _with_blank_first(lines: Sequence[cst.EmptyLine]) -> list[cst.EmptyLine]:
    lines = list(lines)
    if lines and lines[0].comment is None:
        return lines
    return [cst.EmptyLine(), *lines]


def _set_off_from_imports(stmt: _Statement) -> _Statement:
    """At least the blank lines isort leaves after imports: two before a def or class, else one."""
    wanted = 2 if isinstance(stmt, cst.FunctionDef | cst.ClassDef) else 1
    lines = list(stmt.leading_lines)
    blank = 0
    while blank < len(lines) and lines[blank].comment is None:
        blank += 1
    if blank >= wanted:
        return stmt
    return stmt.with_changes(leading_lines=[cst.EmptyLine()] * (wanted - blank) + lines)


def _section(stmt: cst.SimpleStatementLine, first_party: frozenset[str]) -> Section:
    small = stmt.body[0]
    if isinstance(small, cst.ImportFrom) and small.relative:
        return Section.LOCAL
    top = _module(small).split(".", 1)[0]
    if top == "__future__":
        return Section.FUTURE
    if top in sys.stdlib_module_names:
        return Section.STDLIB
    return Section.FIRST_PARTY if top in first_party else Section.THIRD_PARTY


def _module(small: cst.BaseSmallStatement) -> str:
    if isinstance(small, cst.ImportFrom):
        return (dotted(small.module) if small.module else None) or ""
    if isinstance(small, cst.Import):
        return dotted(small.names[0].name) or ""
    return ""


def _sort_key(stmt: cst.SimpleStatementLine) -> tuple[bool, str]:
    """isort's default order in a section: ``import x`` lines, then ``from x import``, by module."""
    small = stmt.body[0]
    return isinstance(small, cst.ImportFrom), _module(small).lower()


def _merged(
    stmt: cst.BaseStatement, package: str, name: str | None
) -> cst.SimpleStatementLine | None:
    """``stmt`` if it already imports the name, itself extended if it imports from ``package``."""
    if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1:
        return None
    small = stmt.body[0]
    if name is None and isinstance(small, cst.Import):
        found = any(dotted(a.name) == package and a.asname is None for a in small.names)
        return stmt if found else None
    if name is None or not isinstance(small, cst.ImportFrom) or small.relative:
        return None
    if (
        small.module is None
        or dotted(small.module) != package
        or isinstance(small.names, cst.ImportStar)
    ):
        return None
    if any(dotted(a.name) == name and a.asname is None for a in small.names):
        return stmt
    return stmt.with_changes(body=[small.with_changes(names=_with_name(list(small.names), name))])


def _with_name(names: list[cst.ImportAlias], name: str) -> list[cst.ImportAlias]:
    """``names`` plus ``name``: in its sorted place when they are sorted, else at the end."""
    keys = [_member_key(dotted(a.name) or "") for a in names]
    at = len(names)
    if keys == sorted(keys):
        at = next((i for i, k in enumerate(keys) if k > _member_key(name)), len(names))
    if at < len(names):  # written like its neighbours: the comma of the one before, or of the next
        comma = names[at - 1].comma if at > 0 else names[at].comma
        if not isinstance(comma, cst.Comma):
            comma = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
        return [*names[:at], cst.ImportAlias(name=cst.Name(name), comma=comma), *names[at:]]
    last = names[-1].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
    return [*names[:-1], last, cst.ImportAlias(name=cst.Name(name), comma=names[-1].comma)]


def _member_key(name: str) -> tuple[int, str]:
    """isort's ``order-by-type``: CONSTANTS, then Classes, then everything else; then by name."""
    kind = 0 if len(name) > 1 and name.isupper() else 1 if name[:1].isupper() else 2
    return kind, name.lower()


def _after_leading_imports(body: Sequence[cst.BaseStatement]) -> int:
    at = 1 if body and _is_docstring(body[0]) else 0
    while at < len(body) and _is_import(body[at]):
        at += 1
    return at


def _is_docstring(stmt: cst.BaseStatement) -> bool:
    return (
        isinstance(stmt, cst.SimpleStatementLine)
        and len(stmt.body) == 1
        and isinstance(stmt.body[0], cst.Expr)
        and isinstance(stmt.body[0].value, cst.SimpleString | cst.ConcatenatedString)
    )


def _is_import(stmt: cst.BaseStatement) -> bool:
    return isinstance(stmt, cst.SimpleStatementLine) and all(
        isinstance(s, cst.Import | cst.ImportFrom) for s in stmt.body
    )


def remove_imports_made_unused(original: cst.Module, updated: cst.Module) -> cst.Module:
    """Drop the imports a rewrite left unused (``BackgroundTasks``, ``workers``, ``Thread``).

    Only names the original module did use: an import that was unused before
    is the application's business, and stays.
    """
    before, after = _used_names(original), _used_names(updated)
    gone = {i for i in _imported(updated) if before[_bound(i)] and not after[_bound(i)]}
    return remove_unused_imports(_drop_whole_lines(updated, gone), gone)


def _bound(imported: Import) -> str:
    return imported.alias or imported.name or imported.module


def _drop_whole_lines(module: cst.Module, gone: set[Import]) -> cst.Module:
    """Remove import lines that import only gone names; their blank lines (a section break) stay,
    except at the top of the file: the first statement left never starts with a blank line."""
    body: list[cst.BaseStatement] = []
    carried: Sequence[cst.EmptyLine] | None = None
    for stmt in module.body:
        names = _imported_by(stmt)
        if names and len(names) == _alias_count(stmt) and set(names) <= gone:
            carried = carried if carried is not None else stmt.leading_lines
            continue
        if carried is not None and not body:
            stmt = stmt.with_changes(leading_lines=_unblanked([*carried, *stmt.leading_lines]))
        elif carried is not None and not stmt.leading_lines:
            stmt = stmt.with_changes(leading_lines=carried)
        carried = None
        body.append(stmt)
    return module.with_changes(body=body)


def _unblanked(lines: Sequence[cst.EmptyLine]) -> list[cst.EmptyLine]:
    """``lines`` without the blank ones they start with (comments and what follows stay)."""
    start = next((i for i, line in enumerate(lines) if line.comment is not None), len(lines))
    return list(lines[start:])


def _alias_count(stmt: cst.BaseStatement) -> int:
    if not isinstance(stmt, cst.SimpleStatementLine):
        return 0
    smalls = [s for s in stmt.body if isinstance(s, cst.Import | cst.ImportFrom)]
    if len(smalls) != len(stmt.body):
        return -1  # an import sharing its line with other code: never removed whole
    return sum(0 if isinstance(s.names, cst.ImportStar) else len(s.names) for s in smalls)


def _imported(module: cst.Module) -> list[Import]:
    """Top-level imports, as (module, bound name) pairs ``RemoveImportsVisitor`` understands."""
    return [found for stmt in module.body for found in _imported_by(stmt)]


def _imported_by(stmt: cst.BaseStatement) -> list[Import]:
    found: list[Import] = []
    smalls = stmt.body if isinstance(stmt, cst.SimpleStatementLine) else []
    for small in smalls:
        if isinstance(small, cst.ImportFrom) and not small.relative and small.module is not None:
            if not isinstance(small.names, cst.ImportStar):
                package = dotted(small.module) or ""
                found += [Import(package, dotted(a.name), _alias(a)) for a in small.names]
        elif isinstance(small, cst.Import):
            found += [
                Import(dotted(a.name) or "", None, _alias(a))
                for a in small.names
                if a.asname is not None or "." not in (dotted(a.name) or ".")
            ]
    return found


def _alias(alias: cst.ImportAlias) -> str | None:
    asname = alias.asname.name if alias.asname is not None else None
    return asname.value if isinstance(asname, cst.Name) else None


def _used_names(module: cst.Module) -> Counter[str]:
    """How often each name is read outside import statements (attributes' own names excluded)."""
    visitor = _GatherNameUses()
    module.visit(visitor)
    return visitor.names


class _GatherNameUses(cst.CSTVisitor):
    def __init__(self) -> None:
        super().__init__()
        self.names: Counter[str] = Counter()

    def visit_Import(self, node: cst.Import) -> bool:
        return False

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
        return False

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        node.value.visit(self)
        return False

    def visit_Arg(self, node: cst.Arg) -> bool:
        node.value.visit(self)
        return False

    def visit_Name(self, node: cst.Name) -> None:
        self.names[node.value] += 1
