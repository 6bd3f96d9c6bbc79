"""The global symbol index: join all file summaries and resolve dotted names.

Summaries carry *locally* resolved names; here we follow what one file could
not: re-exports through ``pkg/__init__.py``, module-level aliases
(``send = mail.send_email``), star imports, and methods inherited through
class bases. Every walk is bounded and cycle-safe: import cycles are legal
Python and must not hang the scanner.
"""

from __future__ import annotations

import builtins
import contextlib
import functools
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, TypeVar

from inventory._extract._library import library_attribute
from inventory.models import Pattern
from inventory.summary import ATTR_CLASS, ClassInfo, FileSummary, FunctionInfo

if TYPE_CHECKING:
    from inventory._thirdparty import Library

_T = TypeVar("_T")
# The library views whose ``get_object()`` returns a row of the view's model: Django's
# ``SingleObjectMixin`` and the generic views built on it, DRF's ``GenericAPIView``, its
# generic views and its generic viewsets (``ViewSet`` alone has no ``get_object``).
_GET_OBJECT = re.compile(
    r"django\.views\.generic\.(?:detail\.|edit\.)?"
    r"(?:SingleObjectMixin|(?:Base)?(?:Detail|Update|Delete)View)"
    r"|rest_framework\.generics\.\w*APIView"
    r"|rest_framework\.viewsets\.(?:GenericViewSet|ReadOnlyModelViewSet|ModelViewSet)"
)
_MAX_DEPTH = 16
_MAX_NAMED = 16  # ``getattr(mod, f"send_to_{x}")``: at most this many fitting names followed
_BUILTINS = frozenset(dir(builtins))
# The extractor's name for a model looked up at run time (``get_model("offer", "Condition")``).
_MODEL_LOADED = "__model__."
# ... and for ``get_class("checkout.mixins", "Mixin")``: ``__class__.checkout/mixins.Mixin``.
_LOADED_CLASS = "__class__."
_USER_MODEL = "AUTH_USER_MODEL"
_USER_BASES = (".AbstractUser", ".AbstractBaseUser")
_MODEL_BASE = ".Model"
# Django's own apps: ``get_model("auth", "Group")`` is a class of the library.
_CONTRIB = frozenset(
    {"auth", "contenttypes", "sites", "sessions", "admin", "flatpages", "redirects"}
)


class SymbolKind(StrEnum):
    FUNCTION = "function"  # a project function or method
    CLASS = "class"  # a project class
    MODULE = "module"  # a project module
    MEMBER = "member"  # an attribute of a project class/function not defined in the project
    EXTERNAL = "external"  # a name outside the project (library, stdlib, builtin)
    MISSING = "missing"  # looks like a project name but is defined nowhere we can see


# ``__union__.pkg:Category|pkg:Project.get_url_path``: a method called on a value that is
# one of several classes (the extractor's ``UNION``; dots in members written ``:``).
_UNION = "__union__."
_MAX_MEMBERS = 4


def union_members(name: str) -> list[str] | None:
    """``__union__.a:A|b:B.m`` -> ``["a.A.m", "b.B.m"]``: the name on each member class of
    the union (what a call on that receiver may run, each as for a single type); None for
    a name that is no union (or an oversized one)."""
    if not name.startswith(_UNION):
        return None
    members, dot, rest = name[len(_UNION) :].partition(".")
    found = [m.replace(":", ".") for m in members.split("|") if m]
    if not found or len(found) > _MAX_MEMBERS:
        return None
    return [f"{m}{dot}{rest}" for m in found]


# What an application stores on itself (the extractor's ``APP_OBJECT`` names):
# ``__app__.extensions:mail.send`` is ``send`` on what ``app.extensions["mail"] = ...``
# stored somewhere in the scan; ``current_app.mail`` / ``g.db`` are looked up the same way.
APP_OBJECT = "__app__."
# ... and one stored nowhere in the scan: a receiver of unknown type that says which object
# (``?.__app__.extensions:mail.send``): a call through it in a handler is a reported gap.
UNSTORED = f"?.{APP_OBJECT}"
_ON_APP = {
    "flask.current_app.": "attr",
    "flask.globals.current_app.": "attr",
    "flask.g.": "g",
    "flask.globals.g.": "g",
}


def app_key(name: str) -> tuple[str, str] | None:
    """``(APP_OBJECT key, rest)`` of a name reached through an object stored on the app."""
    if name.startswith(APP_OBJECT):
        key, _, rest = name[len(APP_OBJECT) :].partition(".")
        return APP_OBJECT + key, rest
    for prefix, kind in _ON_APP.items():
        if name.startswith(prefix):
            attr, _, rest = name[len(prefix) :].partition(".")
            return f"{APP_OBJECT}{kind}:{attr}", rest
    return None


# ``f()[]``: an element of what ``f()`` returns (the extractor's ``ELEMENT``).
_ELEMENT = "()[]"
# ``attr[each]`` / ``attr[]``: what iterating attribute ``attr`` gives / one value it holds
# (the extractor's ``EACH`` / ``HELD``).
_EACH = "[each]"
_HELD_KEYS = (_EACH, "[]")
_LOOKUPS = frozenset({"get()", "pop()", "setdefault()"})
# A module-level table of values (the extractor's ``TABLE`` / ``TABLE_VALUES``):
# ``assignments["EXPORTERS[*]"] = "__table__.pkg:PdfExporter()|pkg:send_csv"``.
TABLE = "[*]"
TABLE_VALUES = "__table__."
_SUPER = "super:"  # ``super:pkg.C.m()``: what ``super().m()`` returns in a method of C
# Django's default manager as the scan names it: ``Tag.objects`` (a helper returning a
# queryset of Tag rows returns it; ``Tag.objects.create`` is a query of Tag's rows).
MANAGER = ".objects"
_ROWS = "[]"  # ``Parent.children[]``: a row of the reverse manager ``children`` (the extractor's)
# Manager and queryset methods: ``parent.children.filter()`` reads the leaf model's rows.
_QUERYSET = frozenset(
    {"all", "filter", "exclude", "order_by", "select_related", "prefetch_related", "distinct"}
    | {"select_for_update", "using", "iterator", "only", "defer", "annotate", "reverse"}
    | {"get", "first", "last", "count", "exists", "update", "delete", "create", "values"}
    | {"values_list", "aggregate", "get_or_create", "update_or_create", "bulk_create"}
    | {"bulk_update", "in_bulk", "latest", "earliest", "none"}
)


