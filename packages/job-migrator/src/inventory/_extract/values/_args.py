"""Can an argument passed to a job be stored as JSON? True, False with a reason, or None."""

from __future__ import annotations

import ast

from inventory._extract._resolve import Resolver
from inventory._extract._scopes import BindingKind
from inventory._extract.values._values import class_of, orm_model
from inventory.models import Argument

# Name endings that, by convention, hold ids or plain text.
_SCALAR_WORDS = frozenset(
    {
        "id",
        "ids",
        "pk",
        "pks",
        "uuid",
        "email",
        "emails",
        "name",
        "names",
        "key",
        "slug",
        "url",
        "token",
        "count",
        "number",
        "str",
        "text",
        "path",
        "code",
        "amount",
    }
)
_SCALAR_TYPES = frozenset(
    {"builtins.int", "builtins.str", "builtins.float", "builtins.bool", "uuid.UUID"}
)
_SCALAR_CALLS = frozenset(
    {"builtins.str", "builtins.int", "builtins.float", "builtins.bool", "builtins.len"}
)
_REQUEST_NAMES = frozenset({"request", "req"})
_CONTAINERS = (ast.Tuple, ast.List, ast.Set)

Verdict = tuple[bool | None, str]
_BY_KIND = {
    BindingKind.SELF: "'{name}' is the enclosing object: pass its id",
    BindingKind.CLS: "'{name}' is a class: not data",
    BindingKind.ORM: "'{name}' is an ORM instance: pass its primary key",
    BindingKind.FILE: "'{name}' is an open file: pass its path",
    BindingKind.CALLABLE: "'{name}' is a function: not data",
    BindingKind.FUNCTION: "'{name}' is a function: not data",
    BindingKind.CLASS: "'{name}' is a class: not data",
}
# Types (by class name) that are never data, whatever module they come from.
_NOT_DATA = (
    (
        frozenset({"Request", "HttpRequest", "WSGIRequest", "ASGIRequest", "WebSocket"}),
        "a request object: pass the fields the job needs",
    ),
    (
        frozenset(
            {
                "UploadFile",
                "UploadedFile",
                "InMemoryUploadedFile",
                "TemporaryUploadedFile",
                "FileStorage",
            }
        ),
        "an uploaded file: store it and pass its path",
    ),
    (
        frozenset({"Session", "AsyncSession", "Connection", "AsyncConnection", "Cursor", "Engine"}),
        "a database session or connection: the job opens its own",
    ),
    (
        frozenset({"BackgroundTasks", "Lock", "RLock", "Event", "Thread", "Response"}),
        "a live object, not data",
    ),
)
_MODEL_BASES = ("Model", "models.Model", "Base", "DeclarativeBase", "SQLModel", "Document")
UNKNOWN: Verdict = (None, "")


def argument(name: str, node: ast.expr, resolver: Resolver) -> Argument:
    serialisable, reason = verdict(node, resolver)
    return Argument(
        name=name,
        source=resolver.text.source(node),
        serialisable=serialisable,
        reason=reason,
        type=_known(class_of(node, resolver, None)),
    )


def _known(name: str) -> str:
    """A class name, not a result the classifier has yet to type (``pkg.f()``)."""
    return "" if not name or "(" in name or "@" in name or name.startswith("?") else name


def verdict(node: ast.expr, resolver: Resolver) -> Verdict:
    if isinstance(node, ast.Constant):
        return (True, "") if not isinstance(node.value, bytes) else (False, "bytes are not JSON")
    if isinstance(node, ast.JoinedStr):
        return True, ""
    if isinstance(node, ast.Name):
        return _name(node.id, resolver)
    if isinstance(node, ast.Attribute):
        return _attribute(node, resolver)
    if isinstance(node, _CONTAINERS):
        return _all(node.elts, resolver)
    if isinstance(node, ast.Dict):
        return _all([v for v in node.values if v is not None], resolver)
    if isinstance(node, ast.Lambda):
        return False, "a lambda: functions cannot be stored as JSON"
    if isinstance(node, ast.Call):
        return _call(node, resolver)
    return UNKNOWN


def _name(name: str, resolver: Resolver) -> Verdict:
    if name in _REQUEST_NAMES:
        return False, f"'{name}' is the request object: pass the fields the job needs"
    binding = resolver.scope.lookup(name)
    if binding is None:
        return (True, "") if _scalar_name(name) else UNKNOWN
    reason = _BY_KIND.get(binding.kind)
    if reason is not None:
        return False, reason.format(name=name)
    if binding.target in _SCALAR_TYPES:
        return True, ""
    if binding.kind in (BindingKind.PARAM, BindingKind.INSTANCE) and binding.target:
        typed = _typed(name, binding.target, resolver)
        if typed is not None:
            return typed
    return (True, "") if _scalar_name(name) else UNKNOWN


def _typed(name: str, rtype: str, resolver: Resolver) -> Verdict | None:
    """Annotated or constructed as a type that is not data: a model, a request, a file..."""
    last = rtype.rpartition(".")[2]
    for names, reason in _NOT_DATA:
        if last in names:
            return False, f"'{name}' is {reason}"
    if _is_model(rtype, resolver):
        return False, f"'{name}' is an instance of the model {rtype}: pass its primary key"
    return None


def _attribute(node: ast.Attribute, resolver: Resolver) -> Verdict:
    if _scalar_name(node.attr):
        return True, ""
    root = node.value
    while isinstance(root, ast.Attribute):
        root = root.value
    if isinstance(root, ast.Name) and root.id in _REQUEST_NAMES:
        return False, f"'{resolver.text.segment(node)}' is part of the request object"
    return UNKNOWN


def _call(node: ast.Call, resolver: Resolver) -> Verdict:
    target = resolver.expr(node.func).target
    if target in _SCALAR_CALLS:
        return True, ""
    if target in ("builtins.open", "io.open"):
        return False, "an open file: pass its path"
    if orm_model(node, resolver, target) is not None:
        return False, "an ORM instance: pass its primary key"
    return UNKNOWN


def _all(nodes: list[ast.expr], resolver: Resolver) -> Verdict:
    result: Verdict = (True, "")
    for element in nodes:
        found = verdict(element, resolver)
        if found[0] is False:
            return found
        if found[0] is None:
            result = UNKNOWN
    return result


def _scalar_name(name: str) -> bool:
    # The last word of snake_case decides: ``user_id``, ``email``, ``order.id``; not ``valid``.
    return name.lower().rpartition("_")[2] in _SCALAR_WORDS


def _is_model(rtype: str, resolver: Resolver) -> bool:
    if ".models." in rtype or rtype.startswith("models."):
        return True
    local = resolver.classes.get(rtype)
    return local is not None and any(b.endswith(_MODEL_BASES) for b in local.bases)
