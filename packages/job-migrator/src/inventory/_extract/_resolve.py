"""Local resolution of names and call targets (imports, aliases, self, local types).

Conventions, on top of those in :mod:`inventory.summary`:

* inside the extractor, builtins that the file does not shadow resolve to
  ``builtins.NAME`` so detectors can recognise them; what the summary shows
  follows the contract instead (:func:`public_name`: ``open`` -> ``mod.open``);
* a call through a name whose value is unknown (a parameter, a local from a
  subscript) has target ``?.__call__`` and receiver ``unknown``;
* a method called on the result of a non-constructor call keeps the call
  marker: ``Order.objects.filter(x).update()`` -> ``mod.Order.objects.filter().update``;
  on a constructor (capitalised) it is an instance: ``httpx.Client().post`` ->
  ``httpx.Client.post``.
"""

from __future__ import annotations

import ast
import builtins
import re
from collections.abc import Callable
from dataclasses import dataclass

from inventory._extract._library import (
    FACTORIES,
    FILE_OPENERS,
    FILE_TYPE,
    library_attribute,
    typed_method,
)
from inventory._extract._scopes import KEYWORDS, Binding, BindingKind, ClassCtx, Scope
from inventory._extract._source import SourceText
from inventory.summary import ReceiverKind

BUILTINS = frozenset(dir(builtins))
UNKNOWN_CALL = "?.__call__"
_BUILTIN_PREFIX = "builtins."
# Methods that load one row as a model instance (Django managers and querysets, SQLAlchemy).
ORM_ROW = frozenset(
    {"get", "create", "first", "last", "latest", "earliest", "one", "one_or_none", "scalar_one"}
)
# Django's other names for a model's manager: ``Model._default_manager.create()`` is
# ``Model.objects.create()`` unless the model renames its manager, which is rare.
_MANAGERS = {"_default_manager": "objects", "_base_manager": "objects"}
# ``get_model("offer", "Condition")`` / ``get_user_model()``: a model class looked up by
# name at run time. The index resolves ``MODEL_LOADED + "offer.Condition"`` to the project
# model of that name (``inventory._classify._index``); one file cannot.
MODEL_LOADED = "__model__."
# pydantic's BaseModel class methods that return an instance of the class they are called on
# (docs.pydantic.dev API "BaseModel": model_construct, model_validate, model_validate_json,
# model_validate_strings; v1's parse_obj, parse_raw). Not v1's ``construct``: a name other
# classes give to other things.
ALTERNATE_CONSTRUCTORS = frozenset(
    {
        *("model_construct", "model_validate", "model_validate_json", "model_validate_strings"),
        *("parse_obj", "parse_raw"),
    }
)
USER_MODEL = "AUTH_USER_MODEL"


def constructed_on(func: ast.expr) -> ast.expr:
    """The class expression a call constructs on: ``cls`` of ``cls.model_validate(data)``
    (one of ``ALTERNATE_CONSTRUCTORS`` on a name), else the called expression itself."""
    if (
        isinstance(func, ast.Attribute)
        and func.attr in ALTERNATE_CONSTRUCTORS
        and isinstance(func.value, ast.Name)
    ):
        return func.value
    return func


# ``get_class("checkout.mixins", "Mixin")``: ``LOADED_CLASS + "checkout/mixins.Mixin"``.
LOADED_CLASS = "__class__."
# What a builtin container's lookups return is one of its values, not the container.
_LOOKUP_METHODS = frozenset({"get", "pop", "setdefault"})
_HOLDING = frozenset(
    f"builtins.{kind}.{method}" for kind in ("dict", "list", "set") for method in _LOOKUP_METHODS
)
# Objects an application stores on itself, looked up over the whole scan by the index
# (``inventory._classify._index``): ``current_app.extensions["mail"]`` is what some
# ``init_app`` registered with ``app.extensions["mail"] = self`` (``APP_OBJECT +
# "extensions:mail"``); ``current_app.mail`` what ``app.mail = Mail(app)`` stored
# (``"attr:mail"``); ``g.db`` what ``g.db = connect()`` stored (``"g:db"``).
APP_OBJECT = "__app__."
# ``EXPORTERS = {"pdf": PdfExporter(), "csv": CsvExporter()}`` at module level: a table of
# values (functions, classes, modules or instances). The module's ``assignments`` hold
# ``"EXPORTERS" + TABLE`` -> ``TABLE_VALUES + "pkg:PdfExporter()|pkg:CsvExporter()"`` (dots
# written ``:``, an instance marked ``()``); a value looked up in it (``EXPORTERS[k]``,
# ``EXPORTERS.get(k)``) is a receiver of unknown type whose ``returned`` names the table
# (``pkg.EXPORTERS[*]``), which the call graph expands to every value.
TABLE = "[*]"
TABLE_VALUES = "__table__."
_TABLE_LOOKUPS = frozenset({"get", "pop"})
_TYPED = (BindingKind.INSTANCE, BindingKind.ORM, BindingKind.FILE, BindingKind.PARAM)
_NAMED = (BindingKind.IMPORT, BindingKind.ALIAS, BindingKind.CLASS, BindingKind.FUNCTION)


