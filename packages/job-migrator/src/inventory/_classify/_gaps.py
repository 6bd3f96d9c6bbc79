"""The soundness rule's half in a function body: which calls nothing explains.

A call is explained when the scan read its source (a project function, or a
library function read from the environment: the call graph follows those), when
an ``[[effect]]`` entry says what it does, or when a ``[[pure]]`` entry says it
does nothing a retry could repeat. Every other call is a *gap*: finding no effect
behind it is no evidence that it has none, so a job reaching one is never
``idempotent`` (``_verdict``).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from inventory._catalogue import Catalogue, api_name
from inventory._classify._dispatch import MAX_OVERRIDES
from inventory._classify._index import SymbolIndex, SymbolKind
from inventory._classify._target import CallTarget
from inventory._classify._trace import Found, GapReason, location
from inventory.models import Effect, EffectKind
from inventory.summary import CallInfo, FileSummary, FunctionInfo

_UNKNOWN = "?."
_RESULT = "()."  # a method called on the result of a call
# Kinds whose call runs nothing we could not see: a project module or class being
# built (its __init__, when the project defines one, is a call edge of its own).
_SEEN = frozenset({SymbolKind.FUNCTION, SymbolKind.CLASS, SymbolKind.MODULE})
# SQLAlchemy's documented column operators (``ColumnOperators``, ``ColumnElement``, and the
# relationship comparator's ``any`` / ``has`` / ``of_type``): on a mapped class's attribute
# (``Registration.email.in_(...)``, ``Order.created.desc()``) each returns a new SQL
# expression object; nothing is sent to a database until a session executes a statement.
_COLUMN_OPERATORS = frozenset(
    {"in_", "not_in", "notin_", "is_", "is_not", "isnot", "like", "ilike", "not_like"}
    | {"not_ilike", "notlike", "notilike", "startswith", "endswith", "contains"}
    | {"istartswith", "iendswith", "icontains", "match", "regexp_match", "regexp_replace"}
    | {"between", "desc", "asc", "nulls_first", "nulls_last", "nullsfirst", "nullslast"}
    | {"collate", "distinct", "any_", "all_", "op", "bool_op", "concat", "label", "cast"}
    | {"is_distinct_from", "is_not_distinct_from", "isnot_distinct_from", "any", "has"}
    | {"of_type", "and_", "operate", "reverse_operate", "self_group", "compare", "key"}
)
# Where an unread mapped attribute's method lands when the scan names its class.
_COLUMN_CLASSES = (
    "sqlalchemy.Column.",
    "sqlalchemy.sql.schema.Column.",
    "sqlalchemy.orm.properties.MappedColumn.",
    "sqlalchemy.orm.attributes.InstrumentedAttribute.",
    "sqlalchemy.orm.attributes.QueryableAttribute.",
    "sqlalchemy.orm.InstrumentedAttribute.",
    "sqlalchemy.orm.QueryableAttribute.",
    "sqlalchemy.orm.Mapped.",
    "sqlalchemy.orm.base.Mapped.",
)
# Bases that make a class mapped: Flask-SQLAlchemy's ``db.Model`` (any ``.Model`` outside
# the project but Django's), SQLAlchemy 2's ``DeclarativeBase``, SQLModel's table models.
_MAPPED_BASES = frozenset({"DeclarativeBase", "DeclarativeBaseNoMeta", "SQLModel"})
_DECLARATIVE = ("declarative_base", "as_declarative", "generate_base")
_COLUMN_MAKERS = frozenset({"Column", "mapped_column", "column_property"})
# Flask's ``g``: a namespace object local to the request; reading it is no I/O.
_FLASK_G = frozenset({"flask.g.get", "flask.g.pop", "flask.g.setdefault", "flask.g.__contains__"})


class Gaps:
    """Turns a call the catalogue has no effect for into a gap, unless it is known pure."""

    def __init__(
        self,
        catalogue: Catalogue,
        library_gap: Callable[[str], str | None] | None = None,
        index: SymbolIndex | None = None,
    ) -> None:
        self.catalogue = catalogue
        # top-level module -> why its source was not read ("not installed in ..."), or None.
        self.library_gap = library_gap or (lambda _top: None)
        self.index = index
        self._mapped: dict[str, bool] = {}

    def of(self, target: CallTarget, fn: FunctionInfo, path: str) -> Found | None:
        """The gap ``target`` leaves in ``fn``, or None when the call is explained."""
        if target.kind in _SEEN or target.function is not None or _dunder(target.name):
            return None
        call = target.call
        unknown = _unknown_receiver(target)
        if self._pure(target, unknown) or self._builds_query(target, fn):
            return None
        api = _short(_receiver_api(call, target.name) if unknown else target.name)
        boundary = None if unknown else self.catalogue.undecided(call, target.name)
        effect = Effect(
            kind=EffectKind.DYNAMIC_CALL,
            location=location(path, call.span),
            api=api,
            chain=[fn.qualname],
            detail=boundary or self._why(target, unknown),
        )
        if boundary is not None:
            return Found(effect, exact=False, gap=True, why_unresolved=GapReason.AT_RUN_TIME)
        if not unknown:
            return Found(effect, exact=False, gap=True, entry=target.name)
        method = target.name.rsplit(".", 1)[-1]
        receiver = f"^{re.escape(call.receiver_source)}$" if call.receiver_source else None
        return Found(
            effect, exact=False, gap=True, entry=f"{_UNKNOWN}{method}", entry_receiver=receiver
        )

    def overrides_not_followed(self, target: CallTarget, fn: FunctionInfo, path: str) -> Found:
        """``self.m()`` with more overrides below the class than ``_dispatch`` follows."""
        method = target.name.rpartition(".")[2]
        detail = (
            f"{target.more_overrides} more overrides of {method} than the {MAX_OVERRIDES} "
            "followed: which one runs is only known at run time"
        )
        effect = Effect(
            kind=EffectKind.DYNAMIC_CALL,
            location=location(path, target.call.span),
            api=_short(target.name),
            chain=[fn.qualname],
            detail=detail,
        )
        return Found(effect, exact=False, gap=True, why_unresolved=GapReason.OVERRIDES)

    def pure(self, target: CallTarget) -> bool:
        """A ``[[pure]]`` entry explains the call, as :meth:`of` reads the entries."""
        return self._pure(target, _unknown_receiver(target))

    def _pure(self, target: CallTarget, unknown: bool) -> bool:
        """An exact entry for the name; method entries when the receiver's type is unknown,
        including a method on what a library call returned (``requests.get(u).json()``)."""
        is_pure = self.catalogue.is_pure
        if is_pure(target.call, target.name, unknown_receiver=unknown):
            return True
        returned = not unknown and _RESULT in target.name
        return returned and is_pure(target.call, target.name, unknown_receiver=True)

    def _builds_query(self, target: CallTarget, fn: FunctionInfo) -> bool:
        """``Registration.email.in_(emails)`` / ``cls.code.desc()`` on a mapped class, a
        column's operator where the scan names the column class, or ``flask.g.get(k)``:
        building an expression or reading the request's namespace, no I/O."""
        call = target.call
        if call.target in _FLASK_G or target.name in _FLASK_G:
            return True
        owner, _, method = target.name.rpartition(".")
        if method not in _COLUMN_OPERATORS:
            return False
        if target.name.startswith(_COLUMN_CLASSES):
            return True
        head, _, attr = call.receiver_source.partition(".")
        if head == "cls" and attr.isidentifier() and fn.class_name and fn.is_method:
            return self._is_mapped(fn.qualname.rpartition(".")[0])  # in a classmethod
        cls = owner.rpartition(".")[0]
        return target.kind == SymbolKind.MEMBER and self._is_mapped(cls)

    def _is_mapped(self, cls: str) -> bool:
        index = self.index
        if index is None or cls not in index.classes or index.is_library(cls):
            return False
        found = self._mapped.get(cls)
        if found is None:
            mro = index.mro(cls)
            found = any(self._mapping_base(b, cls) for b in mro[1:])
            found = found or any(self._declares_columns(c) for c in mro)
            self._mapped[cls] = found
        return found

    def _mapping_base(self, base: str, cls: str) -> bool:
        """A base outside the project that maps its subclasses, or a name a module makes
        with ``declarative_base()`` (``Base = declarative_base()``)."""
        assert self.index is not None
        index, last = self.index, base.rpartition(".")[2]
        if base in index.classes and not index.is_library(base):
            return False  # a project class: its own bases are in the MRO too
        if last in _MAPPED_BASES or (last == "Model" and not base.startswith("django.")):
            return True
        summary = self._module_of(base if "." in base else cls)
        calls = summary.module_calls if summary is not None else []
        return any(c.target.rpartition(".")[2] in _DECLARATIVE for c in calls)

    def _module_of(self, name: str) -> FileSummary | None:
        """The module ``pkg.models.Order`` (or ``pkg.models.Base``) is defined in."""
        assert self.index is not None
        module = name.rpartition(".")[0]
        while module and module not in self.index.modules:
            module = module.rpartition(".")[0]
        return self.index.modules.get(module)

    def _declares_columns(self, cls: str) -> bool:
        """``email = Column(String)`` / ``total: Mapped[int] = mapped_column()`` in the body."""
        assert self.index is not None
        info, summary = self.index.classes.get(cls), self._module_of(cls)
        if info is None or summary is None:
            return False
        start, end = info.span.line, info.span.end_line or info.span.line
        return any(
            start <= c.span.line <= end and c.target.rpartition(".")[2] in _COLUMN_MAKERS
            for c in summary.module_calls
        )

    def _why(self, target: CallTarget, unknown: bool) -> str:
        if unknown:
            return "a method of a receiver of unknown type: what it runs is not known"
        if target.kind == SymbolKind.MEMBER:
            return "an attribute the project does not define (inherited from a library?): not read"
        top = target.name.split(".", 1)[0]
        reason = self.library_gap(top) or "its source was read, but the call is not defined there"
        return f"a library call not followed ({reason}) and not in the catalogue"


def _unknown_receiver(target: CallTarget) -> bool:
    """The receiver's type is unknown: only method-name ([[pure]] ``?.``) entries apply."""
    return target.name.startswith(_UNKNOWN) or target.kind in (
        SymbolKind.MISSING,
        SymbolKind.MEMBER,
    )


def _receiver_api(call: CallInfo, target: str) -> str:
    """``backend.accepts`` as written, not the synthetic ``module.backend.accepts``."""
    method = target.rsplit(".", 1)[-1]
    return f"{call.receiver_source}.{method}" if call.receiver_source else api_name(call, target)


def _dunder(name: str) -> bool:
    """``x()`` of an unknown value (``?.__call__``) is a dynamic-dispatch fact, which decides
    for itself (``cls(...)`` constructs); ``super().__init__()`` builds the object."""
    return name.rsplit(".", 1)[-1].startswith("__")


def _short(text: str, limit: int = 80) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."
