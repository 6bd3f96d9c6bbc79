"""Scopes and what their names are bound to, as far as one file can tell."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from enum import StrEnum


class BindingKind(StrEnum):
    IMPORT = "import"  # target: dotted module or object
    ALIAS = "alias"  # name = other.name: target is the resolved dotted name
    CLASS = "class"  # defined in this file: target is its qualname
    FUNCTION = "function"  # defined in this file: target is its qualname
    INSTANCE = "instance"  # name = Ctor(...): target is the resolved class
    PARAM = "param"  # a parameter: target is its annotation, "" when unknown
    SELF = "self"  # first parameter of a method: target is the class qualname
    CLS = "cls"  # first parameter of a classmethod
    ORM = "orm"  # a model instance loaded from the database: target is the model when known
    FILE = "file"  # an open file
    CALLABLE = "callable"  # a lambda
    OTHER = "other"  # anything else: shadows outer bindings


@dataclass(slots=True)
class Binding:
    kind: BindingKind
    target: str = ""
    # the constructor call of an INSTANCE, the def of a FUNCTION (its decorators are read)
    node: ast.Call | ast.FunctionDef | ast.AsyncFunctionDef | None = None
    scoped: bool = False  # bound by ``with X() as name``: X's exit waits for its work
    # ``q = f(q)``: the statement handed to the call that made this value, as ``i=type``
    # (its position among the call's arguments: ``f`` may return it, see ``argument_type``)
    passed: str = ""
    # the parameter this value is (``x = instance``: "instance"), or the key it was read under
    # from the ``**`` parameter (``x = kwargs["instance"]``: "instance"); KEYWORDS marks the
    # ``**`` parameter itself. Signal receivers get Django's arguments either way.
    param: str = ""
    # ``log = partial(report, hass)`` / ``write = atomic if safe else plain`` in a function:
    # what calling the name calls, each as a call template (``values._values.callable_choices``)
    choices: tuple[ast.Call, ...] = ()
    none: bool = False  # ``name = None``: a call through it fails before it does anything


KEYWORDS = "**"
# In a module's scope, ``name{|}`` marks a name more than one statement binds where one of
# them is in a block (``try: from fastmail import send`` / ``except ImportError: from .mail
# import send``, a ``def`` in each branch of an ``if``): which binding holds is decided when
# the module is imported, so a spawn of it is read as dynamic (``detectors._targets``).
BRANCHED = "{|}"
# Marks a module name that functions rebind under ``global``: the writers' node ids, joined
# by commas (``walker._prepass._mark_global_writers``).
GLOBAL_WRITERS = "{global}"
# ``kw = {"name": n}`` in a function: ``kw{**}`` holds its literal keys (comma-separated,
# ``Binding.target``), read where ``Model(**kw)`` passes it (``CallInfo.spread_keys``).
SPREAD = "{**}"


def literal_keys(value: ast.expr) -> list[str] | None:
    """The keys of a dict literal whose keys are all string literals (no ``**`` inside)."""
    if not isinstance(value, ast.Dict):
        return None
    keys = [k.value for k in value.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)]
    return keys if len(keys) == len(value.keys) else None


class ScopeKind(StrEnum):
    MODULE = "module"
    CLASS = "class"
    FUNCTION = "function"


@dataclass(slots=True)
class Scope:
    kind: ScopeKind
    prefix: str  # qualname prefix for names defined here: "mod", "mod.C", "mod.f.<locals>"
    parent: Scope | None = None
    names: dict[str, Binding] = field(default_factory=dict)

    def lookup(self, name: str) -> Binding | None:
        """Python's rule: class scopes are invisible from the functions nested in them."""
        found = self.names.get(name)
        if found is not None:
            return found
        scope = self.parent
        while scope is not None:
            if scope.kind is not ScopeKind.CLASS:
                found = scope.names.get(name)
                if found is not None:
                    return found
            scope = scope.parent
        return None

    def child(self, kind: ScopeKind, name: str) -> Scope:
        suffix = f"{name}.<locals>" if kind is ScopeKind.FUNCTION else name
        return Scope(kind, f"{self.prefix}.{suffix}" if self.prefix else suffix, self)


@dataclass(slots=True)
class ClassCtx:
    """What the methods of one class may know about ``self``."""

    qualname: str
    bases: list[str]
    attributes: dict[str, str]  # self.attr -> resolved constructor
    methods: frozenset[str] = frozenset()
    thread_like: bool = False  # derives from threading.Thread (through local classes too)
    external_bases: bool = False  # some base is defined elsewhere
    view: str | None = None  # Framework value when a class-based view
    admin: bool = False  # a Django ModelAdmin: save_model and its actions run in a request
    admin_actions: frozenset[str] = frozenset()  # names in ``actions = [...]`` of the body
    form: str | None = None  # a form, field or serializer class: its ``FormFamily`` value
    # A DRF serializer's ``SerializerMethodField`` methods (``get_<field>`` or ``method_name``)
    method_fields: frozenset[str] = frozenset()
    template_node: bool = False  # a Django template Node: its render() runs while a page renders