@dataclass(slots=True)
class Resolved:
    target: str
    receiver: ReceiverKind = ReceiverKind.NONE
    receiver_source: str = ""
    receiver_type: str | None = None  # class of the receiver object, when one attribute deep
    binding: Binding | None = None  # binding of the root name
    returned: str = ""  # ``pkg.get_session()`` when the receiver is what that call returned
    # The receiver's class is declared, not made here: an annotation, a factory's return
    # type, ``cls()``. The object may be of any subclass, whose override then runs.
    declared: bool = False
    # The line of the constructor call that made the receiver here (``s = Mailer(...)``;
    # ``CallInfo.receiver_made_at``), 0 when it was not made by one (a loaded row, a parameter).
    made_at: int = 0
    # The receiver is a row the ORM loaded (``obj = M.objects.get(...)``, ``obj, _ =
    # get_or_create(...)``, a loop over a queryset): its ``save()`` is an UPDATE.
    loaded: bool = False
    # an unknown receiver rooted at the parameter it stands for (``CallInfo.receiver_param``)
    receiver_param: str = ""


def attribute_chain(node: ast.expr) -> tuple[ast.expr, list[str]]:
    """``a.b.c`` -> (Name a, ["b", "c"])."""
    attrs: list[str] = []
    while isinstance(node, ast.Attribute):
        attrs.append(node.attr)
        node = node.value
    attrs.reverse()
    return node, attrs


def dotted_source(node: ast.expr) -> str | None:
    """``self.client`` -> "self.client"; None for anything but a name/attribute chain."""
    root, attrs = attribute_chain(node)
    if not isinstance(root, ast.Name):
        return None
    return ".".join([root.id, *attrs]) if attrs else root.id


def public_name(dotted: str, module: str) -> str:
    """The summary's form: unimported names, builtins included, are qualified with the module."""
    if not dotted.startswith(_BUILTIN_PREFIX):
        return dotted
    name = dotted[len(_BUILTIN_PREFIX) :]
    return f"{module}.{name}" if module else name


def row_model(target: str) -> str | None:
    """``shop.Order.objects.filter().get`` -> ``shop.Order``: the model a row-loading call
    returns an instance of; None when ``target`` loads no row of a known model."""
    head, _, method = target.rpartition(".")
    if method not in ORM_ROW or ".objects" not in head or head.startswith("?"):
        return None
    return head.partition(".objects")[0] or None


def extension_object(node: ast.expr) -> str:
    """``current_app.extensions["mail"]`` (any ``X.extensions[<literal>]``, Flask's registry
    of extension objects): ``APP_OBJECT + "extensions:mail"``; "" for anything else."""
    if not isinstance(node, ast.Subscript) or not isinstance(node.value, ast.Attribute):
        return ""
    key = node.slice
    if node.value.attr != "extensions" or not isinstance(key, ast.Constant):
        return ""
    return app_object("extensions", key.value) if isinstance(key.value, str) else ""


def app_object(kind: str, key: str) -> str:
    """The index's name for an object stored on the app under ``key`` (one segment)."""
    return f"{APP_OBJECT}{kind}:{re.sub(r'[^0-9A-Za-z_]', '_', key)}"