# The values Django's model fields hold that the scan names (a FileField's FieldFile).
FIELD_VALUES = "django.db.models.fields.files."
# A FileField's / ImageField's value class (its ``attr_class``), by the field's names
_FILE_VALUES = {
    f"{base}{field}": f"{FIELD_VALUES}{value}"
    for base in (FIELD_VALUES, "django.db.models.")
    for field, value in (("FileField", "FieldFile"), ("ImageField", "ImageFieldFile"))
}
# Library classes whose instances an attribute holds as values (not descriptors): a method
# on ``obj.attr`` is that class's
_VALUE_LIBRARIES = (FIELD_VALUES, "asyncio.", "threading.", "concurrent.futures.")

# Django's related managers (``create_forward_many_to_many_manager`` and
# ``create_reverse_many_to_one_manager`` make their classes at run time): the relation
# edits, named for the catalogue.
RELATED_MANAGER = "django.db.models.fields.related_descriptors.RelatedManager"
_RELATION_EDITS = frozenset({"add", "remove", "set", "clear"})


# A parameter every project call hands the same function (``run_with(post_hook, x)``), as
# ``_arguments.caller_types`` types it: ``CALLABLE + "pkg.post_hook"`` (a callable, not an
# instance of a class), so that ``cb(x)`` in the callee is a call of post_hook.
CALLABLE = "def:"
ONE_OF = "|"  # ``CALLABLE + "a.f|b.g"``: a parameter holding one of these functions


def _value_of_a_call(name: str, value: str) -> bool:
    """``manager = make_manager()`` at module level (``_prepass``): ``manager.run`` is a method
    of what make_manager returns, but ``manager(...)`` calls that value, not make_manager."""
    return value.endswith("()") and not name.endswith(")")


def _element_of(returned: str) -> str:
    """The model whose rows iterating a returned queryset (``shop.Tag.objects``) gives."""
    if returned.endswith(MANAGER) and len(returned) > len(MANAGER):
        return returned.removesuffix(MANAGER)
    return ""


@dataclass(frozen=True)
class Resolved:
    kind: SymbolKind
    name: str


# functools.lru_cache / cache: "the wrapped function is instrumented with a cache_parameters()
# function ... cache_info() ... cache_clear() for clearing or invalidating the cache".
_MEMOISERS = ("functools.lru_cache", "functools.cache", "cachetools.func.")
MEMO_METHODS = frozenset({"cache_clear", "cache_info", "cache_parameters"})
_MEMO_WRAPPER = "functools._lru_cache_wrapper"


