"""What an argument expression is, as far as the application's declarations say.

Read only from declarations, never guessed: a literal, a parameter's
annotation, a helper's return annotation, a module constant, a type alias, a
dataclass or pydantic field, an ORM load (``Order.objects.get(...)``), a lazy
translation call. Anything else is :attr:`Kind.UNKNOWN` with the fact that is
missing, which :mod:`codemods._storable` turns into a skip reason.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, replace
from enum import StrEnum

from codemods._orm import is_model, model_key, orm_load
from codemods._project import ModuleInfo
from codemods._resolve import (
    Where,
    assignments,
    derives,
    own_nodes,
    parent_map,
    reaching_assignment,
    resolve_expr,
)

_Def = ast.FunctionDef | ast.AsyncFunctionDef


class Kind(StrEnum):
    JSON = "json"  # plain JSON (scalars, lists, str-keyed dicts of them): stored as it is
    LAZY_TEXT = "lazy_text"  # a lazy translation string: forced with str() at the call site
    MODEL = "model"  # an ORM model instance (``type`` names the model class)
    MODEL_CLASS = "model_class"  # an ORM model class (a signal's ``sender``): stored by label
    ENCODED = "encoded"  # a type the runtime encodes when the job's parameter declares it
    NOT_DATA = "not_data"  # a class, a function, an open file: never stored
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class Declared:
    kind: Kind
    type: str = ""  # MODEL / ENCODED: the dotted class
    why: str = ""  # UNKNOWN: the missing fact; NOT_DATA: what it is
    built: bool = False  # MODEL: made by its constructor here, so it may have no row yet


UNKNOWN = Declared(Kind.UNKNOWN)
JSON = Declared(Kind.JSON)
_SCALARS = frozenset({"int", "str", "float", "bool"})
_JSON_CALLS = frozenset({"str", "int", "float", "bool", "len", "repr"})
# Builtins whose result is of the kind of their first argument: ``sorted(models)`` is a list
# of models, ``abs(Decimal(...))`` a Decimal.
_LIKE_ARG_CALLS = frozenset({"round", "abs", "sorted", "list", "tuple", "min", "max"})
_CONTAINERS = frozenset({"list", "tuple", "set", "frozenset", "dict"})
_CASTS = frozenset({"typing.cast", "typing_extensions.cast"})
# Class decorators whose classes the runtime stores as tagged JSON (their fields, by name).
_RECORD_DECORATORS = frozenset(
    {"dataclasses.dataclass", "attr.s", "attr.attrs", "attr.define", "attr.frozen"}
    | {"attrs.define", "attrs.frozen", "attr.mutable", "attrs.mutable"}
)
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
# Library calls whose documented result is a plain ``str`` (not a lazy or a "safe" subclass).
_STR_CALLS = frozenset(
    {
        f"django.utils.translation.{n}"
        for n in ("gettext", "ugettext", "pgettext", "ngettext", "npgettext", "gettext_noop")
    }
    | {f"flask_babel.{n}" for n in ("gettext", "pgettext", "ngettext", "_")}
    | {"django.urls.reverse", "django.core.urlresolvers.reverse", "json.dumps"}
)
# ``str`` methods that give back a str (or a list / tuple of str): on a JSON value they either
# give JSON or raise, since no other JSON type (list, dict, int, float, bool) has them.
_STR_METHODS = frozenset(
    {
        "capitalize", "casefold", "center", "expandtabs", "format", "join", "ljust", "lower",
        "lstrip", "partition", "removeprefix", "removesuffix", "replace", "rjust", "rpartition",
        "rsplit", "rstrip", "split", "splitlines", "strip", "swapcase", "title", "upper", "zfill",
    }
)  # fmt: skip
# Django settings that Django documents, and itself uses, as a plain str.
_DJANGO_STR_SETTINGS = frozenset(
    {
        f"django.conf.settings.{n}"
        for n in ("DEFAULT_FROM_EMAIL", "SERVER_EMAIL", "EMAIL_SUBJECT_PREFIX", "EMAIL_HOST_USER")
    }
)
# Django model fields whose value is a JSON scalar (or None) in Python.
_DJANGO_JSON_FIELDS = frozenset(
    {
        "CharField", "TextField", "EmailField", "SlugField", "URLField", "GenericIPAddressField",
        "IntegerField", "BigIntegerField", "SmallIntegerField", "PositiveIntegerField",
        "PositiveSmallIntegerField", "PositiveBigIntegerField", "BooleanField",
        "NullBooleanField", "FloatField",
    }
)  # fmt: skip
# Fields of Django's own user model (``django.contrib.auth``), read from its documentation.
_AUTH_USER = ("django.contrib.auth.models.User", "django.contrib.auth.models.AbstractUser")
_AUTH_USER_FIELDS = frozenset({"username", "email", "first_name", "last_name", "is_active"})
_NOT_DATA = {
    "builtins.open": "an open file: pass its path",
    "io.open": "an open file: pass its path",
}


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
        if isinstance(node.op, ast.Mod) and _literal_str(node.left):
            return JSON  # printf-style formatting of a literal: a str, or it raises
        return _all([declared(node.left, where), declared(node.right, where)])
    if isinstance(node, ast.Name):
        return _name(node.id, where)
    if isinstance(node, ast.Attribute):
        return _attribute(node, where)
    if isinstance(node, ast.Call):
        return _call(node, where)
    return Declared(Kind.UNKNOWN, why=f"no declared type for `{ast.unparse(node)}`")


def _literal_str(node: ast.expr) -> bool:
    return isinstance(node, ast.JoinedStr) or (
        isinstance(node, ast.Constant) and isinstance(node.value, str)
    )


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


def _name(name: str, where: Where) -> Declared:
    fn = where.function
    if fn is not None:
        params = {a.arg: a for a in [*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs]}
        bound = assignments(fn, name)
        if name in params and not bound:
            if where.payload_of is fn and params[name].annotation is None:
                return JSON  # on a worker, the job's argument as the payload decoded it
            return _param(params[name], where)
        only = bound[0] if len(bound) == 1 and name not in params else None
        if isinstance(only, ast.AnnAssign) and only.value is not None:
            return _annotated_binding(fn, name, only, where)
        if (
            isinstance(only, ast.Assign)
            and len(only.targets) == 1
            and isinstance(only.targets[0], ast.Name)
        ):
            return _bound_value(fn, name, only, where)
        reaching = reaching_assignment(fn, name, where.line) if where.line else None
        if reaching is not None:  # bound more than once, but one assignment reaches the use
            return _bound_value(fn, name, reaching, where)
        if name in params or bound:
            return Declared(
                Kind.UNKNOWN,
                why=f"`{name}` is bound more than once, and no one assignment reaches the use",
            )
    return _module_level(name, where)


_CONTAINER_LITERALS = (ast.List, ast.Dict, ast.Set, ast.ListComp, ast.DictComp, ast.SetComp)
# Calls that read a container and never change it.
_READERS = frozenset({f"builtins.{n}" for n in (*_JSON_CALLS, *_LIKE_ARG_CALLS, "dict", "set",
    "any", "all", "sum", "min", "max", "enumerate", "zip", "reversed", "print", "isinstance")}
    | {"json.dumps"})  # fmt: skip
_READ_METHODS = frozenset({"get", "copy", "count", "index", "keys", "values", "items"})


def _bound_value(fn: _Def, name: str, binding: ast.Assign, where: Where) -> Declared:
    """The value ``name = value`` gives at the use, unless a container built here is changed.

    ``rows = []`` is JSON as written, but ``rows.append(obj)``, ``rows[k] = obj``,
    ``fill(rows)`` or ``alias = rows`` can put anything in it before the call.
    """
    value = binding.value
    if isinstance(value, _CONTAINER_LITERALS):
        parts = [n for n in ast.walk(value) if n is not value]
        nested = any(isinstance(n, _CONTAINER_LITERALS) for n in parts)
        changed = _changed_container(fn, name, where, nested)
        if changed:
            return Declared(
                Kind.UNKNOWN,
                why=f"`{name}` is built here and then changed (line {changed}): its contents"
                " are not declared",
            )
    return declared(value, where.deeper(function=fn, line=binding.lineno))


def _annotated_binding(fn: _Def, name: str, binding: ast.AnnAssign, where: Where) -> Declared:
    """``uid: int = 5``: bound once; its declared type, else the value it is given."""
    assert binding.value is not None
    plain = ast.Assign(targets=[binding.target], value=binding.value)
    found = _bound_value(fn, name, ast.copy_location(plain, binding), where)
    if found.kind is not Kind.UNKNOWN:
        return found
    return annotation(binding.annotation, where.deeper(function=None))


def _changed_container(fn: _Def, name: str, where: Where, nested: bool) -> int | None:
    """The first line where ``name`` (or a part of it) is written, mutated, aliased or handed
    to a call that could change it; None when it is only read."""
    nodes = own_nodes(fn)
    parents = parent_map(nodes)
    for node in nodes:
        if not (isinstance(node, ast.Name) and node.id == name):
            continue
        top: ast.AST = node
        while isinstance(parents.get(top), ast.Attribute | ast.Subscript) and (
            parents[top].value is top  # type: ignore[attr-defined]
        ):
            top = parents[top]
        parent = parents.get(top)
        line = getattr(node, "lineno", 0)
        if isinstance(top, ast.Attribute | ast.Subscript) and not isinstance(top.ctx, ast.Load):
            return line  # rows[k] = x, del rows[k]
        if isinstance(parent, ast.Call) and parent.func is top:
            if isinstance(top, ast.Attribute) and top.attr not in _READ_METHODS:
                return line  # rows.append(x)
            continue
        if isinstance(parent, ast.Call | ast.keyword) and line != where.line:
            call = parent if isinstance(parent, ast.Call) else parents.get(parent)
            callee = resolve_expr(call.func, where) if isinstance(call, ast.Call) else None
            if callee not in _READERS:
                return line  # fill(rows): the callee may change it
        if isinstance(parent, ast.Assign | ast.AnnAssign | ast.NamedExpr) and top is parent.value:
            return line  # alias = rows
        if isinstance(parent, ast.AugAssign) and top is parent.target:
            return line
        if nested and isinstance(parent, ast.For | ast.comprehension) and top is parent.iter:
            return line  # for row in rows: row.append(x) changes a part of it
    return None


def _param(arg: ast.arg, where: Where) -> Declared:
    if arg.annotation is None:
        return Declared(Kind.UNKNOWN, why=f"parameter `{arg.arg}` has no annotation")
    return annotation(arg.annotation, where.deeper(function=None))


def _module_level(name: str, where: Where) -> Declared:
    module = where.module
    if name in module.assignments:
        return declared(module.assignments[name], where.deeper(function=None))
    if name in module.classes and is_model(f"{module.name}.{name}", where):
        return Declared(Kind.MODEL_CLASS, f"{module.name}.{name}")
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
    if dotted and f"{dotted}.{node.attr}" in _DJANGO_STR_SETTINGS:
        return JSON
    found = where.project.lookup(f"{dotted}.{node.attr}") if dotted else None
    if found is not None:  # ``module.CONSTANT`` of a project module
        return _module_level(found[1], where.deeper(module=found[0], function=None))
    member = _enum_member(dotted, node.attr, where) if dotted else None
    if member is not None:
        return member
    owner = declared(node.value, where)
    key = model_key(owner.type, where) if owner.kind is Kind.MODEL else None
    if owner.kind is Kind.MODEL and node.attr in (key.readable if key else ("pk", "id")):
        return JSON if key is not None else UNKNOWN
    if owner.kind is Kind.MODEL:
        return _model_field(owner.type, node.attr, where)
    if owner.type:  # a project class: a dataclass, pydantic or attrs field
        return _field(owner.type, node.attr, where)
    said = f"no declared type for `{ast.unparse(node)}`"
    return Declared(Kind.UNKNOWN, why=f"{said} ({owner.why})" if owner.why else said)


def _enum_member(cls: str, attr: str, where: Where) -> Declared | None:
    """``Colour.RED`` of a project enum: the enum type, which a job parameter must declare."""
    found = where.project.lookup(cls)
    if found is None or found[1] not in found[0].classes:
        return None
    qualname = f"{found[0].name}.{found[1]}"
    if not any(derives(qualname, base, where) for base in _ENCODED_BASES[1:]):
        return None
    members = {
        t.id
        for stmt in found[0].classes[found[1]].body
        if isinstance(stmt, ast.Assign)
        for t in stmt.targets
        if isinstance(t, ast.Name)
    }
    return Declared(Kind.ENCODED, qualname) if attr in members else None


def _model_field(model: str, attr: str, where: Where, depth: int = 0) -> Declared:
    """``obj.attr`` of a Django model instance: JSON when the model declares ``attr`` as a field
    whose value is a JSON scalar (its value when the call is made, as the call would read it)."""
    if model in _AUTH_USER:
        return JSON if attr in _AUTH_USER_FIELDS else _no_field(model, attr)
    found = where.project.lookup(model) if depth < 8 else None
    if found is None or found[1] not in found[0].classes:
        return _no_field(model, attr)
    klass = found[0].classes[found[1]]
    inside = Where(where.project, found[0])
    for stmt in klass.body:
        if not (
            isinstance(stmt, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == attr for t in stmt.targets)
        ):
            continue
        call = stmt.value
        field = (resolve_expr(call.func, inside) if isinstance(call, ast.Call) else None) or ""
        head, _, kind = field.rpartition(".")
        if head in ("django.db.models", "django.db.models.fields") and kind in _DJANGO_JSON_FIELDS:
            return JSON
        return _no_field(model, attr)
    for base in klass.bases:
        dotted = resolve_expr(base, inside)
        if dotted is not None and (dotted in _AUTH_USER or where.project.lookup(dotted)):
            found_in_base = _model_field(dotted, attr, where, depth + 1)
            if found_in_base.kind is Kind.JSON:
                return found_in_base
    return _no_field(model, attr)


def _no_field(model: str, attr: str) -> Declared:
    return Declared(Kind.UNKNOWN, why=f"{model} declares no plain-data field `{attr}`")


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
    model = orm_load(node, where)  # first: a query chain's callee resolves to no name
    if model:
        return Declared(Kind.MODEL, model)
    if isinstance(node.func, ast.Attribute) and node.func.attr in _STR_METHODS:
        owner = node.func.value
        if _literal_str(owner) or declared(owner, where).kind is Kind.JSON:
            return JSON  # ``"".join(...)``, ``subject.strip()``: a str, or it raises
    dotted = resolve_expr(node.func, where)
    if dotted in _STR_CALLS:
        return JSON
    if dotted is None and isinstance(node.func, ast.Attribute):
        return _method_call(node.func, where)
    if dotted is None:
        return Declared(
            Kind.UNKNOWN, why=f"no declared return type for `{ast.unparse(node.func)}(...)`"
        )
    if dotted in _CASTS and node.args:
        return annotation(node.args[0], where.deeper())  # ``t.cast(User, current_user)``
    if dotted in _LAZY:
        return Declared(Kind.LAZY_TEXT)
    if dotted in _NOT_DATA:
        return Declared(Kind.NOT_DATA, why=_NOT_DATA[dotted])
    builtin = dotted.removeprefix("builtins.") if dotted.startswith("builtins.") else ""
    if builtin in _LIKE_ARG_CALLS and len(node.args) == 1 and not node.keywords:
        inner = declared(node.args[0], where)
        if builtin in ("round", "abs", "min", "max"):
            return inner  # of a JSON number, a JSON number; of a Decimal, a Decimal
        if inner.kind is Kind.JSON:
            return JSON  # a list of the same JSON items
        return Declared(
            Kind.UNKNOWN, why=f"`{ast.unparse(node)}` holds the items of a value that is not JSON"
        )
    if builtin in _JSON_CALLS:
        return JSON
    found = where.project.lookup(dotted)
    if found is not None and found[1] in found[0].functions:
        helper = found[0].functions[found[1]]
        if helper.returns is not None:
            return annotation(helper.returns, where.deeper(module=found[0], function=None))
        found_returns = returned(helper, where.deeper(module=found[0], function=helper))
        if found_returns is not None:
            return found_returns
    if found is not None and found[1] in found[0].classes:
        made = _class(f"{found[0].name}.{found[1]}", where)
        return Declared(Kind.MODEL, made.type, built=True) if made.kind is Kind.MODEL else made
    return Declared(
        Kind.UNKNOWN, why=f"no declared return type for `{ast.unparse(node.func)}(...)`"
    )


def _method_call(func: ast.Attribute, where: Where) -> Declared:
    """``obj.method(...)`` where ``obj`` is an instance of a project class: what the method returns.

    Its return annotation, else what every ``return`` of its body gives, read in the
    method's own scope (``project = Project(...)`` then ``return project``): the
    same declarations, one function further.
    """
    missing = Declared(Kind.UNKNOWN, why=f"no declared return type for `{ast.unparse(func)}(...)`")
    owner = declared(func.value, where)
    found = _method(owner.type, func.attr, where) if owner.type else None
    if found is None:
        return missing
    info, method = found
    if method.returns is not None:
        return annotation(method.returns, where.deeper(module=info, function=None))
    return returned(method, where.deeper(module=info, function=method)) or missing


def returned(fn: _Def, inside: Where) -> Declared | None:
    """What every ``return`` of an unannotated project function gives, read in its own scope
    (``comment = Comment(...)``, ``return comment``), when they all agree; else None.

    A generator, or a body that can end without a ``return`` (an implicit ``None``
    beside a model), gives None: only returns that all say the same count.
    """
    nodes = own_nodes(fn)
    if any(isinstance(n, ast.Yield | ast.YieldFrom) for n in nodes):
        return None
    values = [n for n in nodes if isinstance(n, ast.Return)]
    if not values or any(v.value is None for v in values) or not _ends_in_return(fn.body):
        return None
    results = [
        declared(v.value, replace(inside, function=fn, depth=inside.depth + 1, line=v.lineno))
        for v in values
        if v.value is not None
    ]
    first = results[0]
    if first.kind is Kind.UNKNOWN or any(
        r.kind is not first.kind or r.type != first.type for r in results
    ):
        return None
    return Declared(first.kind, first.type, first.why, any(r.built for r in results))


def _ends_in_return(body: list[ast.stmt]) -> bool:
    """The block cannot fall off its end: its last statement returns or raises (through an
    ``if`` whose every branch does)."""
    last = body[-1] if body else None
    if isinstance(last, ast.Return | ast.Raise):
        return True
    if isinstance(last, ast.If):
        return bool(last.orelse) and _ends_in_return(last.body) and _ends_in_return(last.orelse)
    return False


def _method(cls: str, name: str, where: Where, depth: int = 0) -> tuple[ModuleInfo, _Def] | None:
    """The method ``name`` of the project class ``cls``, or of its project bases."""
    found = where.project.lookup(cls) if depth < 8 else None
    if found is None or found[1] not in found[0].classes:
        return None
    klass = found[0].classes[found[1]]
    for stmt in klass.body:
        if isinstance(stmt, _Def) and stmt.name == name:
            return found[0], stmt
    inside = Where(where.project, found[0])
    for base in klass.bases:
        dotted = resolve_expr(base, inside)
        method = _method(dotted, name, where, depth + 1) if dotted else None
        if method is not None:
            return method
    return None


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
    if any(derives(qualname, base, where) for base in _ENCODED_BASES) or _record(qualname, where):
        return Declared(Kind.ENCODED, qualname)
    return Declared(Kind.UNKNOWN, qualname, why=f"{qualname} is not a type the runtime stores")


def _record(qualname: str, where: Where) -> bool:
    """A project dataclass or attrs class (``@dataclass``, ``@attrs.define``...)."""
    found = where.project.lookup(qualname)
    if found is None or found[1] not in found[0].classes:
        return False
    inside = Where(where.project, found[0])
    for decorator in found[0].classes[found[1]].decorator_list:
        head = decorator.func if isinstance(decorator, ast.Call) else decorator
        if resolve_expr(head, inside) in _RECORD_DECORATORS:
            return True
    return False
