"""Add one import cheaply, where the module's code can already see it.

libcst's ``AddImportsVisitor`` resolves scopes for the whole module, which
costs more than the rest of a rewrite together; registering a job only needs
``from queue_runtime import job`` once. The import goes at the end of the
module's leading import block (after the docstring and ``__future__``
imports), never after code: a decorator above it would not see the name.
"""

from __future__ import annotations

import libcst as cst

from codemods._targets import dotted


def add_import(module: cst.Module, package: str, name: str | None) -> cst.Module:
    """``from package import name`` (``import package`` when name is None), once."""
    body = list(module.body)
    for i, stmt in enumerate(body):
        merged = _merged(stmt, package, name)
        if merged is not None:
            body[i] = merged
            return module.with_changes(body=body)
    text = f"from {package} import {name}\n" if name else f"import {package}\n"
    at = _after_leading_imports(body)
    new = cst.parse_statement(text)
    if at > 0 and not _is_import(body[at - 1]):  # right after the docstring: a blank line
        new = new.with_changes(leading_lines=[cst.EmptyLine()])
    if at < len(body) and not _is_import(body[at]) and not body[at].leading_lines:
        body[at] = body[at].with_changes(leading_lines=[cst.EmptyLine()])  # imports, then code
    return module.with_changes(body=[*body[:at], new, *body[at:]])


def _merged(stmt: cst.BaseStatement, package: str, name: str | None) -> cst.BaseStatement | None:
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
    names = [
        *small.names[:-1],
        small.names[-1].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))),
    ]
    new_alias = cst.ImportAlias(name=cst.Name(name), comma=small.names[-1].comma)
    return stmt.with_changes(body=[small.with_changes(names=[*names, new_alias])])


def _after_leading_imports(body: list[cst.BaseStatement]) -> int:
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
