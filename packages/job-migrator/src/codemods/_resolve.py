"""Which dotted name an expression is bound to, read from the project's declarations.

The bottom of argument safety: a name is resolved through the module's
imports and top-level definitions (``builtins.x`` when unbound), a function's
local bindings are listed, and nothing is ever imported or run.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from codemods._project import ModuleInfo, Project

_Def = ast.FunctionDef | ast.AsyncFunctionDef


@dataclass(frozen=True)
class Where:
    """Where an expression is read: a module, and the function around it (None: module level)."""

    project: Project
    module: ModuleInfo
    function: _Def | None = None
    depth: int = 0
    line: int = 0  # the line of the expression read, in ``function`` (0: not known)
    # A job read as it runs on a worker: its unannotated parameters hold decoded payload JSON.
    payload_of: _Def | None = None

    def deeper(
        self, module: ModuleInfo | None = None, function: _Def | None = None, line: int = 0
    ) -> Where:
        return Where(
            self.project, module or self.module, function, self.depth + 1, line, self.payload_of
        )


def resolve(name: str, where: Where) -> str:
    """The dotted name ``name`` is bound to at module level (``builtins.x`` when unbound)."""
    module = where.module
    if name in module.imports:
        return module.imports[name]
    if name in module.classes or name in module.functions or name in module.assignments:
        return f"{module.name}.{name}"
    return f"builtins.{name}"


def resolve_expr(node: ast.expr, where: Where) -> str | None:
    if isinstance(node, ast.Name):
        return None if _local(node.id, where) else resolve(node.id, where)
    if isinstance(node, ast.Attribute):
        head = resolve_expr(node.value, where)
        return None if head is None else f"{head}.{node.attr}"
    return None


def _local(name: str, where: Where) -> bool:
    fn = where.function
    if fn is None:
        return False
    params = [*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs]
    return any(a.arg == name for a in params) or bool(assignments(fn, name))


def assignments(fn: _Def, name: str) -> list[ast.AST]:
    """Every statement in ``fn`` (not in nested defs) that binds ``name``."""
    found: list[ast.AST] = []
    for node in own_nodes(fn):
        if (
            (isinstance(node, ast.Assign) and any(_binds(t, name) for t in node.targets))
            or (
                isinstance(node, ast.AnnAssign | ast.AugAssign | ast.For | ast.AsyncFor)
                and _binds(node.target, name)
            )
            or (
                isinstance(node, ast.withitem)
                and node.optional_vars is not None
                and _binds(node.optional_vars, name)
            )
            or (isinstance(node, ast.NamedExpr) and node.target.id == name)
        ):
            found.append(node)
    return found


def _binds(target: ast.expr, name: str) -> bool:
    """``name = ...``, ``a, name = ...``; not ``name.x = ...`` (that writes an attribute)."""
    if isinstance(target, ast.Name):
        return target.id == name
    if isinstance(target, ast.Tuple | ast.List):
        return any(_binds(e, name) for e in target.elts)
    return isinstance(target, ast.Starred) and _binds(target.value, name)


def own_nodes(fn: _Def) -> list[ast.AST]:
    out: list[ast.AST] = []
    todo: list[ast.AST] = list(fn.body)
    while todo:
        node = todo.pop()
        out.append(node)
        if not isinstance(node, _Def | ast.ClassDef | ast.Lambda):
            todo.extend(ast.iter_child_nodes(node))
    return out


def parent_map(nodes: list[ast.AST]) -> dict[ast.AST, ast.AST]:
    """Each child of ``nodes`` -> the node it is in."""
    return {child: node for node in nodes for child in ast.iter_child_nodes(node)}


def derives(qualname: str, base: str, where: Where, depth: int = 0) -> bool:
    if qualname == base or depth > 8:
        return qualname == base
    found = where.project.lookup(qualname)
    if found is None or found[1] not in found[0].classes:
        return False
    inside = Where(where.project, found[0])
    for node in found[0].classes[found[1]].bases:
        dotted = resolve_expr(node, inside)
        if dotted is not None and derives(dotted, base, where, depth + 1):
            return True
    return False


_LOOPS = (ast.For, ast.AsyncFor, ast.While)


def reaching_assignment(fn: _Def, name: str, line: int) -> ast.Assign | None:
    """The one ``name = value`` that every path to the use at ``line`` ends with, else None.

    Read from the function's structure, so a name bound more than once still has
    a value when the last binding before the use is a plain assignment on every
    path to it: the assignment precedes the use's statement in a block that holds
    that statement (the function's body, or an ``if``/``with``/``try``/loop body
    around it), no other binding of ``name`` lies between them, and no binding
    after the use can come back to it through a loop unless the assignment is in
    that loop too. ``global``/``nonlocal`` names, and uses inside nested scopes,
    have none.
    """
    if any(isinstance(n, ast.Global | ast.Nonlocal) and name in n.names for n in own_nodes(fn)):
        return None
    chain = _statement_chain(fn.body, line)
    if not chain:
        return None
    best: ast.Assign | None = None
    for block, stmt in chain:
        for before in block[: block.index(stmt)]:
            if (
                isinstance(before, ast.Assign)
                and len(before.targets) == 1
                and isinstance(before.targets[0], ast.Name)
                and before.targets[0].id == name
            ):
                best = before
    if best is None:
        return None
    end = best.end_lineno or best.lineno
    loops = [s for _, s in chain if isinstance(s, _LOOPS)]
    for other in assignments(fn, name):
        if other is best or not isinstance(other, ast.stmt | ast.withitem | ast.NamedExpr):
            continue
        at = getattr(other, "lineno", None) or _line_of(other)
        if end < at <= line:
            return None  # a later binding between the assignment and the use
        if at > line and any(_inside(other, loop) and not _inside(best, loop) for loop in loops):
            return None  # a binding after the use comes back round a loop
    return best


def _statement_chain(block: list[ast.stmt], line: int) -> list[tuple[list[ast.stmt], ast.stmt]]:
    """(block, statement) pairs from the function body down to the statement holding ``line``."""
    for stmt in block:
        if not (stmt.lineno <= line <= (stmt.end_lineno or stmt.lineno)):
            continue
        if isinstance(stmt, _Def | ast.ClassDef):
            return []  # a nested scope: its names are not this function's
        inner: list[tuple[list[ast.stmt], ast.stmt]] = []
        for child in _blocks(stmt):
            inner = _statement_chain(child, line)
            if inner:
                break
        return [(block, stmt), *inner]
    return []


def _blocks(stmt: ast.stmt) -> list[list[ast.stmt]]:
    blocks = [getattr(stmt, f, None) for f in ("body", "orelse", "finalbody")]
    handlers = [h.body for h in getattr(stmt, "handlers", [])]
    cases = [c.body for c in getattr(stmt, "cases", [])]
    return [b for b in [*blocks, *handlers, *cases] if isinstance(b, list) and b]


def _line_of(node: ast.AST) -> int:
    if isinstance(node, ast.withitem):
        return node.context_expr.lineno
    return getattr(node, "lineno", 0)


def _inside(node: ast.AST, outer: ast.stmt) -> bool:
    at = _line_of(node)
    return outer.lineno <= at <= (outer.end_lineno or outer.lineno)