def _generic_origin(node: ast.expr) -> ast.expr | None:
    """``Store[dict](...)``'s ``Store``: the subscripted name or attribute, when the
    subscript is no slice; None for anything else."""
    if not isinstance(node, ast.Subscript) or isinstance(node.slice, ast.Slice):
        return None
    return node.value if isinstance(node.value, ast.Name | ast.Attribute) else None


def _class_name(dotted: str) -> bool:
    """A class's name by PEP 8 (``CapWords``): ``Store``, not the constant ``HANDLERS``
    whose item ``HANDLERS[kind]`` is a value of the table."""
    last = dotted.rpartition(".")[2]
    return capitalised(dotted) and not last.isupper()


def capitalised(dotted: str) -> bool:
    last = dotted.rpartition(".")[2]
    return bool(last) and last[0].isupper()


# ``typing.cast(T, value)``: the resolver types an inline cast, values.py an assigned one.
CASTS = frozenset({"typing.cast", "typing_extensions.cast"})
# Library functions whose result is their first argument or a copy of it (copy's docs;
# typing's assert_type / reveal_type "return the value unchanged").
_SAME_VALUE = frozenset(
    {"copy.copy", "copy.deepcopy", "copy.replace", "typing.assert_type", "typing.reveal_type"}
    | {"typing_extensions.assert_type", "typing_extensions.reveal_type"}
)
_MANAGER_COPIES = (".objects.db_manager",)
_BUILTIN_TYPES = frozenset(
    f"builtins.{t}" for t in ("dict", "list", "set", "frozenset", "tuple", "str", "bytes", "int")
)
# ``cast(Any, x)``, ``cast(Optional[...], x)``: typing's own names say nothing of the class.
_CAST_UNTYPED = ("typing.", "typing_extensions.", "builtins.object")


