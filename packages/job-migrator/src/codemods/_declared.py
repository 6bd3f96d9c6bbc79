"""What an argument expression is, as far as the application's declarations say.

Read only from declarations, never guessed: a literal, a parameter's
annotation, a helper's return annotation, a module constant, a type alias, a
dataclass or pydantic field, an ORM load (``Order.objects.get(...)``), a lazy
translation call. Anything else is :attr:`Kind.UNKNOWN` with the fact that is
missing, which :mod:`codemods._storable` turns into a skip reason.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from enum import StrEnum

from codemods._project import ModuleInfo, Project

_Def = ast.FunctionDef | ast.AsyncFunctionDef


class Kind(StrEnum):
    JSON = "json"  # plain JSON (scalars, lists, str-keyed dicts of them): stored as it is
    LAZY_TEXT = "lazy_text"  # a lazy translation string: forced with str() at the call site
    MODEL = "model"  # an ORM model instance (``type`` names the model class)
    ENCODED = "encoded"  # a type the runtime encodes when the job's parameter declares it
    NOT_DATA = "not_data"  # a class, a function, an open file: never stored
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class Declared:
    kind: Kind
    type: str = ""  # MODEL / ENCODED: the dotted class
    why: str = ""  # UNKNOWN: the missing fact; NOT_DATA: what it is


UNKNOWN = Declared(Kind.UNKNOWN)
JSON = Declared(Kind.JSON)
_SCALARS = frozenset({"int", "str", "float", "bool"})
_JSON_CALLS = frozenset({"str", "int", "float", "bool", "len", "round", "abs", "repr", "sorted"})
_CONTAINERS = frozenset({"list", "tuple", "set", "frozenset", "dict"})
_TYPING = ("typing.", "typing_extensions.", "collections.abc.")
_LAZY = frozenset(
    {
        f"django.utils.translation.{n}"
        for n in (
            "gettext_lazy",
            "ugettext_lazy",
            "pgettext_lazy",
            "ngettext_lazy",
            "npgettext_lazy",
        )
    }
    | {"django.utils.text.format_lazy"}
    | {
        f"{m}.{n}"
        for m in ("flask_babel", "flask_babelex")
        for n in ("lazy_gettext", "lazy_pgettext", "lazy_ngettext")
    }
)
# Classes pydantic stores as JSON and gives back (``payload.py`` validates the annotation).
_ENCODED = frozenset(
    {"datetime.datetime", "datetime.date", "datetime.time", "datetime.timedelta"}
    | {"decimal.Decimal", "uuid.UUID", "pathlib.Path", "pathlib.PurePath"}
)
_ENCODED_BASES = ("pydantic.BaseModel", "enum.Enum", "enum.StrEnum", "enum.IntEnum")
_MODEL_BASES = ("django.db.models.Model", "django.db.models.base.Model")
_ORM_LOADS = frozenset({"get", "create", "first", "last", "latest", "earliest", "get_or_none"})
_NOT_DATA = {
    "builtins.open": "an open file: pass its path",
    "io.open": "an open file: pass its path",
}


@dataclass(frozen=True)
class Where:
    """Where an expression is read: a module, and the function around it (None: module level)."""

    project: Project
    module: ModuleInfo
    function: _Def | None = None
    depth: int = 0

    def deeper(self, module: ModuleInfo | None = None, function: _Def | None = None) -> Where:
        return Where(self.project, module or self.module, function, self.depth + 1)


def declared(node: ast.expr, where: Where) -> Declared:
    if where.depth > 12:
        return Declared(Kind.UNKNOWN, why="its value is defined too indirectly")
    if isinstance(node, ast.Constant):
        return (
            JSON
            if not isinstance(node.value, bytes | complex)
            else Declared(Kind.NOT_DATA, why="bytes")
        )
    if isinstance(node, ast.JoinedStr):
        return JSON
    if isinstance(node, ast.List | ast.Tuple | ast.Set):
        return _all([declared(e, where) for e in node.elts])
    if isinstance(node, ast.Dict):
        keys = [declared(k, where) for k in node.keys if k is not None]
        return _all([*keys, *(declared(v, where) for v in node.values)])
    if isinstance(node, ast.BinOp):
        return _all([declared(node.left, where), declared(node.right, where)])
    if isinstance(node, ast.Name):
        return _name(node.id, where)
    if isinstance(node, ast.Attribute):
        return _attribute(node, where)
    if isinstance(node, ast.Call):
        return _call(node, where)
    return Declared(Kind.UNKNOWN, why=f"no declared type for `{ast.unparse(node)}`")


def _all(parts: list[Declared]) -> Declared:
    """A container or an operation is JSON when every part is."""
    for part in parts:
        if part.kind is not Kind.JSON:
            return (
                part
                if part.kind is not Kind.ENCODED
                else Declared(Kind.UNKNOWN, why=f"a container of {part.type}")
            )
    return JSON


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
    for node in _own_nodes(fn):
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


def _own_nodes(fn: _Def) -> list[ast.AST]:
    out: list[ast.AST] = []
    todo: list[ast.AST] = list(fn.body)
    while todo:
        node = todo.pop()
        out.append(node)
        if not isinstance(node, _Def | ast.ClassDef | ast.Lambda):
            todo.extend(ast.iter_child_nodes(node))
    return out


def _name(name: str, where: Where) -> Declared:
    fn = where.function
    if fn is not None:
        params = {a.arg: a for a in [*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs]}
        bound = assignments(fn, name)
        if name in params and not bound:
            return _param(params[name], where)
        if len(bound) == 1 and isinstance(bound[0], ast.Assign) and name not in params:
            value = bound[0].value
            if len(bound[0].targets) == 1 and isinstance(bound[0].targets[0], ast.Name):
                return declared(value, where.deeper(function=fn))
        if name in params or bound:
            return Declared(Kind.UNKNOWN, why=f"`{name}` is bound more than once, or unpacked")
    return _module_level(name, where)


def _param(arg: ast.arg, where: Where) -> Declared:
    if arg.annotation is None:
        return Declared(Kind.UNKNOWN, why=f"parameter `{arg.arg}` has no annotation")
    return annotation(arg.annotation, where.deeper(function=None))


def _module_level(name: str, where: Where) -> Declared:
    module = where.module
    if name in module.assignments:
        return declared(module.assignments[name], where.deeper(function=None))
    if name in module.classes or name in module.functions:
        return Declared(Kind.NOT_DATA, why=f"`{name}` is a class or a function, not data")
    target = module.imports.get(name)
    found = where.project.lookup(target) if target else None
    if found is None:
        return Declared(
            Kind.UNKNOWN, why=f"`{name}` is not a literal, a parameter or a project constant"
        )
    info, last = found
    return _module_level(last, where.deeper(module=info, function=None))


def _attribute(node: ast.Attribute, where: Where) -> Declared:
    dotted = resolve_expr(node.value, where)
    found = where.project.lookup(f"{dotted}.{node.attr}") if dotted else None
    if found is not None:  # ``module.CONSTANT`` of a project module
        return _module_level(found[1], where.deeper(module=found[0], function=None))
    owner = declared(node.value, where)
    if owner.kind is Kind.MODEL and node.attr in ("pk", "id"):
        return JSON if primary_key_is_int(owner.type, where) else UNKNOWN
    if owner.type:  # a project class: a dataclass, pydantic or attrs field
        return _field(owner.type, node.attr, where)
    return Declared(Kind.UNKNOWN, why=f"no declared type for `{ast.unparse(node)}`")


def _field(cls: str, attr: str, where: Where) -> Declared:
    """``x.attr`` where x is a project class declaring ``attr: T`` (dataclass, pydantic, attrs)."""
    found = where.project.lookup(cls)
    if found is None or found[1] not in found[0].classes:
        return Declared(Kind.UNKNOWN, why=f"`{attr}` of {cls}: the class is not in the project")
    for stmt in found[0].classes[found[1]].body:
        if (
            isinstance(stmt, ast.AnnAssign)
            and isinstance(stmt.target, ast.Name)
            and stmt.target.id == attr
        ):
            return annotation(stmt.annotation, where.deeper(module=found[0], function=None))
    return Declared(Kind.UNKNOWN, why=f"{cls} declares no type for `{attr}`")


def _call(node: ast.Call, where: Where) -> Declared:
    dotted = resolve_expr(node.func, where)
    if dotted is None:
        return Declared(
            Kind.UNKNOWN, why=f"no declared return type for `{ast.unparse(node.func)}(...)`"
        )
    if dotted in _LAZY:
        return Declared(Kind.LAZY_TEXT)
    if dotted in _NOT_DATA:
        return Declared(Kind.NOT_DATA, why=_NOT_DATA[dotted])
    if dotted.startswith("builtins.") and dotted.removeprefix("builtins.") in _JSON_CALLS:
        return JSON
    model = _orm_load(node, dotted, where)
    if model:
        return Declared(Kind.MODEL, model)
    found = where.project.lookup(dotted)
    if found is not None and found[1] in found[0].functions:
        returns = found[0].functions[found[1]].returns
        if returns is not None:
            return annotation(returns, where.deeper(module=found[0], function=None))
    if found is not None and found[1] in found[0].classes:
        return _class(f"{found[0].name}.{found[1]}", where)
    return Declared(
        Kind.UNKNOWN, why=f"no declared return type for `{ast.unparse(node.func)}(...)`"
    )


def _orm_load(node: ast.Call, dotted: str, where: Where) -> str:
    """The model of ``Model.objects.get(...)`` / ``get_object_or_404(Model, ...)``, else ""."""
    if dotted == "django.shortcuts.get_object_or_404" and node.args:
        model = resolve_expr(node.args[0], where) or ""
        return model if is_model(model, where) else ""
    head, _, method = dotted.rpartition(".")
    for manager in (".objects", "._default_manager"):
        if method in _ORM_LOADS and head.endswith(manager):
            model = head.removesuffix(manager)
            return model if is_model(model, where) else ""
    return ""


def annotation(node: ast.expr, where: Where) -> Declared:
    if isinstance(node, ast.Constant):
        if node.value is None:
            return JSON
        if isinstance(node.value, str):
            try:
                return annotation(ast.parse(node.value, mode="eval").body, where.deeper())
            except SyntaxError:
                return UNKNOWN
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _union([annotation(node.left, where), annotation(node.right, where)])
    if isinstance(node, ast.Subscript):
        return _generic(node, where)
    dotted = resolve_expr(node, where) if isinstance(node, ast.Name | ast.Attribute) else None
    if dotted is None:
        return Declared(Kind.UNKNOWN, why=f"annotation `{ast.unparse(node)}` is not a type")
    return _annotated_name(dotted, where)


def _annotated_name(dotted: str, where: Where) -> Declared:
    short = dotted.removeprefix("builtins.")
    if short in _SCALARS or short in _CONTAINERS or dotted in ("builtins.None",):
        return JSON
    if dotted in _ENCODED:
        return Declared(Kind.ENCODED, dotted)
    found = where.project.lookup(dotted)
    if found is not None and found[1] in found[0].assignments:  # a type alias
        value = found[0].assignments[found[1]]
        return annotation(value, where.deeper(module=found[0], function=None))
    if found is not None and found[1] in found[0].classes:
        return _class(f"{found[0].name}.{found[1]}", where)
    return Declared(Kind.UNKNOWN, why=f"{dotted} is not a type the runtime stores")


def _generic(node: ast.Subscript, where: Where) -> Declared:
    head = (resolve_expr(node.value, where) or "").removeprefix("builtins.")
    for prefix in _TYPING:
        head = head.removeprefix(prefix)
    items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
    if head in ("Annotated",):
        return annotation(items[0], where)
    if head == "Literal":
        return JSON
    if head in ("Optional", "Union"):
        return _union([annotation(i, where) for i in items])
    containers = ("list", "tuple", "set", "frozenset", "dict", "List", "Tuple", "Set", "Dict")
    if head in (*containers, "Sequence", "Mapping", "Iterable", "FrozenSet"):
        parts = [
            annotation(i, where)
            for i in items
            if not (isinstance(i, ast.Constant) and i.value is ...)
        ]
        return _all(parts)
    return Declared(
        Kind.UNKNOWN, why=f"annotation `{ast.unparse(node)}` is not a type the runtime stores"
    )


def _union(parts: list[Declared]) -> Declared:
    kinds = {p.kind for p in parts}
    if kinds == {Kind.JSON}:
        return JSON
    rest = [p for p in parts if p.kind is not Kind.JSON]
    return rest[0] if len(rest) == 1 and rest[0].kind is Kind.MODEL else _all(parts)


def _class(qualname: str, where: Where) -> Declared:
    if is_model(qualname, where):
        return Declared(Kind.MODEL, qualname)
    if any(_derives(qualname, base, where) for base in _ENCODED_BASES):
        return Declared(Kind.ENCODED, qualname)
    return Declared(Kind.UNKNOWN, qualname, why=f"{qualname} is not a type the runtime stores")


def is_model(qualname: str, where: Where) -> bool:
    return any(_derives(qualname, base, where) for base in _MODEL_BASES)


def _derives(qualname: str, base: str, where: Where, depth: int = 0) -> bool:
    if qualname == base or depth > 8:
        return qualname == base
    found = where.project.lookup(qualname)
    if found is None or found[1] not in found[0].classes:
        return False
    inside = Where(where.project, found[0])
    for node in found[0].classes[found[1]].bases:
        dotted = resolve_expr(node, inside)
        if dotted is not None and _derives(dotted, base, where, depth + 1):
            return True
    return False


_INT_FIELDS = ("AutoField", "BigAutoField", "SmallAutoField", "IntegerField", "BigIntegerField")


def primary_key_is_int(model: str, where: Where) -> bool:
    """Django's default ``id`` (an auto field), or a declared integer primary key."""
    found = where.project.lookup(model)
    if found is None or found[1] not in found[0].classes:
        return False
    for stmt in found[0].classes[found[1]].body:
        value = stmt.value if isinstance(stmt, ast.Assign | ast.AnnAssign) else None
        if isinstance(value, ast.Call) and any(
            k.arg == "primary_key" and isinstance(k.value, ast.Constant) and k.value.value is True
            for k in value.keywords
        ):
            name = (
                value.func.attr
                if isinstance(value.func, ast.Attribute)
                else ast.unparse(value.func)
            )
            return name.endswith(_INT_FIELDS)
    return True
