"""Objects reached through a proxy or chosen in the app's set-up.

* ``LocalProxy(lambda: current_app.extensions["accounts"])`` and ``LocalProxy(_get_x)``
  (werkzeug's context-local proxy) stand for what the getter returns: the lambda's body,
  or ``_get_x()`` (``"pkg._get_x()"``, which the index reads in the getter's module);
* ``(mail_util_cls or MailUtil)(app)``, ``(Custom if flag else MailUtil)(app)``: a class
  picked from a few written in the code; the instance is one of those that are known
  classes (their union); an operand of unknown value (a parameter defaulting to None)
  leaves the class written beside it as the one the set-up names;
* ``import_string(config.get("MAIL_CLASS", "pkg.mail.Mailer"))``: the literal default;
* ``self.mail_cls = mail_cls`` (a parameter defaulting to ``MailUtil``) then
  ``self.mail = self.mail_cls(app)``: an attribute holding a class, called later;
* ``return self._mail`` in a property or getter: what that attribute holds.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from inventory._extract._nodes import walk
from inventory._extract._resolve import Resolver, capitalised
from inventory._extract._scopes import Binding, BindingKind

PROXIES = frozenset({"werkzeug.local.LocalProxy", "werkzeug.LocalProxy"})
_PATH_LOADERS = frozenset({"import_string", "import_by_path", "locate"})
_LOOKUPS = frozenset({"get", "setdefault"})
ValueOf = Callable[[ast.expr, Resolver], Binding]
Union = Callable[[list[str]], str]


def proxied(call: ast.Call, target: str, resolver: Resolver, value_of: ValueOf) -> str:
    """The type of the object a ``LocalProxy(getter)`` stands for; "" when unknown."""
    if target not in PROXIES or len(call.args) != 1:
        return ""
    getter = call.args[0]
    if isinstance(getter, ast.Lambda):
        found = value_of(getter.body, resolver)
        return found.target if found.kind is BindingKind.INSTANCE else ""
    if isinstance(getter, ast.Name | ast.Attribute):
        name = resolver.dotted(getter)
        return f"{name}()" if name and not name.startswith("builtins.") else ""
    return ""


def picked_class(call: ast.Call, resolver: Resolver, union: Union) -> str:
    """``(cls or Default)(app)``: the union of the known classes among the operands."""
    func = call.func
    if isinstance(func, ast.BoolOp) and isinstance(func.op, ast.Or):
        operands = func.values
    elif isinstance(func, ast.IfExp):
        operands = [func.body, func.orelse]
    else:
        return ""
    found = [_class_named(o, resolver) for o in operands]
    known = [name for name in found if name]
    return union(known) if known else ""


def _class_named(node: ast.expr, resolver: Resolver) -> str:
    if not isinstance(node, ast.Name | ast.Attribute):
        return ""
    name = resolver.dotted(node) or ""
    own = name.rpartition(".")[0] in resolver.classes  # ``self.mail_util_cls``: a value
    constant = name.rpartition(".")[2].isupper()  # ``MAILER``: a setting, not a class
    return name if capitalised(name) and not own and not constant else ""


def configured_class(call: ast.Call, target: str) -> str:
    """``import_string(settings.get("X_CLASS", "pkg.mod.Cls"))``: the default's dotted name."""
    if target.rpartition(".")[2] not in _PATH_LOADERS or len(call.args) != 1:
        return ""
    lookup = call.args[0]
    if not isinstance(lookup, ast.Call) or not isinstance(lookup.func, ast.Attribute):
        return ""
    if lookup.func.attr not in _LOOKUPS or len(lookup.args) != 2:
        return ""
    default = lookup.args[1]
    if not isinstance(default, ast.Constant) or not isinstance(default.value, str):
        return ""
    parts = default.value.split(".")
    return default.value if len(parts) > 1 and all(p.isidentifier() for p in parts) else ""


def held_classes(node: ast.ClassDef, resolver: Resolver, union: Union) -> dict[str, str]:
    """Attributes that hold a class, not an instance, to be called later: ``self.mail_cls
    = mail_cls`` with the parameter defaulting to ``MailUtil``, ``self.mail_cls =
    MailUtil``, ``self.mail_cls = mail_cls or MailUtil``: attribute -> the class(es)."""
    found: dict[str, list[str]] = {}
    for method in node.body:
        if not isinstance(method, ast.FunctionDef | ast.AsyncFunctionDef) or not method.args.args:
            continue
        self_name = method.args.args[0].arg
        defaults = _default_classes(method, resolver)
        for stmt in walk(method):
            if not isinstance(stmt, ast.Assign) or len(stmt.targets) != 1:
                continue
            name = _self_attribute(stmt.targets[0], self_name)
            held = _class_value(stmt.value, resolver, defaults, union) if name else ""
            if name and held:
                found.setdefault(name, []).append(held)
    return {name: kind for name, held in found.items() if (kind := union(held))}


def made_by_attribute(value: ast.expr | None, self_name: str | None, held: dict[str, str]) -> str:
    """``self.mail_cls(app)`` with ``mail_cls`` holding MailUtil: an instance of MailUtil."""
    if not isinstance(value, ast.Call) or not self_name:
        return ""
    return held.get(_self_attribute(value.func, self_name) or "", "")


def _self_attribute(node: ast.expr, self_name: str) -> str | None:
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return node.attr if node.value.id == self_name else None
    return None


def _default_classes(
    method: ast.FunctionDef | ast.AsyncFunctionDef, resolver: Resolver
) -> dict[str, str]:
    """Parameters whose default is a class (``mail_util_cls=MailUtil``)."""
    args = method.args
    positional = [*args.posonlyargs, *args.args]
    pairs = list(
        zip(positional[len(positional) - len(args.defaults) :], args.defaults, strict=True)
    )
    pairs += [
        (a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d is not None
    ]
    found = {a.arg: _class_named(d, resolver) for a, d in pairs}
    return {name: cls for name, cls in found.items() if cls}


def _class_value(
    value: ast.expr, resolver: Resolver, defaults: dict[str, str], union: Union
) -> str:
    if isinstance(value, ast.Name) and value.id in defaults:
        return defaults[value.id]
    if isinstance(value, ast.BoolOp) and isinstance(value.op, ast.Or):
        known = [_class_value(v, resolver, defaults, union) for v in value.values]
        return union([k for k in known if k]) if any(known) else ""
    return _class_named(value, resolver) if isinstance(value, ast.Name | ast.Attribute) else ""


def returned_attribute(body: list[ast.stmt], self_name: str, cls: str) -> str:
    """``return self._mail_util`` (a property or getter, every return the same attribute):
    ``"pkg.Cls._mail_util"``, which the index reads as the class that attribute holds."""
    found = {
        _self_attribute(stmt.value, self_name)
        for stmt in body
        if isinstance(stmt, ast.Return) and stmt.value is not None
    }
    attr = found.pop() if len(found) == 1 else None
    return f"{cls}.{attr}" if attr else ""