class Resolver:
    """Resolves expressions in one scope of one file."""

    __slots__ = ("classes", "module", "returns", "scope", "text")

    def __init__(
        self,
        module: str,
        scope: Scope,
        classes: dict[str, ClassCtx],
        text: SourceText,
        returns: dict[str, str] | None = None,
    ) -> None:
        self.module = module
        self.scope = scope
        self.classes = classes
        self.text = text
        # function of this file -> the class it returns (annotation or ``return Ctor()``)
        self.returns = returns if returns is not None else {}

    def child(self, scope: Scope) -> Resolver:
        return Resolver(self.module, scope, self.classes, self.text, self.returns)

    def name(self, name: str) -> Resolved:
        binding = self.scope.lookup(name)
        if binding is None:
            if name in BUILTINS:
                return Resolved(f"builtins.{name}")
            return Resolved(f"{self.module}.{name}" if self.module else name)
        if binding.kind in _NAMED:
            return Resolved(binding.target, binding=binding)
        if binding.kind in _TYPED and binding.target:
            return Resolved(
                f"{binding.target}.__call__", ReceiverKind.INSTANCE, name, binding.target, binding
            )
        return Resolved(UNKNOWN_CALL, ReceiverKind.UNKNOWN, name, binding=binding)

    def dotted(self, node: ast.expr) -> str | None:
        """Resolved dotted name of a name/attribute chain (decorators, bases, annotations)."""
        if isinstance(node, ast.Name | ast.Attribute):
            resolved = self.expr(node)
            return None if resolved.receiver is ReceiverKind.UNKNOWN else resolved.target
        return None

    def expr(self, node: ast.expr) -> Resolved:
        found = self._expr(node)
        if found.receiver is ReceiverKind.UNKNOWN and isinstance(node, ast.Attribute):
            found.receiver_param = self.param_root(node.value)
        return found

    def param_root(self, node: ast.expr) -> str:
        """``group.group`` with ``group = kwargs["instance"]`` (or ``= instance``, the
        parameter): ``"instance.group"``; ``kwargs["instance"].tags`` gives ``"instance.tags"``.
        A signal receiver's ``instance`` is its sender's model whichever way it is read
        (the call graph types it, ``_graph._typed_parameter``). "" for anything else."""
        root, attrs = attribute_chain(node)
        base = self.keyword(root)
        if not base and isinstance(root, ast.Name):
            binding = self.scope.lookup(root.id)
            if binding is not None and binding.param != KEYWORDS:
                base = binding.param or (root.id if binding.kind is BindingKind.PARAM else "")
        return ".".join([base, *attrs]) if base else ""

    def keyword(self, value: ast.expr) -> str:
        """``kwargs["instance"]`` / ``kwargs.get("instance")`` on the ``**`` parameter: the
        key (how a receiver given Django's signal arguments by keyword reads them). "" else."""
        if isinstance(value, ast.Subscript):
            holder, key = value.value, value.slice
        elif (
            isinstance(value, ast.Call)
            and isinstance(value.func, ast.Attribute)
            and value.func.attr == "get"
            and value.args
        ):
            holder, key = value.func.value, value.args[0]
        else:
            return ""
        if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
            return ""
        if not key.value.isidentifier() or not isinstance(holder, ast.Name):
            return ""
        found = self.scope.lookup(holder.id)
        return key.value if found is not None and found.param == KEYWORDS else ""

    def _expr(self, node: ast.expr) -> Resolved:
        if isinstance(node, ast.Name):
            return self.name(node.id)
        generic = _generic_origin(node)
        if generic is not None:
            # ``Debouncer[None](hass, ...)``: a generic alias called makes an instance of its
            # origin class (PEP 560), so it names the class, as ``Debouncer(...)`` does.
            found = self._expr(generic)
            if found.receiver is not ReceiverKind.UNKNOWN and _class_name(found.target):
                return found
        if not isinstance(node, ast.Attribute):
            return Resolved(UNKNOWN_CALL, ReceiverKind.UNKNOWN, self.text.segment(node))
        root, attrs = attribute_chain(node)
        if isinstance(root, ast.Name):
            return self._on_name(root.id, attrs, node)
        if isinstance(root, ast.Call):
            return self._on_call(root, attrs, node)
        if isinstance(root, ast.Await) and isinstance(root.value, ast.Call):
            # ``(await session.execute(q)).scalars()``: what the awaited call gives, as for
            # ``result = await session.execute(q); result.scalars()``.
            return self._on_call(root.value, attrs, node)
        registered = extension_object(root)
        if registered:
            rtype = registered if len(attrs) == 1 else None
            source = self.text.segment(node.value)
            return Resolved(".".join([registered, *attrs]), ReceiverKind.INSTANCE, source, rtype)
        held = _HELD[0](root, self) if _HELD and isinstance(root, ast.Subscript) else ""
        if held:
            # ``jobs[key].cancel()``, ``holder.items[0].poke()``: a value of a container
            # annotated with the class of its values, as for ``job = jobs[key]; job.cancel()``.
            return self._held(held, attrs, self.text.segment(node.value))
        return self._unknown(node, attrs)

    def _held(self, held: str, attrs: list[str], source: str) -> Resolved:
        """A call on a value a container holds: on its class when known here; else (an
        attribute of a class of another module, ``pkg.Manifest.repos[]``) of unknown type,
        named by its method, the index's name for the value carried aside."""
        if held.endswith("]"):
            unknown = Resolved(f"?.{attrs[-1]}", ReceiverKind.UNKNOWN, source)
            unknown.returned = ".".join([held, *attrs[:-1]])
            return unknown
        rtype = held if len(attrs) == 1 else None
        return Resolved(".".join([held, *attrs]), ReceiverKind.INSTANCE, source, rtype)

    def _unknown(self, node: ast.Attribute, attrs: list[str]) -> Resolved:
        unknown = Resolved(f"?.{attrs[-1]}", ReceiverKind.UNKNOWN, self.text.segment(node.value))
        if len(attrs) == 1:
            unknown.returned = self.table_lookup(node.value)  # ``EXPORTERS[k].export()``
        return unknown

    def table_lookup(self, node: ast.expr) -> str:
        """``EXPORTERS[k]`` / ``EXPORTERS.get(k)`` / ``.pop(k)`` on a module-level table of
        this file or on an imported name (which the index checks is one): the table's name
        plus ``TABLE``; ``EXPORTERS[k]()`` gives that plus ``()``. "" for anything else."""
        if isinstance(node, ast.Call) and not isinstance(node.func, ast.Attribute):
            found = self.table_lookup(node.func)
            return f"{found}()" if found and not found.endswith(")") else ""
        method = False
        if isinstance(node, ast.Subscript) and not isinstance(node.slice, ast.Slice):
            holder = node.value
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in _TABLE_LOOKUPS
            and node.args
        ):
            holder, method = node.func.value, True
        else:
            return ""
        if not isinstance(holder, ast.Name):
            return ""
        binding = self.scope.lookup(holder.id)
        if binding is None:
            return ""
        if binding.kind is BindingKind.IMPORT:
            # A module is never subscripted, but ``requests.get(url)`` is a module's function:
            # ``.get(k)`` only on an imported constant's name (``EXPORTERS``, PEP 8's style).
            # ``Store[dict]`` subscripts a class (a generic alias), not a table.
            constant = holder.id.isupper()
            if not method and _class_name(holder.id):
                return ""
            return f"{binding.target}{TABLE}" if constant or not method else ""
        module = self.scope
        while module.parent is not None:
            module = module.parent
        local = module.names.get(holder.id) is binding and f"{holder.id}{TABLE}" in module.names
        return f"{self.module}.{holder.id}{TABLE}" if local else ""

    def _on_name(self, name: str, attrs: list[str], node: ast.Attribute) -> Resolved:
        binding = self.scope.lookup(name)
        kind = binding.kind if binding else None
        if binding is not None and (kind is BindingKind.SELF or kind is BindingKind.CLS):
            return self._on_self(binding, attrs, node)
        source = self.text.segment(node.value)
        if binding is not None and kind in _TYPED and binding.target:
            rtype = binding.target if len(attrs) == 1 else None
            # ``db.session.add`` with ``db = SQLAlchemy()``: the session's ``add``.
            target = library_attribute(".".join([binding.target, *attrs]))
            found = Resolved(target, ReceiverKind.INSTANCE, source, rtype, binding)
            found.declared = len(attrs) == 1 and declared_type(binding)
            found.made_at = made_at(binding) if len(attrs) == 1 else 0
            found.loaded = len(attrs) == 1 and kind is BindingKind.ORM
            return found
        if binding is not None and kind not in _NAMED:
            # ``s = get_session(); s.commit()``: the index may know what get_session returns.
            returned = ".".join([binding.target, *attrs[:-1]]) if binding.target else ""
            unknown = Resolved(f"?.{attrs[-1]}", ReceiverKind.UNKNOWN, source, binding=binding)
            unknown.returned = returned if kind is BindingKind.OTHER else ""
            return unknown
        base = self.name(name).target
        attrs = [_MANAGERS.get(a, a) for a in attrs]
        receiver = _static_receiver(base, attrs)
        return Resolved(".".join([base, *attrs]), receiver, source, binding=binding)

    def _on_self(self, binding: Binding, attrs: list[str], node: ast.Attribute) -> Resolved:
        cls = self.classes.get(binding.target)
        source = self.text.segment(node.value)
        if len(attrs) == 1:
            receiver = ReceiverKind.SELF if binding.kind is BindingKind.SELF else ReceiverKind.CLASS
            return Resolved(
                f"{binding.target}.{attrs[0]}", receiver, source, binding.target, binding
            )
        ctor = cls.attributes.get(attrs[0]) if cls else None
        if ctor is None:
            return Resolved(f"?.{attrs[-1]}", ReceiverKind.UNKNOWN, source, binding=binding)
        rtype = ctor if len(attrs) == 2 else None
        return Resolved(".".join([ctor, *attrs[1:]]), ReceiverKind.INSTANCE, source, rtype, binding)

    def _on_call(self, root: ast.Call, attrs: list[str], node: ast.Attribute) -> Resolved:
        source = self.text.segment(node.value)
        if isinstance(root.func, ast.Name) and root.func.id == "super":
            return self._on_super(attrs, source)
        table = self.table_lookup(root)
        if table:
            # ``EXPORTERS.get(k).export()``, ``EXPORTERS[k]().export()``: the table's values.
            unknown = Resolved(f"?.{attrs[-1]}", ReceiverKind.UNKNOWN, source)
            unknown.returned = table if len(attrs) == 1 else ""
            return unknown
        made_by_cls = self.made_by_cls(root)
        if made_by_cls:
            # ``cls(...).m()`` in a classmethod: an instance of the class it is called on.
            rtype = made_by_cls if len(attrs) == 1 else None
            target = ".".join([made_by_cls, *attrs])
            found = Resolved(target, ReceiverKind.INSTANCE, source, rtype)
            found.declared = len(attrs) == 1
            return found
        inner = self.expr(root.func)
        if inner.target in CASTS:
            # ``typing.cast(Job, x).run()``: x as the declared class (or a subclass); a cast
            # to what the scan cannot name is a value of unknown type, never typing's own.
            declared = self._cast_class(root)
            if not declared:
                return Resolved(f"?.{attrs[-1]}", ReceiverKind.UNKNOWN, source)
            rtype = declared if len(attrs) == 1 else None
            found = Resolved(".".join([declared, *attrs]), ReceiverKind.INSTANCE, source, rtype)
            found.declared = len(attrs) == 1
            return found
        if inner.target.endswith(_MANAGER_COPIES) and isinstance(root.func, ast.Attribute):
            # Django: a manager's ``db_manager(using)`` "returns a copy of the manager bound to
            # the database": ``ContentType.objects.db_manager(db).get_for_model(m)`` is the
            # manager's ``get_for_model``, read as ``ContentType.objects.get_for_model``.
            read = ast.copy_location(ast.Attribute(root.func.value, attrs[0], ast.Load()), root)
            if len(attrs) == 1:
                return self.expr(read)
            return Resolved(f"?.{attrs[-1]}", ReceiverKind.UNKNOWN, source)
        if inner.target in _SAME_VALUE:
            # ``copy.copy(job).run()``: a copy of the argument, of its class; the library's
            # pure function says nothing of what the copy's methods do.
            return self._same_value(root, attrs, source)
        lookup = isinstance(root.func, ast.Attribute) and root.func.attr in _LOOKUP_METHODS
        held = _HELD[0](root, self) if lookup and _HELD else ""
        if held and (inner.receiver is ReceiverKind.UNKNOWN or not held.endswith("]")):
            # ``repos.pop().install()`` on a local list of them: the class of what it holds
            # (or the index's name for it). On an attribute of another module's class
            # (``manifest.by_name.get(k)``) the call's target below names it for the index.
            return self._held(held, attrs, source)
        if inner.receiver is ReceiverKind.UNKNOWN:
            unknown = Resolved(f"?.{attrs[-1]}", ReceiverKind.UNKNOWN, source)
            method = inner.target.removeprefix("?.")
            if len(attrs) == 1 and typed_method(method):
                # ``session.execute(q).scalars()``: typed once the index knows ``session``
                # (a factory's result), or the classifier the parameter or name it is
                # called on, as for ``r = session.execute(q); r.scalars()``.
                unknown.returned = f"{inner.returned or '?'}.{method}()"
            return unknown
        if inner.receiver is ReceiverKind.INSTANCE and inner.target in _HOLDING:
            # ``jobs.pop(key).cancel()``: what a builtin container holds, when annotated;
            # else of unknown type (``dict.*`` explains the dict's methods, not its values').
            held = _HELD[0](root, self) if _HELD else ""
            if held:
                return self._held(held, attrs, source)
            return Resolved(f"?.{attrs[-1]}", ReceiverKind.UNKNOWN, source)
        returned = self.returns.get(inner.target)
        made = (
            FACTORIES.get(inner.target)
            or (FILE_TYPE if inner.target in FILE_OPENERS else None)  # ``open(p).read()``
            or returned
            or (inner.target if capitalised(inner.target) else None)
            or row_model(inner.target)
        )
        if made is not None:
            rtype = made if len(attrs) == 1 else None
            found = Resolved(".".join([made, *attrs]), ReceiverKind.INSTANCE, source, rtype)
            # What a factory returns is of its declared class or a subclass; ``C().m()`` is C.
            found.declared = len(attrs) == 1 and made == returned
            constructed = len(attrs) == 1 and made == inner.target and not found.declared
            found.made_at = root.lineno if constructed else 0  # ``C(...).save()``
            return found
        return Resolved(".".join([f"{inner.target}()", *attrs]), inner.receiver, source)

    def _same_value(self, call: ast.Call, attrs: list[str], source: str) -> Resolved:
        """``f(x).m`` for a function returning ``x`` or a copy of it: ``x.m``, resolved as
        written; a value of unknown type when ``x`` is no plain expression."""
        unknown = Resolved(f"?.{attrs[-1]}", ReceiverKind.UNKNOWN, source)
        if not call.args or isinstance(call.args[0], ast.Starred) or len(attrs) != 1:
            return unknown
        read = ast.copy_location(ast.Attribute(call.args[0], attrs[0], ast.Load()), call)
        found = self.expr(read)
        return found if found.receiver is not ReceiverKind.UNKNOWN else unknown

    def _cast_class(self, call: ast.Call) -> str:
        """The class ``cast(T, value)`` names: ``Job``, ``"Job"``, ``Box[int]`` -> Box; ""
        for anything else (``Any``, a union, a call with other arguments)."""
        if len(call.args) != 2 or call.keywords or isinstance(call.args[0], ast.Starred):
            return ""
        node: ast.expr | None = call.args[0]
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            try:
                node = ast.parse(node.value.strip(), mode="eval").body
            except SyntaxError:
                return ""
        if isinstance(node, ast.Subscript):
            node = node.value
        named = self.dotted(node) if node is not None else None
        if named in _BUILTIN_TYPES:
            return named  # ``cast(dict, payload).get(k)``: the builtin's own methods
        if not named or not capitalised(named) or named.startswith(_CAST_UNTYPED):
            return ""
        return named

    def made_by_cls(self, call: ast.Call) -> str:
        """``cls(...)`` in a classmethod (``type(self)(...)`` in a method), or one of
        pydantic's documented alternate constructors on it (``cls.model_validate(data)``:
        "Returns: The validated model instance"): the class, else ""."""
        func = constructed_on(call.func)
        if isinstance(func, ast.Name):
            binding = self.scope.lookup(func.id)
            return binding.target if binding is not None and binding.kind is BindingKind.CLS else ""
        if isinstance(func, ast.Call) and isinstance(func.func, ast.Name) and func.args:
            subject = func.args[0]
            if func.func.id == "type" and len(func.args) == 1 and isinstance(subject, ast.Name):
                binding = self.scope.lookup(subject.id)
                return binding.target if binding and binding.kind is BindingKind.SELF else ""
        return ""

    def _on_super(self, attrs: list[str], source: str) -> Resolved:
        self_binding = self.scope.lookup("self")
        cls = self.classes.get(self_binding.target) if self_binding else None
        if cls is None or not cls.bases:
            return Resolved(f"?.{attrs[-1]}", ReceiverKind.UNKNOWN, source)
        return Resolved(".".join([cls.bases[0], *attrs]), ReceiverKind.SELF, source)


