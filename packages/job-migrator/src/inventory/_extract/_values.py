"""What an assigned value or an annotation tells about a name."""

from __future__ import annotations

import ast

from inventory._extract._library import FACTORIES
from inventory._extract._resolve import ORM_ROW, Resolver, capitalised
from inventory._extract._scopes import Binding, BindingKind
from inventory.summary import ReceiverKind

_ORM_SHORTCUTS = frozenset({"django.shortcuts.get_object_or_404"})
_SESSION_NAMES = frozenset({"session", "db", "db_session", "self.session", "self.db"})
_FILE_OPENERS = frozenset(
    {
        "builtins.open",
        "io.open",
        "codecs.open",
        "gzip.open",
        "bz2.open",
        "lzma.open",
        "pathlib.Path.open",
    }
    | {"tempfile.NamedTemporaryFile", "tempfile.TemporaryFile"}
)


def binding_for_value(value: ast.expr, resolver: Resolver) -> Binding:
    """The binding ``name = value`` creates."""
    if isinstance(value, ast.Await):
        value = value.value
    if isinstance(value, ast.Call):
        return _binding_for_call(value, resolver)
    if isinstance(value, ast.Lambda):
        return Binding(BindingKind.CALLABLE)
    if isinstance(value, ast.Name | ast.Attribute):
        return _binding_for_reference(value, resolver)
    return Binding(BindingKind.OTHER)


def _binding_for_reference(value: ast.Name | ast.Attribute, resolver: Resolver) -> Binding:
    """``x = y`` shares y's binding; ``x = self.client`` takes the attribute's type."""
    if isinstance(value, ast.Name):
        found = resolver.scope.lookup(value.id)
        if found is not None and found.kind is BindingKind.PARAM:
            # A local copy of a parameter: typed if the parameter is annotated.
            kind = BindingKind.INSTANCE if found.target else BindingKind.OTHER
            return Binding(kind, found.target)
        if found is not None:
            return found
    attribute_type = _self_attribute_type(value, resolver)
    if attribute_type:
        return Binding(BindingKind.INSTANCE, attribute_type)
    resolved = resolver.expr(value)
    if resolved.receiver in (ReceiverKind.NONE, ReceiverKind.MODULE, ReceiverKind.CLASS):
        return Binding(BindingKind.ALIAS, resolved.target)
    return Binding(BindingKind.OTHER)


def _self_attribute_type(value: ast.expr, resolver: Resolver) -> str:
    if not isinstance(value, ast.Attribute) or not isinstance(value.value, ast.Name):
        return ""
    owner = resolver.scope.lookup(value.value.id)
    if owner is None or owner.kind is not BindingKind.SELF:
        return ""
    cls = resolver.classes.get(owner.target)
    return cls.attributes.get(value.attr, "") if cls else ""


def _binding_for_call(call: ast.Call, resolver: Resolver) -> Binding:
    resolved = resolver.expr(call.func)
    target = resolved.target
    if target in FACTORIES:
        return Binding(BindingKind.INSTANCE, FACTORIES[target], call)
    loaded = _class_loader(call, target)
    if loaded:
        return Binding(BindingKind.ALIAS, loaded)
    returned = resolver.returns.get(target)
    if returned:
        return Binding(BindingKind.INSTANCE, returned, call)
    if target in _FILE_OPENERS or target == "?.open":  # open(...), path.open(...)
        return Binding(BindingKind.FILE, "io.IOBase", call)
    model = orm_model(call, resolver, target)
    if model is not None:
        return Binding(BindingKind.ORM, model, call)
    if resolved.receiver is not ReceiverKind.UNKNOWN and capitalised(target):
        return Binding(BindingKind.INSTANCE, target, call)
    return Binding(BindingKind.OTHER, node=call)


_CLASS_LOADERS = {"oscar.core.loading.get_class": "oscar.apps"}


def _class_loader(call: ast.Call, target: str) -> str:
    """``get_class("checkout.mixins", "Mixin")`` (django-oscar) imports ``oscar.apps.checkout.mixins.Mixin``
    (a forked app overrides it at run time; the default is what a scan can see)."""
    root = _CLASS_LOADERS.get(target)
    args = call.args
    if (
        root is None
        or len(args) < 2
        or not all(isinstance(a, ast.Constant) and isinstance(a.value, str) for a in args[:2])
    ):
        return ""
    module, name = args[0].value, args[1].value  # type: ignore[attr-defined]
    return f"{root}.{module}.{name}" if module and name.isidentifier() else ""


def orm_model(call: ast.Call, resolver: Resolver, target: str) -> str | None:
    """The model of ``X.objects.get(...)`` / ``...filter().first()`` / ``session.get(X, ..)``;
    "" when the call loads a row of an unknown model, None when it does not load one."""
    if target in _ORM_SHORTCUTS:
        return _model_from_arg(call, resolver)
    if not isinstance(call.func, ast.Attribute) or call.func.attr not in ORM_ROW:
        return None
    head = target.rpartition(".")[0]
    if ".objects" in head and not head.startswith("?"):
        return head.partition(".objects")[0]
    receiver = resolver.text.segment(call.func.value)
    if "objects" in receiver or ".query(" in receiver:
        return ""
    if call.func.attr == "get" and (receiver in _SESSION_NAMES or receiver.endswith(".session")):
        return _model_from_arg(call, resolver)
    return None


def _model_from_arg(call: ast.Call, resolver: Resolver) -> str:
    if call.args and isinstance(call.args[0], ast.Name | ast.Attribute):
        return resolver.dotted(call.args[0]) or ""
    return ""


# Annotations that say nothing about the value: a receiver typed ``Any`` is untyped.
_UNTYPED = frozenset({"typing.Any", "typing_extensions.Any", "builtins.object"})


def annotation_type(node: ast.expr | None, resolver: Resolver) -> str:
    """``x: Foo``, ``x: Foo | None``, ``x: Optional[Foo]``, ``x: "Foo"`` -> resolved Foo."""
    if node is None:
        return ""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return _string_annotation(node.value, resolver)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return annotation_type(node.left, resolver) or annotation_type(node.right, resolver)
    if isinstance(node, ast.Subscript):
        head = resolver.dotted(node.value) or ""
        if head.endswith(("Optional", "Annotated")):
            inner = node.slice.elts[0] if isinstance(node.slice, ast.Tuple) else node.slice
            return annotation_type(inner, resolver)
        return ""
    if isinstance(node, ast.Constant) and node.value is None:
        return ""
    found = resolver.dotted(node) or ""
    return "" if found in _UNTYPED else found


def _string_annotation(text: str, resolver: Resolver) -> str:
    try:
        parsed = ast.parse(text.strip(), mode="eval").body
    except SyntaxError:
        return ""
    if isinstance(parsed, ast.Constant):
        return ""
    return annotation_type(parsed, resolver)
