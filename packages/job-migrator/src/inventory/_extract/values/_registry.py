"""What a module stores on the application object, for ``current_app`` look-ups elsewhere.

Flask's documented extension pattern: an extension's ``init_app(app)`` registers
itself with ``app.extensions["name"] = self`` (or a state object), and applications
keep objects on the app (``app.mail = Mail(app)``) or on ``g`` (``g.db = connect()``).
Views read them back through ``current_app.extensions["name"]``, ``current_app.mail``
and ``g.db``, often in another module. Each store found here becomes an entry of
the file's ``assignments`` keyed ``APP_OBJECT + "extensions:name"`` (``"attr:mail"``,
``"g:db"``) with the class stored; the index joins them over the whole scan.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator

from inventory._extract._nodes import walk
from inventory._extract._resolve import Resolver, app_object, capitalised, extension_object
from inventory._extract._scopes import Binding, BindingKind

_APP_NAMES = frozenset({"app", "application"})
_G = frozenset({"flask.g", "flask.globals.g"})
_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)
ValueOf = Callable[[ast.expr, Resolver], Binding]
Union = Callable[[list[str]], str]


def app_stores(
    tree: ast.Module, prefix: str, resolver: Resolver, value_of: ValueOf, union: Union
) -> dict[str, str]:
    """Key (``APP_OBJECT + ...``) -> what this module stores under it: a class, a union
    of classes, or one helper's result; keys of anything else are left out."""
    found = _stored_values(tree, prefix, resolver, value_of)
    joined = {key: union(values) or _one(values) for key, values in found.items()}
    return {key: value for key, value in joined.items() if value}


def _one(values: list[str]) -> str:
    distinct = set(values)
    return distinct.pop() if len(distinct) == 1 else ""


def _stored_values(
    tree: ast.Module, prefix: str, resolver: Resolver, value_of: ValueOf
) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for owner, function in _functions(tree, prefix):
        self_name = function.args.args[0].arg if owner and function.args.args else ""
        local: dict[str, ast.expr] = {}
        for node in walk(function):
            if not isinstance(node, ast.Assign):
                continue
            for target in node.targets:
                if isinstance(target, ast.Name):
                    local[target.id] = node.value
                key = _key(target, resolver)
                stored = _stored(node.value, owner, self_name, local, resolver, value_of)
                if key and stored:
                    found.setdefault(key, []).append(stored)
    return found


def _functions(
    tree: ast.Module, prefix: str
) -> Iterator[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
    """Module functions (owner "") and methods of top-level classes (owner: the class)."""
    for stmt in tree.body:
        if isinstance(stmt, _DEFS):
            yield "", stmt
        elif isinstance(stmt, ast.ClassDef):
            for inner in stmt.body:
                if isinstance(inner, _DEFS):
                    yield f"{prefix}.{stmt.name}", inner


def _key(target: ast.expr, resolver: Resolver) -> str:
    registered = extension_object(target)
    if registered or not isinstance(target, ast.Attribute):
        return registered
    holder = target.value
    if isinstance(holder, ast.Name) and holder.id in _APP_NAMES:
        return app_object("attr", target.attr)
    if isinstance(holder, ast.Attribute) and holder.attr in _APP_NAMES:
        return app_object("attr", target.attr)  # ``self.app.mail = ...``
    if isinstance(holder, ast.Name) and resolver.dotted(holder) in _G:
        return app_object("g", target.attr)
    return ""


def _stored(
    value: ast.expr,
    owner: str,
    self_name: str,
    local: dict[str, ast.expr],
    resolver: Resolver,
    value_of: ValueOf,
) -> str:
    """The class of the stored value: the extension itself (``self``), a constructor's
    class, or that of a local or module-level name bound to one; for a helper's result,
    ``"pkg.helper()"`` (the index reads what it returns)."""
    if isinstance(value, ast.Name) and owner and value.id == self_name:
        return owner
    if isinstance(value, ast.Name) and value.id in local and local[value.id] is not value:
        value = local[value.id]
    found = value_of(value, resolver)
    if found.kind is BindingKind.INSTANCE and capitalised(found.target):
        return found.target
    # ``saml_client_for(app)``: what that function returns, which the index may know
    returned = found.kind is BindingKind.OTHER and found.target.endswith("()")
    return found.target if returned and not found.target.startswith("?") else ""