def declared_type(binding: Binding) -> bool:
    """A typed name whose class is declared (an annotated parameter, a factory's result, an
    element of an annotated container, ``cls()``), not a constructor call of that very class
    (``x = Mailer(...)``) or a row the ORM loads (an instance of the model queried)."""
    if binding.kind is BindingKind.PARAM:
        return True
    if binding.kind is not BindingKind.INSTANCE:
        return False
    node = binding.node
    if not isinstance(node, ast.Call):
        return True
    func = node.func
    called = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
    return called != binding.target.rpartition(".")[2]


def made_at(binding: Binding) -> int:
    """The line of the constructor call of its very class that bound this name here
    (``x = Mailer(...)``); 0 for anything else (a loaded row, a factory's result, a parameter)."""
    if binding.kind is not BindingKind.INSTANCE or not isinstance(binding.node, ast.Call):
        return 0
    return 0 if declared_type(binding) else binding.node.lineno


def _static_receiver(base: str, attrs: list[str]) -> ReceiverKind:
    """``requests.post`` is a module function, ``models.Order.objects.create`` a class's;
    ``workers.EXECUTOR.submit`` is a module global's (ALL_CAPS is a constant, not a class)."""
    path = [base.rpartition(".")[2], *attrs[:-1]]
    classy = any(part[:1].isupper() and not part.isupper() for part in path)
    return ReceiverKind.CLASS if classy else ReceiverKind.MODULE


# What a container annotated with its values' class holds (``_values.held_value``,
# which imports this module: it registers itself here rather than being imported back).
_HELD: list[Callable[[ast.expr, Resolver], str]] = []


def register_held(lookup: Callable[[ast.expr, Resolver], str]) -> None:
    _HELD[:] = [lookup]
