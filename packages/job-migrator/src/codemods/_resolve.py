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

    def deeper(self, module: ModuleInfo | None = None, function: _Def | None = None) -> Where:
        return Where(self.project, module or self.module, function, self.depth + 1)


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
