"""A function's own nodes, walked once and shared by every detector that reads them.

Several detectors read "the nodes of this function's body, outside nested scopes": its
``return``s and ``yield``s (what it returns, whether it is a generator), its ``try`` and
``with atomic()`` blocks, the names it binds. Each used to walk the body again with
``ast.iter_child_nodes``; on Django those walks took a third of the extraction. The walk is
done once per function and kept while its tree lives (weakly: a summary never holds a node).
"""

from __future__ import annotations

import ast
import weakref

__all__ = ["SCOPES", "falsy_defaults", "none_defaults", "own_nodes", "walk"]

SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
# Fields that never hold a node worth visiting: contexts and operators are empty singletons,
# the rest are strings and numbers.
_LEAF_FIELDS = frozenset(
    {"ctx", "op", "ops", "id", "attr", "arg", "asname", "level", "kind", "type_comment"}
)
_CHILD_FIELDS: dict[type[ast.AST], tuple[str, ...]] = {}
_WALKED: weakref.WeakKeyDictionary[ast.AST, tuple[ast.AST, ...]] = weakref.WeakKeyDictionary()
_ALL: weakref.WeakKeyDictionary[ast.AST, tuple[ast.AST, ...]] = weakref.WeakKeyDictionary()


def child_fields(kind: type[ast.AST]) -> tuple[str, ...]:
    """The fields of a node type that may hold nodes (``ast.iter_child_nodes`` without the
    contexts, operators and plain values)."""
    fields = _CHILD_FIELDS.get(kind)
    if fields is None:
        fields = _CHILD_FIELDS[kind] = tuple(f for f in kind._fields if f not in _LEAF_FIELDS)
    return fields


def own_nodes(function: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[ast.AST, ...]:
    """The nodes of ``function``'s body outside nested scopes: a nested ``def``, lambda or
    class is one of them, what is inside it is not (it has nodes of its own). Depth first,
    the last statement first; the decorators, arguments and annotations are not the body's."""
    found = _WALKED.get(function)
    if found is None:
        found = _WALKED[function] = tuple(_walk(function.body))
    return found


def walk(node: ast.AST) -> tuple[ast.AST, ...]:
    """``ast.walk(node)``, in its order (breadth first, ``node`` first), without the
    contexts, operators and plain values no reader looks for; a module's or a function's
    walk is kept while its tree lives (the app-store, held-class and registry readers walk
    the same methods)."""
    found = _ALL.get(node)
    if found is None:
        found = tuple(_breadth_first(node))
        if isinstance(node, ast.Module | ast.FunctionDef | ast.AsyncFunctionDef):
            _ALL[node] = found
    return found


def _breadth_first(node: ast.AST) -> list[ast.AST]:
    found = [node]
    for current in found:  # grows while it is read: a queue without the pops
        found += _children(current)
    return found


def _walk(body: list[ast.stmt]) -> list[ast.AST]:
    found: list[ast.AST] = []
    stack: list[ast.AST] = list(body)
    while stack:
        current = stack.pop()
        found.append(current)
        if not isinstance(current, SCOPES):
            stack += _children(current)
    return found


def _children(node: ast.AST) -> list[ast.AST]:
    """``ast.iter_child_nodes(node)``, in its order, without the leaf fields."""
    found: list[ast.AST] = []
    for name in child_fields(type(node)):
        value = getattr(node, name)
        if isinstance(value, list):
            found += [v for v in value if isinstance(v, ast.AST)]
        elif isinstance(value, ast.AST):
            found.append(value)
    return found


def falsy_defaults(args: ast.arguments) -> list[str]:
    """The parameters whose default is a falsy literal (``None``, ``False``, ``0``, ``''``)."""
    return [
        a.arg
        for a, d in _defaults(args)
        if isinstance(d, ast.Constant) and d.value in (None, False, 0, "") and d.value is not True
    ]


def none_defaults(args: ast.arguments) -> list[str]:
    """The parameters whose default is ``None``."""
    return [a.arg for a, d in _defaults(args) if isinstance(d, ast.Constant) and d.value is None]


def _defaults(args: ast.arguments) -> list[tuple[ast.arg, ast.expr]]:
    positional = [*args.posonlyargs, *args.args]
    return [
        *zip(positional[len(positional) - len(args.defaults) :], args.defaults, strict=True),
        *((a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d),
    ]
