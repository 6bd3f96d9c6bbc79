"""Objects reached through a proxy or chosen in the app's set-up.

* ``LocalProxy(lambda: current_app.extensions["accounts"])`` and ``LocalProxy(_get_x)``
  (werkzeug's context-local proxy) stand for what the getter returns: the lambda's body,
  or ``_get_x()`` (``"pkg._get_x()"``, which the index reads in the getter's module);
* ``(mail_util_cls or MailUtil)(app)``, ``(Custom if flag else MailUtil)(app)``: a class
  picked from a few written in the code; the instance is one of those that are known
  classes (their union); an operand of unknown value (a parameter defaulting to None)
  leaves the class written beside it as the one the set-up names;
* ``import_string(config.get("MAIL_CLASS", "pkg.mail.Mailer"))``: the literal default.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from inventory._extract._resolve import Resolver, capitalised
from inventory._extract._scopes import Binding, BindingKind

_PROXIES = frozenset({"werkzeug.local.LocalProxy", "werkzeug.LocalProxy"})
_PATH_LOADERS = frozenset({"import_string", "import_by_path", "locate"})
_LOOKUPS = frozenset({"get", "setdefault"})
ValueOf = Callable[[ast.expr, Resolver], Binding]
Union = Callable[[list[str]], str]


def proxied(call: ast.Call, target: str, resolver: Resolver, value_of: ValueOf) -> str:
    """The type of the object a ``LocalProxy(getter)`` stands for; "" when unknown."""
    if target not in _PROXIES or len(call.args) != 1:
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