class SymbolIndex:
    """module -> FileSummary, qualname -> FunctionInfo / ClassInfo, and resolution."""

    def __init__(self, summaries: list[FileSummary], library: Library | None = None) -> None:
        self.modules = {s.module: s for s in summaries}
        self.library = library
        self.library_modules: set[str] = set()
        # function -> what its in-process sites start (library code only: project sites
        # become call sites, and their edges are added by the classifier).
        self.library_starts: dict[str, list[str]] = {}
        self._external_by_top: dict[str, list[str]] = {}  # memoised EXTERNAL names
        self.functions: dict[str, FunctionInfo] = {}
        self.classes: dict[str, ClassInfo] = {}
        self.home: dict[str, FileSummary] = {}  # function qualname -> its file
        for summary in summaries:
            self._add(summary)
        self._roots = {module.split(".")[0] for module in self.modules}
        self._memo: dict[str, Resolved] = {}
        # name -> the name an import or assignment hands it on to (``shop.log.logger.warning``
        # -> ``loguru.logger.warning``): the steps of a resolution, for ``aliases``
        self._via: dict[str, str] = {}
        # _guesses: whether a library base defines a guessed method, per (candidates, method)
        self.by_name_memo: dict[tuple[tuple[str, ...], str], bool] = {}
        self._busy: set[str] = set()  # names being resolved: met again = an import cycle
        self._stars: dict[str, list[str]] = {}  # module -> its transitive star imports
        self._by_method: dict[str, list[str]] | None = None
        self._mro_busy: set[str] = set()  # re-entrancy guard for pathological base cycles
        self._mro_done: dict[str, list[str]] = {}  # dropped for a class when its bases are read
        # Top package -> classes whose kept order holds a class of it: read later (a library),
        # such a class is no longer an opaque end of the order, so those orders are redone.
        self._mro_tops: dict[str, set[str]] = {}
        self._bases_read: set[str] = set()  # classes whose bases' modules were all read
        self._named: dict[str, list[str]] | None = None  # class name -> project classes
        self._models: frozenset[str] | None = None  # project classes that are ORM models
        self._user: str | None = None  # the project's user model, once asked
        # reverse manager name -> (model it is on, model whose rows it holds), from ForeignKeys
        self._reverse: dict[str, list[tuple[str, str]]] | None = None
        self._reverse_memo: dict[tuple[str, str], str | None] = {}
        self._stored: dict[str, list[str]] | None = None  # APP_OBJECT key -> classes

    def _add(self, summary: FileSummary) -> None:
        for fn in summary.functions:
            self.functions[fn.qualname] = fn
            self.home[fn.qualname] = summary
        for cls in summary.classes:
            self.classes[cls.qualname] = cls

    def resolve(self, name: str) -> Resolved:
        """What a locally resolved dotted name refers to, after re-exports and aliases.

        Memoised for every name met on the way, not just the one asked for: a
        star-import clique (litellm: dozens of modules star-importing each
        other) would otherwise be explored once per path, factorially. A name
        met again while it is being resolved is an import cycle: MISSING.
        """
        found = self._memo.get(name)
        if found is not None:
            return found
        if name in self._busy or len(self._busy) > _MAX_DEPTH:
            return Resolved(SymbolKind.MISSING, name)
        self._busy.add(name)
        try:
            found = self._resolve(name)
        finally:
            self._busy.discard(name)
        self._memo[name] = found
        if found.kind == SymbolKind.EXTERNAL and self.library is not None:
            self._external_by_top.setdefault(name.split(".", 1)[0], []).append(name)
        return found

    def aliases(self, name: str) -> list[str]:
        """The names ``name`` was handed on through while it resolved, in order: a
        library's public name (``loguru.logger.warning``) between the project's alias
        (``shop.log.logger.warning``) and the class that defines it
        (``loguru._logger.Logger.warning``). Empty before ``resolve(name)``."""
        chain: list[str] = []
        while (name := self._via.get(name, "")) and name not in chain:
            chain.append(name)
        return chain

    def resolve_in_library(self, name: str) -> Resolved:
        """An EXTERNAL name, after reading the installed modules that define it, following
        re-exports (``pkg.f`` -> ``pkg._impl.f``) a bounded number of steps."""
        found = Resolved(SymbolKind.EXTERNAL, name)
        for _ in range(_MAX_DEPTH):
            if found.kind != SymbolKind.EXTERNAL:
                break
            read = self._read_library(found.name) or self._read_stars(found.name)
            # A module read before (by another call) is followed all the same: the answer
            # must not depend on what was resolved first.
            again = self.resolve(found.name)
            if not read and again == found:
                break
            found = again
        return found

    def _read_library(self, name: str) -> bool:
        """Read the installed module behind ``name``; False when there is none (left)."""
        library = self.library
        module = library.find(name) if library is not None else None
        if library is None or module is None or module in self.modules:
            return False
        summary = library.module(module)
        if summary is not None:
            self._add_library(summary)
        return summary is not None

    def _read_stars(self, name: str) -> bool:
        """The installed modules a read library module star-imports, not read yet (pydantic's
        ``__init__`` has ``if TYPE_CHECKING: from .main import *`` and a lazy ``__getattr__``:
        ``pydantic.BaseModel`` is ``pydantic.main.BaseModel``); True when one was read."""
        split = self._module_prefix(name)
        if self.library is None or split is None or split[0] not in self.library_modules:
            return False
        read = False
        for star in self.modules[split[0]].star_imports:
            read = self._read_library(star) or read
        if read:
            self._stars.clear()
            self._memo.pop(name, None)
        return read

    def _add_library(self, summary: FileSummary) -> None:
        self.modules[summary.module] = summary
        self.library_modules.add(summary.module)
        self._add(summary)
        for site in summary.sites:
            if site.enclosing_function and site.target and site.pattern != Pattern.SIGNAL_RECEIVER:
                self.library_starts.setdefault(site.enclosing_function, []).append(site.target)
        # Names of this library resolved before it was read may now resolve further, and
        # class orders that ended at one of its classes may now go on through its bases.
        top = summary.module.split(".", 1)[0]
        for stale in self._external_by_top.pop(top, []):
            self._memo.pop(stale, None)
        for cls in self._mro_tops.pop(top, set()):
            self._mro_done.pop(cls, None)

    def _union(self, name: str, members: list[str]) -> Resolved:
        """A name on a union as one symbol: what every member resolves to when they agree
        (an inherited method), else a member of unknown type (the call graph follows each
        member: ``CallGraph.targets``)."""
        found = {self.resolve(m) for m in members}
        if len(found) == 1:
            return found.pop()
        return Resolved(SymbolKind.MEMBER, f"?.{name.rpartition('.')[2]}")

    def _loaded_model(self, name: str) -> Resolved:
        """``__model__.offer.Condition.objects.get``: the one project model named Condition
        (in an app called ``offer`` when several are), then the rest of the name on it;
        ``__model__.AUTH_USER_MODEL``: the project's user model, else Django's."""
        parts = name[len(_MODEL_LOADED) :].split(".")
        cls: str | None
        if parts[0] == _USER_MODEL:
            cls, rest = self._user_model(), parts[1:]
        elif len(parts) > 1:
            cls, rest = self._named_model(parts[0], parts[1]), parts[2:]
        else:
            cls, rest = None, parts
        if cls is None:
            return Resolved(SymbolKind.MISSING, ".".join(parts))
        return self.resolve(".".join([cls, *rest])) if rest else self.resolve(cls)

    def _loaded_class(self, name: str) -> Resolved:
        """``__class__.checkout/mixins.Mixin.rest``: ``Mixin`` as the one project module whose
        name ends with ``checkout.mixins`` defines or imports it, then the rest on it."""
        label, _, rest = name[len(_LOADED_CLASS) :].partition(".")
        label = label.replace("/", ".")
        head = rest.partition(".")[0]
        found = [
            m
            for m in self.modules
            if (m == label or m.endswith(f".{label}"))
            and not self.is_library(m)
            and self._defined_in(m, head, []) is not None
        ]
        if len(found) != 1:
            return Resolved(SymbolKind.MISSING, f"{label}.{rest}")
        return self.resolve(f"{found[0]}.{rest}")

    def _named_model(self, app: str, model: str) -> str | None:
        """Project classes of that name, narrowed step by step while several remain: in the
        app's package, in a ``models`` module, deriving from an ORM ``Model`` (a base of
        a library the scan did not read, ``MP_Node``, hides that)."""
        found = self._classes_named().get(model, [])
        models = self._model_classes()
        narrowing: list[Callable[[str], bool]] = [
            lambda q: f".{app}." in f".{q}",
            lambda q: ".models." in f".{q}",
            lambda q: q in models,
        ]
        for keep in narrowing:
            if len(found) > 1:
                found = [q for q in found if keep(q)] or found
        if len(found) == 1:
            return found[0]
        return f"django.contrib.{app}.models.{model}" if not found and app in _CONTRIB else None

    def _classes_named(self) -> dict[str, list[str]]:
        if self._named is None:
            named: dict[str, list[str]] = {}
            for qualname, info in self.classes.items():
                if not self.is_library(qualname):
                    named.setdefault(info.name, []).append(qualname)
            self._named = {k: sorted(v) for k, v in named.items()}
        return self._named

    def _user_model(self) -> str:
        if self._user is None:  # asked at every ``get_user_model()``: read the models once
            # A project class deriving from Django's user bases (named, so the library need
            # not be read: ``class Member(AbstractUser)``); of an abstract base of the
            # project's and the model deriving from it, the model (the leaf).
            users = {
                q
                for names in self._classes_named().values()
                for q in names
                if any(b.endswith(_USER_BASES) for b in self.mro(q))
            }
            leaves = [q for q in users if not any(q in self.mro(u)[1:] for u in users)]
            self._user = leaves[0] if len(leaves) == 1 else "django.contrib.auth.models.User"
        return self._user

    def is_model(self, cls: str) -> bool:
        """A project class deriving from an ORM ``Model`` base."""
        return cls in self._model_classes()

    def _model_classes(self) -> frozenset[str]:
        """Project classes deriving from an ORM ``Model`` base."""
        if self._models is None:
            self._models = frozenset(
                q
                for names in self._classes_named().values()
                for q in names
                if any(
                    b.endswith(_MODEL_BASE) and (b not in self.classes or self.is_library(b))
                    for b in self.mro(q)
                )
            )
        return self._models

    def in_project(self, name: str) -> bool:
        """A name under one of the project's top-level packages (not a library read)."""
        return name.split(".", 1)[0] in self._roots and not self.is_library(name)

    def is_library(self, name: str) -> bool:
        """A name defined in (or under) a library module the scan read."""
        if not self.library_modules:
            return False
        split = self._module_prefix(name)
        return split is not None and split[0] in self.library_modules

    def table(self, name: str) -> list[str] | None:
        """The values of a module-level table (``pkg.EXPORTERS[*]``, ``_extract._tables``):
        dotted names, an instance marked ``()``; the table followed through imports. None
        when the name is no table the scan knows."""
        owner = name.removesuffix(TABLE)
        for _ in range(_MAX_DEPTH):
            split = self._module_prefix(owner)
            if split is None or len(split[1]) != 1:
                return None
            summary = self.modules[split[0]]
            values = summary.assignments.get(f"{split[1][0]}{TABLE}", "")
            if values.startswith(TABLE_VALUES):
                return [v.replace(":", ".") for v in values[len(TABLE_VALUES) :].split("|")]
            imported = summary.imports.get(split[1][0])
            if imported is None:
                return None
            owner = imported
        return None

    def named_like(self, owner: str, pattern: str) -> list[str] | None:
        """``getattr(mod, f"send_to_{x}")``: the functions and classes of the project module
        ``owner`` (the methods of ``class:C`` along C's MRO) whose names fit ``pattern``
        (``send_to_*``, or a whole name); None when ``owner`` is not the project's, nothing
        fits, or more than ``_MAX_NAMED`` do (which one runs is only known at run time)."""
        prefix, star, suffix = pattern.partition("*")
        shortest = len(prefix) + len(suffix)

        def fits(name: str) -> bool:
            if not star:
                return name == prefix
            return len(name) > shortest and name.startswith(prefix) and name.endswith(suffix)

        if owner.startswith("class:"):
            cls = owner.removeprefix("class:")
            if cls not in self.classes or self.is_library(cls):
                return None
            found = {}
            for base in self.mro(cls):
                if base not in self.classes or self.is_library(base):
                    continue
                for method in self.classes[base].methods:
                    if fits(method) and method not in found:
                        found[method] = f"{base}.{method}"
            named = sorted(found.values())
        elif owner in self.modules and not self.is_library(owner):
            summary = self.modules[owner]
            defined = [fn.qualname for fn in summary.functions if fn.class_name is None]
            defined += [c.qualname for c in summary.classes]
            named = sorted(
                q
                for q in defined
                if q.count(".") == owner.count(".") + 1 and fits(q.rpartition(".")[2])
            )
        else:
            return None
        return named if 0 < len(named) <= _MAX_NAMED else None

    def app_object(self, name: str) -> str | None:
        """A name reached through an object stored on the app, on the class stored
        (``pkg.Accounts.mail_util.send_mail``; a union when several are); None when the
        name is no such object or the scan stores nothing under its key."""
        found = app_key(name)
        classes = self._app_stores().get(found[0], []) if found else []
        if found is None or not classes:
            return None
        holder = (
            classes[0]
            if len(classes) == 1
            else _UNION + "|".join(c.replace(".", ":") for c in classes)
        )
        return f"{holder}.{found[1]}" if found[1] else holder

    def _app_stores(self) -> dict[str, list[str]]:
        if self._stored is None:
            stored: dict[str, list[str]] = {}
            for summary in self.modules.values():
                for key, value in summary.assignments.items():
                    if key.startswith(APP_OBJECT):
                        stored.setdefault(key, []).extend(self._stored_classes(value))
            self._stored = {k: sorted(set(v))[:_MAX_MEMBERS] for k, v in stored.items() if v}
        return self._stored

    def _stored_classes(self, value: str) -> list[str]:
        names = union_members(f"{value}.x") or [f"{value}.x"]
        found = [self.resolve(n.removesuffix(".x")) for n in names]
        # a library class (``Saml2Client``) too: its methods are the library's calls
        known = (SymbolKind.CLASS, SymbolKind.EXTERNAL)
        return [f.name for f in found if f.kind in known and "()" not in f.name]

    def _on_app(self, name: str) -> Resolved | None:
        """An object stored on the app: resolved on the class stored; one stored nowhere in
        the scan, or whose attribute called through is of unknown type, is a receiver of
        unknown type that keeps its key (a gap), never a project name."""
        rewritten = self.app_object(name)
        found = self.resolve(rewritten) if rewritten is not None else None
        owner = found.name.rpartition(".")[0] if found is not None else ""
        if found is not None and (found.kind != SymbolKind.MEMBER or owner in self.classes):
            return found  # a class's method inherited from a library is the library's
        if name.startswith(APP_OBJECT):  # stored nowhere, or holding what is not known
            return Resolved(SymbolKind.MEMBER, f"?.{name}")
        return None

    def _resolve(self, name: str) -> Resolved:
        on_app = self._on_app(name) if app_key(name) else None
        if on_app is not None:
            return on_app
        members = union_members(name)
        if members is not None or name.startswith(_UNION):
            return self._union(name, members or [])
        if name.startswith(_MODEL_LOADED):
            return self._loaded_model(name)
        if name.startswith(_LOADED_CLASS):
            return self._loaded_class(name)
        direct = self._direct(name)
        if direct is not None:
            return direct
        split = self._module_prefix(name)
        if split is None:
            return self._outside(name)
        module, rest = split
        return self._in_module(module, rest)

    def _direct(self, name: str) -> Resolved | None:
        if name in self.functions:
            return Resolved(SymbolKind.FUNCTION, name)
        if name in self.classes:
            return Resolved(SymbolKind.CLASS, name)
        if name in self.modules:
            return Resolved(SymbolKind.MODULE, name)
        return None

    def _outside(self, name: str) -> Resolved:
        head = name.split(".", 1)[0]
        if head in self._roots:
            return Resolved(SymbolKind.MISSING, name)
        return Resolved(SymbolKind.EXTERNAL, name)

    def _module_prefix(self, name: str) -> tuple[str, list[str]] | None:
        parts = name.split(".")
        for cut in range(len(parts) - 1, 0, -1):
            module = ".".join(parts[:cut])
            if module in self.modules:
                return module, parts[cut:]
        return None

    def _in_module(self, module: str, rest: list[str]) -> Resolved:
        head, tail = rest[0], rest[1:]
        found = self._defined_in(module, head, tail)
        if found is not None:
            return found
        external: Resolved | None = None
        for star in self._star_closure(module):
            found = self._defined_in(star, head, tail)
            if found is None or found.kind == SymbolKind.MISSING:
                continue
            if found.kind != SymbolKind.EXTERNAL:
                return found
            external = external or found  # a library name re-exported through a star
        if external is not None:
            return external
        if head in _BUILTINS and not self._submodule(module, head):
            # Unimported names are qualified with their module; builtins are not project names
            # (``flask.globals`` is a module of flask, not the builtin ``globals``).
            return Resolved(SymbolKind.EXTERNAL, ".".join(rest))
        if module in self.library_modules:
            # A library's dynamic names (module __getattr__, lazy imports): not the project's.
            return Resolved(SymbolKind.EXTERNAL, ".".join([module, *rest]))
        return Resolved(SymbolKind.MISSING, ".".join([module, *rest]))

    def _memo_call(self, owner: str, tail: list[str]) -> Resolved | None:
        """``load.cache_clear()``, ``self.settings.cache_info()`` on a function or method
        decorated with ``functools.lru_cache`` / ``functools.cache`` (or cachetools'
        ``cachetools.func`` decorators, which add the same three): the wrapper's own
        methods on its in-process memo, functools'."""
        if tail[-1] not in MEMO_METHODS or len(tail) > 2:
            return None
        function: str | None = owner
        if len(tail) == 2:
            function = self.method(owner, tail[0]) if owner in self.classes else None
        info = self.functions.get(function or "")
        if info is None or not any(d.startswith(_MEMOISERS) for d in info.decorators):
            return None
        return Resolved(SymbolKind.EXTERNAL, f"{_MEMO_WRAPPER}.{tail[-1]}")

    def _submodule(self, module: str, head: str) -> bool:
        """``module.head`` is an installed module not read yet (``flask.globals``)."""
        library = self.library
        name = f"{module}.{head}"
        return module in self.library_modules and library is not None and library.find(name) == name

    def _defined_in(self, module: str, head: str, tail: list[str]) -> Resolved | None:
        """``head`` as defined, imported or assigned in ``module`` itself (not its stars)."""
        local = f"{module}.{head}"
        if local in self.classes or local in self.functions:
            return self._member(local, tail) if tail else self._direct(local)
        summary = self.modules[module]
        for table in (summary.imports, summary.assignments):
            if head in table and (tail or not _value_of_a_call(head, table[head])):
                onward = ".".join([table[head], *tail])
                self._via.setdefault(".".join([local, *tail]), onward)
                return self.resolve(onward)
        imported = summary.imports.get(head.removesuffix("()")) if head.endswith("()") else None
        if imported is not None and tail:
            # ``pkg.get_client().send`` where ``pkg/__init__.py`` re-exports get_client from the
            # module that defines it (``from ._client import get_client``): what it returns there.
            onward = ".".join([f"{imported}()", *tail])
            self._via.setdefault(".".join([local, *tail]), onward)
            return self.resolve(onward)
        if head.endswith(_ELEMENT) and tail:
            # ``iter_stats()[]`` of a function known to return a queryset: a row of its model.
            element = _element_of(summary.assignments.get(head.removesuffix("[]"), ""))
            return self.resolve(".".join([element, *tail])) if element else None
        return None

    def _star_closure(self, module: str) -> list[str]:
        """Project modules whose names ``module`` gets through ``from x import *``, transitively.

        Depth-first in import order, each module once: computed once per module,
        so a clique of n modules costs n * n, not n!.
        """
        cached = self._stars.get(module)
        if cached is not None:
            return cached
        order: list[str] = []
        seen = {module}
        stack = list(reversed(self.modules[module].star_imports))
        while stack:
            star = stack.pop()
            if star in seen or star not in self.modules:
                continue
            seen.add(star)
            order.append(star)
            stack.extend(reversed(self.modules[star].star_imports))
        self._stars[module] = order
        return order

    def _member(self, owner: str, tail: list[str]) -> Resolved:
        """``C.m`` through the bases of C; anything else is a member we cannot see into."""
        name = ".".join([owner, *tail])
        memo = self._memo_call(owner, tail)
        if memo is not None:
            return memo
        if len(tail) > 1 and tail[0].endswith("()") and owner in self.classes:
            # ``Session.current().close``: the class ``current`` returns, then the rest on it.
            returned = self.returned_class(owner, tail[0][:-2])
            if returned is not None:
                return self.resolve(".".join([returned, *tail[1:]]))
        held_key = tail[0].endswith(_HELD_KEYS) and not tail[0].endswith(_ELEMENT)
        if len(tail) > 1 and held_key and owner in self.classes:
            # ``Manifest.repos[each].install`` (``for r in manifest.repos: r.install()``),
            # ``Holder.items[].poke`` (``holder.items[0].poke()``): the class the attribute's
            # annotation says its container holds.
            held = self.held_class(owner, tail[0])
            if held is not None:
                return self.resolve(".".join([held, *tail[1:]]))
        if len(tail) > 2 and tail[1] in _LOOKUPS and owner in self.classes:
            # ``Manifest.by_name.get().install`` (``manifest.by_name.get(k).install()``): a
            # value of the container the class annotates the attribute as.
            held = self.held_class(owner, f"{tail[0]}[]")
            if held is not None:
                return self.resolve(".".join([held, *tail[2:]]))
        if len(tail) > 1 and tail[0].endswith(_ELEMENT) and owner in self.classes:
            # ``Stats.iter_parents()[].update``: an element of what the method returns.
            element = self.element_class(owner, tail[0].removesuffix(_ELEMENT))
            if element is not None:
                return self.resolve(".".join([element, *tail[1:]]))
        if len(tail) == 1 and owner in self.classes:
            method = self.method(owner, tail[0])
            if method is not None:
                return Resolved(SymbolKind.FUNCTION, method)
        if len(tail) == 2 and owner in self.classes:
            # ``Session.objects.create_from_request()`` with ``objects = SessionManager()``.
            held = self.attribute_class(owner, tail[0])
            value = self.file_value(held) if held else None
            if value is not None:
                # ``artifact.file.close()`` with ``file = ArtifactFileField(...)``, a project
                # FileField: the instance holds the field's value (its ``attr_class``)
                return self.resolve(f"{value}.{tail[1]}")
            method = self.method(held, tail[1]) if held else None
            if method is not None:
                return Resolved(SymbolKind.FUNCTION, method)
            library = self.attribute_library_type(owner, tail[0]) if held is None else None
            if library is not None and library.startswith(_VALUE_LIBRARIES):
                # ``upload.file.delete()``: Django's FieldFile; ``poller._next.cancel()`` with
                # ``self._next = loop.call_later(...)``: an asyncio.TimerHandle. The library
                # class's method, named for the catalogue (as ``self._next.cancel()`` is).
                # (Not a mapped class's column: ``User.name.in_`` builds a query, _gaps.)
                return Resolved(SymbolKind.EXTERNAL, f"{library}.{tail[1]}")
        if len(tail) > 2 and owner in self.classes and all(a.isidentifier() for a in tail):
            # ``hass.config_entries.flow.async_init`` with ``self.config_entries:
            # ConfigEntries`` and, in ``ConfigEntries.__init__``, ``self.flow =
            # FlowManager(...)``: each attribute through the class it holds, to any depth
            # (a chain of plain attributes: calls and elements along it are read above).
            held = self.attribute_class(owner, tail[0])
            if held is not None and self.file_value(held) is None:
                found = self.resolve(".".join([held, *tail[1:]]))
                if found.kind != SymbolKind.MEMBER:
                    return found
        if len(tail) > 1 and owner in self.classes and self.method(owner, tail[0]):
            # ``accounts.mail_util.send_mail``: a property returning ``self._mail_util``
            returned = self.returned_class(owner, tail[0])
            if returned is not None:
                return self.resolve(".".join([returned, *tail[1:]]))
        if len(tail) > 1 and owner in self.classes:
            related = self._through_relation(owner, tail)
            if related is not None:
                return related
        if owner in self.classes:
            # ``db.desc(...)`` / ``db.session.flush()`` with ``db = AppDB()``, ``class
            # AppDB(flask_sqlalchemy.SQLAlchemy)``: what the library class hands on.
            inherited = self._library_attribute(owner, tail)
            if inherited is not None:
                return inherited
        return Resolved(SymbolKind.MEMBER, name)

    def file_value(self, field: str) -> str | None:
        """What a model instance holds for a project subclass of Django's ``FileField`` /
        ``ImageField``: the class's ``attr_class`` when one along the way sets it, else Django's
        ``FieldFile`` / ``ImageFieldFile`` (Django's FileField docs: "the attr_class ... is
        FieldFile"). None when ``field`` is no such subclass."""
        for base in self.mro(field):
            info = self.classes.get(base)
            if info is not None:
                declared = info.attributes.get(ATTR_CLASS)
                if declared is not None:
                    # a value class of the project's, or none the scan can name: not typed
                    return None if declared == "?" else self.resolve(declared).name or None
                continue
            found = _FILE_VALUES.get(base)
            if found is not None:
                return found
        return None

    def _library_attribute(self, owner: str, tail: list[str]) -> Resolved | None:
        """``db.session.flush`` with ``class AppDB(flask_sqlalchemy.SQLAlchemy)``: an
        attribute the project class inherits from a library class whose type the scan knows
        (``_library.SESSION_ATTRIBUTES``), when no project class along the MRO declares it."""
        head = tail[0]
        for base in self.mro(owner):
            info = self.classes.get(base)
            if info is not None:
                if head in info.attributes or head in info.methods:
                    return None
                continue
            name = ".".join([base, *tail])
            mapped = library_attribute(name)
            if mapped != name:
                return self.resolve(mapped)
        return None

    def _through_relation(self, owner: str, tail: list[str]) -> Resolved | None:
        """``parent.children.filter().update`` / ``child.save`` of a loop over
        ``parent.children.all()`` (``Parent.children[].save``), where a ForeignKey of Leaf
        names ``children`` for Parent: ``Leaf.objects.filter().update``, ``Leaf.save``.
        A row of a relation the index does not know is a receiver of unknown type."""
        head = tail[0]
        if head.endswith(_ROWS):
            leaf = self.reverse_model(owner, head.removesuffix(_ROWS))
            if leaf is None:
                leaf = self.many_model(owner, head.removesuffix(_ROWS))
            if leaf is None:
                return Resolved(SymbolKind.MEMBER, f"?.{tail[-1]}")
            return self.resolve(".".join([leaf, *tail[1:]]))
        called = tail[1].removesuffix("()")
        if not head.isidentifier() or called not in _QUERYSET | _RELATION_EDITS:
            return None
        leaf = self.many_model(owner, head)
        if leaf is None:
            if self.attribute_class(owner, head) is not None or self.method(owner, head):
                return None
            leaf = self.reverse_model(owner, head)
        if leaf is None:
            return None
        if called in _RELATION_EDITS:
            # Django's related managers: ``add``/``remove``/``set``/``clear`` edit the relation
            # (never a duplicate row: adding a pair already there is a no-op).
            return Resolved(SymbolKind.EXTERNAL, f"{RELATED_MANAGER}.{called}")
        return self.resolve(".".join([leaf, "objects", *tail[1:]]))

    def many_model(self, owner: str, name: str) -> str | None:
        """The model whose rows the many-to-many field ``name`` of ``owner`` (or a base)
        holds, else None."""
        found = self._declared(owner, name, lambda info: info.many)
        return found.name if found is not None and found.kind == SymbolKind.CLASS else None

    def reverse_model(self, owner: str, name: str) -> str | None:
        """The model whose rows the reverse manager ``name`` of ``owner`` holds: a
        ForeignKey (or many-to-many) of Leaf to ``owner`` or a base of it with that
        related_name (``leaf_set`` without one). A field to ``"self"`` (often on an
        abstract base) holds rows of the concrete class; for a mixin, the one project
        class deriving from both it and the field's model. None when unknown or several."""
        key = (owner, name)
        if key in self._reverse_memo:
            return self._reverse_memo[key]
        found: set[str] = set()
        mro = self.mro(owner)
        for target, leaf in self._relations().get(name, []):
            if target in mro:
                found.add(owner if leaf == target else leaf)
                continue
            both = [
                q
                for q in self.classes
                if not self.is_library(q) and {owner, target} <= set(self.mro(q))
            ]
            if len(both) == 1:
                found.add(both[0] if leaf == target else leaf)
        result = found.pop() if len(found) == 1 else None
        self._reverse_memo[key] = result
        return result

    def _relations(self) -> dict[str, list[tuple[str, str]]]:
        if self._reverse is None:
            relations: dict[str, list[tuple[str, str]]] = {}
            for qualname, info in self.classes.items():
                for key, model in info.related.items():
                    target = self.resolve(model)
                    name = key.partition("#")[0]  # ``leaf_set#2``: the same name, another model
                    if target.kind == SymbolKind.CLASS:
                        relations.setdefault(name, []).append((target.name, qualname))
            self._reverse = relations
        return self._reverse

    def _defining(self, cls: str, method: str) -> tuple[FileSummary, str] | None:
        """The file of the class in ``cls``'s MRO that defines ``method``, and that class's
        name local to its module. Bases in library modules not read yet are read when no
        class read so far defines it: ``Item.model_validate(data)`` with ``class
        Item(pydantic.BaseModel)`` is an Item (pydantic annotates it ``-> Self``)."""
        return self._reading_bases(cls, lambda: self._defining_along(cls, method))

    def _defining_along(self, cls: str, method: str) -> tuple[FileSummary, str] | None:
        for owner in self.mro(cls):
            info = self.classes.get(owner)
            summary = self.modules.get(owner.rpartition(".")[0])
            if info is not None and summary is not None and method in info.methods:
                return summary, owner.removeprefix(f"{summary.module}.")
        return None

    def returned_class(self, cls: str, method: str) -> str | None:
        """What method ``method`` of ``cls`` (or the base defining it) is known to return."""
        defining = self._defining(cls, method)
        if method == "save" and (defining is None or defining[0].module in self.library_modules):
            return self._form_instance(cls)  # Django's own ModelForm.save, read or not
        if method == "get_object" and (
            defining is None or defining[0].module in self.library_modules
        ):
            return self._view_object(cls)  # Django's or DRF's generic view's, read or not
        if defining is None:
            return None
        summary, local = defining
        found = summary.assignments.get(f"{local}.{method}()")
        if found is None:
            return None
        if found == f"{summary.module}.{local}":
            # ``-> Self``, ``return cls(...)``, ``return self``: an instance of the class the
            # method is called on (``Special.load()`` is a Special), not only of its definer.
            return cls
        return found.removesuffix("()")

    def _form_instance(self, cls: str) -> str | None:
        """``form.save(commit=False)`` on a project ``ModelForm`` that inherits Django's
        ``save``: "This method creates and saves a database object from the data bound to
        the form ... returns the model instance" (``commit=False``: one not saved yet), an
        instance of its ``Meta.model``. None for a form whose project classes define ``save``
        (``_defining`` reads what that override returns) or no project class as its model."""
        declared = self.meta_model(cls)
        if not declared:
            return None
        # ``Meta.model`` names a model by Django's contract; not ``is_model``, which asked
        # before the classifier reads a library base would settle too soon
        found = self.resolve(declared)
        return found.name if found.kind == SymbolKind.CLASS and found.name in self.classes else None

    def _view_object(self, cls: str) -> str | None:
        """``self.get_object()`` in a view deriving from Django's ``SingleObjectMixin``
        (``DetailView``, ``UpdateView``, ``DeleteView``) or DRF's ``GenericAPIView`` (its
        generic views and viewsets), which it does not override: "Returns the single object
        that this view will display" (Django), a row of ``get_queryset()``, which is
        ``queryset`` or ``model._default_manager.all()``; DRF's reads ``queryset``. An
        instance of the ``model`` (or ``queryset = X.objects...``'s X) the view or a project
        base declares. A ``get_queryset`` the project overrides is trusted to return rows of
        that model, as the frameworks do elsewhere (Django's ``UpdateView`` builds its form
        from ``model``, DRF's model permissions and router read ``queryset.model``). None for
        another class, or no project model named."""
        declared, generic = None, False
        for owner in self.mro(cls):
            info = self.classes.get(owner)
            if info is None or self.is_library(owner):
                generic = generic or _GET_OBJECT.fullmatch(owner) is not None
                continue
            declared = declared or info.view_model or None
        if not generic or not declared:
            return None
        found = self.resolve(declared)
        return found.name if found.kind == SymbolKind.CLASS and found.name in self.classes else None

    def meta_model(self, cls: str) -> str | None:
        """The ``Meta.model`` a project form class declares or inherits from a project base
        (locally resolved, as written), None past the first library class."""
        for owner in self.mro(cls):
            info = self.classes.get(owner)
            if info is None or self.is_library(owner):
                return None
            if info.form_model:
                return info.form_model
        return None

    def element_class(self, cls: str, method: str) -> str | None:
        """What iterating the result of method ``method`` of ``cls`` (or the base defining
        it) gives: its annotation's element type (``-> Iterator[Stat]``), the class its
        yields build, or the model of the queryset it returns."""
        defining = self._defining(cls, method)
        if defining is None:
            return None
        summary, local = defining
        found = summary.assignments.get(f"{local}.{method}{_ELEMENT}")
        if found is not None:
            return found
        return _element_of(summary.assignments.get(f"{local}.{method}()", "")) or None

    def fresh_class(self, function: str, depth: int = 0) -> str | None:
        """The project class of the new instance (built without a primary key) that project
        function ``function`` returns, through helpers it returns the result of
        (``return super().to_change()``); None when not known to be new."""
        summary = self.home.get(function)
        if summary is None or depth > _MAX_DEPTH:
            return None
        made = summary.fresh_returns.get(function.removeprefix(f"{summary.module}."))
        if made is None:
            return None
        if made.startswith(_SUPER) and made.endswith("()"):
            owner, _, method = made[len(_SUPER) : -2].rpartition(".")
            callee = self._after(owner, method)
            return self.fresh_class(callee, depth + 1) if callee else None
        if made.endswith("()"):
            callee = self._function_named(made.removesuffix("()"))
            return self.fresh_class(callee, depth + 1) if callee else None
        found = self.resolve(made)
        return found.name if found.kind == SymbolKind.CLASS else None

    def fresh_by_name(self, method: str) -> str | None:
        """``obj.to_change()`` on a receiver of unknown type: the class of the new instance
        every project method of that name returns, when they all agree (None otherwise)."""
        owners = self.classes_defining(method)
        if not owners or any(self.is_library(owner) for owner in owners):
            return None
        made = {self.fresh_class(f"{owner}.{method}") for owner in owners}
        found = made.pop() if len(made) == 1 else None
        return found

    def _after(self, cls: str, method: str) -> str | None:
        """What ``super().method`` runs in a method of ``cls``: the next definition along
        its bases (the instance's class may put others between: the common case is not)."""
        for owner in self.mro(cls)[1:]:
            qualname = f"{owner}.{method}"
            if qualname in self.functions:
                return qualname
        return None

    def _function_named(self, name: str) -> str | None:
        """``pkg.Base.to_change``: the project function it is, through a class's bases."""
        found = self.resolve(name)
        if found.kind == SymbolKind.FUNCTION:
            return found.name
        owner, _, method = name.rpartition(".")
        cls = self.resolve(owner) if owner else None
        if cls is not None and cls.kind == SymbolKind.CLASS:
            return self.method(cls.name, method)
        return None

    def attribute_library_type(self, cls: str, attr: str) -> str | None:
        """The library class of ``cls.attr`` when the class (or a base) assigns it one that
        is not the project's (a model's ``FileField`` holds Django's ``FieldFile``)."""
        found = self._declared(cls, attr, lambda info: info.attributes)
        external = found is not None and found.kind == SymbolKind.EXTERNAL
        return found.name if found is not None and external and found.name else None

    def held_class(self, cls: str, key: str) -> str | None:
        """``repos[each]``: the class of what iterating attribute ``repos`` of ``cls`` gives,
        when a class along its MRO annotates it a list or set of a class (``repos:
        list[Repo]``); ``repos[]``: one value of it, a dict's too (``dict[str, Repo]``)."""
        attr = key.removesuffix(_EACH).removesuffix("[]")
        if key.endswith(_EACH):
            kind = next(
                (
                    info.attributes[attr]
                    for owner in self.mro(cls)
                    if (info := self.classes.get(owner)) is not None and attr in info.attributes
                ),
                "",
            )
            if kind.rpartition(".")[2] not in ("list", "set"):
                return None  # a mapping iterates its keys; anything else: not known
        return self.attribute_class(cls, f"{attr}[]")

    def attribute_class(self, cls: str, attr: str) -> str | None:
        """The project class of ``cls.attr`` when the class (or a base) assigns it one."""
        found = self._declared(cls, attr, lambda info: info.attributes)
        return found.name if found is not None and found.kind == SymbolKind.CLASS else None

    def _declared(
        self, cls: str, name: str, table: Callable[[ClassInfo], dict[str, str]]
    ) -> Resolved | None:
        """What the first class along ``cls``'s MRO declaring ``name`` in ``table`` (its
        attributes, its many-to-many fields) names there, resolved; None if none does."""
        for owner in self.mro(cls):
            info = self.classes.get(owner)
            declared = table(info).get(name) if info else None
            if declared is not None:
                return self.resolve(declared)
        return None

    def mro(self, cls: str) -> list[str]:
        """C, then its bases in Python's method resolution order (C3, as ``type.mro``):
        project class names and external names, an external class ending its own line (its
        bases are unknown unless the library's source was read). ``class Gallery(Displayable,
        RichText, BaseGallery)`` with each on ``models.Model``: ``models.Model`` comes last,
        after ``BaseGallery``, not after ``Displayable`` as a depth-first walk puts it."""
        done = self._mro_done.get(cls)
        if done is not None:
            return list(done)
        if cls in self._mro_busy:
            return [cls]
        outermost = not self._mro_busy  # a cycle cut short inside is not cached
        self._mro_busy.add(cls)
        try:
            order = self._linearise(cls)
        finally:
            self._mro_busy.discard(cls)
        if outermost:
            self._mro_done[cls] = order
            for top in {name.split(".", 1)[0] for name in order[1:]}:
                self._mro_tops.setdefault(top, set()).add(cls)
        return list(order)

    def _linearise(self, cls: str) -> list[str]:
        done: dict[str, list[str] | None] = {}
        return self._c3(cls, done, set()) or self._depth_first(cls)

    def _c3(self, cls: str, done: dict[str, list[str] | None], busy: set[str]) -> list[str] | None:
        """C3 (the merge of the bases' orders and the bases themselves, each next class the
        first head no other order holds in its tail); None for a cycle, an order C3 refuses
        (as Python would: "Cannot create a consistent method resolution order") or one
        past 64 classes: the caller walks depth-first instead."""
        if cls in done:
            return done[cls]
        # Not ``_mro_done``: a base's order kept there may predate reading its library bases
        # (redis-py's command mixins), which only the outermost class's order is redone for.
        info = self.classes.get(cls)
        if info is None or not info.bases:
            return [cls]
        if cls in busy:
            return None
        busy.add(cls)
        bases = list(dict.fromkeys(self._base_name(b) for b in info.bases))
        orders = [self._c3(base, done, busy) for base in bases]
        busy.discard(cls)
        known = [o for o in orders if o is not None]
        merged = _merge([*known, bases]) if len(known) == len(orders) else None
        found = [cls, *merged] if merged is not None and len(merged) < 64 else None
        done[cls] = found
        return found

    def _depth_first(self, cls: str) -> list[str]:
        order: list[str] = []
        stack = [cls]
        while stack and len(order) < 64:
            current = stack.pop(0)
            if current in order:
                continue
            order.append(current)
            info = self.classes.get(current)
            if info is not None:
                stack = [self._base_name(b) for b in info.bases] + stack
        return order

    def _base_name(self, base: str) -> str:
        found = self.resolve(base)
        return found.name

    @contextlib.contextmanager
    def provisional_orders(self) -> Iterator[None]:
        """Lookups made inside keep no class order they linearise: for those made before the
        classifier has read the libraries the classes derive from. A kept order would end
        at such a base for the rest of the scan (reading the library drops the order of the
        class read, not of the project classes deriving from it)."""
        kept = dict(self._mro_done)
        try:
            yield
        finally:
            self._mro_done = kept

    def method(self, cls: str, name: str) -> str | None:
        """The qualname of method ``name`` as found on ``cls`` or its project bases. On a
        library class, bases in modules not read yet are read first when the method is not
        found along those known: redis-py's ``Redis`` gets ``hdel`` from ``HashCommands``,
        a mixin of ``redis.commands.core`` that nothing else made the scan read."""
        find = functools.partial(self._method_along, cls, name)
        return self._reading_bases(cls, find) if self.is_library(cls) else find()

    def _method_along(self, cls: str, name: str) -> str | None:
        for owner in self.mro(cls):
            qualname = f"{owner}.{name}"
            if qualname in self.functions:
                return qualname
        return None

    def _reading_bases(self, cls: str, find: Callable[[], _T | None]) -> _T | None:
        """``find()``, again after each round of reading ``cls``'s bases' modules that reads
        one, until it finds something or nothing more is read."""
        found = find()
        while found is None and self._read_bases(cls):
            found = find()
        return found

    def _read_bases(self, cls: str) -> bool:
        """Read the installed modules of ``cls``'s bases not read yet; True when one was
        (its MRO is then linearised again). Once nothing more is read for ``cls`` it is not
        tried again: a lookup that fails on it costs nothing after the first."""
        if cls in self._bases_read or self.library is None:
            return False
        before = len(self.modules)
        for base in self.mro(cls):
            if base not in self.classes:
                self.resolve_in_library(base)
        if len(self.modules) == before:
            self._bases_read.add(cls)
            return False
        self._mro_done.pop(cls, None)
        return True

    def module_variable_member(self, name: str) -> bool:
        """``pkg.log.logger.debug``: a member of a module-level variable the index has no type
        for (``logger = logging.getLogger()``), not a project name missing from the scan."""
        split = self._module_prefix(name)
        if split is None:
            return False
        module, rest = split
        if len(rest) < 2 or (rest[0][:1].isupper() and not rest[0].isupper()):
            return False  # a missing CamelCase name is a class the scan lacks: a real gap
        if self.modules[module].is_package and len(rest) > 2:
            return False  # pkg.missing_module.Name.method: a module the scan lacks
        return self.resolve(f"{module}.{rest[0]}").kind == SymbolKind.MISSING

    def classes_defining(self, method: str) -> list[str]:
        """Project classes with a method of that name (for calls on receivers of unknown type)."""
        if self._by_method is None:
            by_method: dict[str, list[str]] = {}
            for qualname, fn in self.functions.items():
                if fn.class_name is not None:
                    owner, name = qualname.rsplit(".", 1)
                    by_method.setdefault(name, []).append(owner)
            self._by_method = {k: sorted(v) for k, v in by_method.items()}
        return self._by_method.get(method, [])

    def derives_from(self, cls: str, external: str) -> bool:
        return external in self.mro(cls)

    def function_path(self, qualname: str) -> str:
        summary = self.home.get(qualname)
        return summary.path if summary else ""


def _merge(orders: list[list[str]]) -> list[str] | None:
    """C3's merge: repeatedly take the first head that is in no order's tail."""
    pending = [list(order) for order in orders if order]
    merged: list[str] = []
    while pending:
        head = next(
            (o[0] for o in pending if not any(o[0] in other[1:] for other in pending)), None
        )
        if head is None:
            return None
        merged.append(head)
        pending = [rest for o in pending if (rest := o[1:] if o[0] == head else o)]
    return merged
