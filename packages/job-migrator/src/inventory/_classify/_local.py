"""Effects of one function body on its own: catalogued calls and syntactic facts.

Callees are not looked at here (that is the fixpoint in ``_effects``); this
turns one FunctionInfo into :class:`Trace` records whose chain is just the
function itself.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import replace

from inventory._catalogue import CallMatch, Catalogue
from inventory._classify._changes import ParameterChanges
from inventory._classify._collectors import Collectors
from inventory._classify._dispatch import handed_function
from inventory._classify._gaps import Gaps
from inventory._classify._graph import CallGraph
from inventory._classify._guards import Guard, covering, guards_of, inserted_model
from inventory._classify._index import SymbolIndex, SymbolKind
from inventory._classify._keys import key_detail, key_status, natural_key
from inventory._classify._money import MoneyState, MoneyWords
from inventory._classify._spawned import Spawn, forgets_the_future, handed_root, spawned
from inventory._classify._target import CallTarget
from inventory._classify._trace import Found, Trace, location
from inventory._classify._verdict import OPAQUE, REPEATS
from inventory._extract._library import LOG_METHODS
from inventory.models import Effect, EffectKind, Location
from inventory.summary import (
    PARAMETER_DISPATCH,
    CallInfo,
    Fact,
    FactKind,
    FunctionInfo,
    RawSite,
    ReceiverKind,
    Span,
)

_AUGASSIGN = re.compile(r"\s*([\w.\[\]()]+?)\.(\w+)\s*(?:[-+*/%|&^]?=|$)")
_UNKNOWN = "?."
_ROOT = re.compile(r"^\s*(?:self\.)?([A-Za-z_]\w*)")
_TIME = re.compile(r"(^|\.)(time|now|utcnow|today|monotonic|perf_counter)$")
# Attributes that hold a callable: ``job.func(...)`` runs whatever was stored.
_CALLABLE_ATTRS = frozenset(
    {"func", "callback", "fn", "handler", "target", "hook", "callable", "function", "cb"}
)
# Method names of builtins and loggers: a call of one on an unknown receiver is not a gap.
_PLAIN_METHODS = frozenset(
    {n for t in (dict, list, str, set, bytes, tuple, int, float) for n in dir(t)}
    | LOG_METHODS
    | {"get", "save", "delete", "update", "create", "filter", "exclude", "all", "first"}
    | {"close", "open", "read", "write", "flush", "send", "run", "start", "stop", "join"}
    | {"render", "clean", "validate", "is_valid", "full_clean", "as_view", "dispatch"}
    | {"cache_clear", "cache_info", "cache_parameters"}  # functools caches
)
# Module-level ``Name = factory("Name", ...)``: calling Name builds a value.
_TYPE_FACTORIES = frozenset(
    {
        "collections.namedtuple",
        "typing.NamedTuple",
        "typing.TypedDict",
        "typing.NewType",
        "typing_extensions.NamedTuple",
        "typing_extensions.TypedDict",
        "typing_extensions.NewType",
        "dataclasses.make_dataclass",
        "enum.Enum",
        "enum.IntEnum",
        "enum.StrEnum",
    }
)
# Targets whose receiver's type is unknown although the name was qualified.
_UNTYPED = frozenset({SymbolKind.MISSING, SymbolKind.MEMBER})
_MODEL_BASE = ".Model"  # django.db.models.Model, flask_sqlalchemy's db.Model
_PERSISTING = frozenset(
    {
        EffectKind.DB_INSERT,
        EffectKind.DB_UPSERT,
        EffectKind.DB_OVERWRITE,
        EffectKind.FILE_WRITE,
        EffectKind.OBJECT_PUT,
        EffectKind.CACHE_SET,
    }
)
# Writes a random or time value can become the identity of: a new row, a file, an object.
_NEW_ROWS = frozenset({EffectKind.DB_INSERT, EffectKind.FILE_WRITE, EffectKind.OBJECT_PUT})


class LocalEffects:
    """Turns one function body into traces, using the catalogue and the call graph."""

    def __init__(
        self, graph: CallGraph, catalogue: Catalogue, dynamic_sites: dict[str, list[RawSite]]
    ):
        self.graph = graph
        self.catalogue = catalogue
        self.dynamic_sites = dynamic_sites
        self.money = MoneyWords(graph, catalogue)
        self.state = MoneyState(catalogue)
        self.gaps = Gaps(catalogue, graph.library_gap, graph.index)  # the soundness rule
        self.collectors = Collectors(graph.index)
        self.changes = ParameterChanges(graph, catalogue, self.gaps)  # what a method does to self
        # (caller, callee) where the caller passes the callee's SQL as a literal.
        self.sql_bound: set[tuple[str, str]] = set()
        self._sql_param_memo: dict[str, set[str]] = {}
        self._value_types: dict[str, set[str]] = {}  # module -> namedtuple & co. it defines
        self._guards: dict[str, list[Guard]] = {}
        self._callee_guards: dict[tuple[str, str], str | None] = {}
        self._guarded: dict[tuple[int, str], Found] = {}

    def of(self, fn: FunctionInfo) -> list[Trace]:
        path = self.graph.index.function_path(fn.qualname)
        targets = self.graph.targets(fn.qualname)
        calls = [self._call(t, fn, path) for t in targets if t.function is None]
        calls += [self._money_word(t, fn, path) for t in targets if t.function is not None]
        calls += [self._new_instance_save(t, fn, path) for t in targets if t.function is not None]
        calls += [self._sql_passed(t, fn, path) for t in targets if t.function is not None]
        calls += [self._held_instance(t, fn, path) for t in targets if t.function is not None]
        # One call may have several targets (``self.m()`` and its overrides): once per call.
        calls += [self.state.of_call(c, fn, path) for c in _distinct(t.call for t in targets)]
        traces = [t for t in calls if t is not None]
        traces += [t for f in fn.facts if (t := self._fact(f, fn, path)) is not None]
        traces += [self._dynamic_site(s, fn, path) for s in self.dynamic_sites.get(fn.qualname, [])]
        model = fn.qualname.rsplit(".", 1)[0] if self._on_model(fn) else None
        billing = self.state.of_model(traces, fn, model, path)
        traces += [billing] if billing is not None else []
        guarded = _guarded(_post_process(traces, fn), fn, self.guards(fn.qualname))
        return [Trace(f, (fn.qualname,)) for f in guarded]

    def _held_instance(self, target: CallTarget, fn: FunctionInfo, path: str) -> Found | None:
        """``cache.set(key, data)`` on ``cache = Cache()``, an object a project module makes
        at import: a method of it that changes ``self`` (a store into it, a container of it
        changed in place, read from the method's body as a job's parameters are) changes
        state this process holds, as a write to a module-level dict does. Run by a worker,
        the job would fill the worker's copy and this process would never see it."""
        call = target.call
        if call.receiver is not ReceiverKind.MODULE:
            return None
        head, _, method = call.target.rpartition(".")
        module, _, name = head.rpartition(".")
        index = self.graph.index
        summary = index.modules.get(module)
        made = summary.assignments.get(name) if summary is not None and name else None
        if made is None or made.endswith(")") or index.is_library(target.function or ""):
            return None
        if name[:1].isupper() and not name.isupper():
            return None  # ``Alias = SomeClass``: a class, not an instance made at import
        cls = index.resolve(made)
        if cls.kind is not SymbolKind.CLASS or index.is_library(cls.name):
            return None
        found = self.changes.self_change(target.function or "")
        if found is None:
            return None
        detail = (
            f"changes {head}, a {cls.name.rpartition('.')[2]} this process made at import "
            f"(its {method} stores into it: `{found}`): run by a worker, the job would change "
            "the worker's copy and this process would not see it"
        )
        return Found(_effect(EffectKind.PROCESS_STATE, path, call.span, head, fn, detail))

    def guards(self, qualname: str) -> list[Guard]:
        found = self._guards.get(qualname)
        if found is None:
            fn = self.graph.index.functions.get(qualname)
            found = self._guards[qualname] = (
                guards_of(fn, self.graph.index) if fn is not None else []
            )
        return found

    def callee_guard(self, caller: str, callee: str) -> str | None:
        """The guard covering every call of ``callee`` in ``caller``, if there is one."""
        key = (caller, callee)
        if key not in self._callee_guards:
            guards = self.guards(caller)
            lines = [t.call.span.line for t in self.graph.targets(caller) if t.function == callee]
            covered = [covering(guards, line, None) for line in lines] if guards else []
            what = {g.what if g else None for g in covered}
            self._callee_guards[key] = what.pop() if len(what) == 1 else None
        return self._callee_guards[key]

    def guarded(self, found: Found, what: str) -> Found:
        """``found`` reached behind a guard (one copy per guard, so trace keys stay stable)."""
        key = (id(found), what)
        copy = self._guarded.get(key)
        if copy is None:
            copy = self._guarded[key] = replace(found, guard=what)
        return copy

    def _call(self, target: CallTarget, fn: FunctionInfo, path: str) -> Found | None:
        call = target.call
        if target.more_overrides:
            return self.gaps.overrides_not_followed(target, fn, path)
        spawn = spawned(target)
        if spawn is not None:
            return self._spawn(spawn, target, fn, path)
        holder = self.collectors.holder(call, fn, self._local_variable(call, fn))
        if holder is not None:
            return _collected(holder, call, fn, path)
        found = self.catalogue.match_call(call, target.name, _sql_before(fn, call.span.line))
        if found is not None and self._overridable(found, target):
            found = None  # the project may override the method: the name does not decide
        if found is None and target.kind != SymbolKind.FUNCTION:
            found = self.catalogue.match_keyword(call, target.name)
        if found is not None:
            param = _parameter_root(found.sql_unknown, fn)
            if param is not None:
                detail = f"the SQL text comes from parameter {param!r}: what it does is only known at run time"
                effect = _effect(EffectKind.DYNAMIC_CALL, path, call.span, found.api, fn, detail)
                return Found(effect, exact=False, sql_param=param)
            matched = _matched(found, call, fn, path)
            if _updates_from_columns(matched, call, fn):
                detail = (
                    "update() sets a column to an F() expression of stored values: the "
                    "database recomputes it from the row, so a retry applies it again"
                )
                effect = _with(matched.effect, kind=EffectKind.DB_INCREMENT, detail=detail)
                return replace(matched, effect=effect)
            made = self._fresh(call, fn)
            owner = made[1] if made is not None else ""
            model = made is not None and (self._is_model(owner) or ".models." in f".{owner}.")
            if matched.effect.kind == EffectKind.DB_OVERWRITE and made is not None and model:
                return replace(matched, effect=_insert(matched.effect, call, made[0]))
            return _backoff(matched, call)
        if target.kind == SymbolKind.MISSING and (
            self._local_variable(call, fn) or self.graph.index.module_variable_member(target.name)
        ):
            return self._unknown_receiver(call, fn, path) or self.gaps.of(target, fn, path)
        if target.kind == SymbolKind.MISSING:
            detail = f"{target.name} looks like a project name but is defined nowhere in the scan"
            effect = _effect(EffectKind.DYNAMIC_CALL, path, call.span, target.name, fn, detail)
            return Found(effect, exact=False, gap=True)
        if target.name.startswith(_UNKNOWN):
            return self._unknown_receiver(call, fn, path) or self.gaps.of(target, fn, path)
        return self.gaps.of(target, fn, path)  # explained by nothing: a gap, unless pure

    def _spawn(self, spawn: Spawn, target: CallTarget, fn: FunctionInfo, path: str) -> Found | None:
        """A spawn API (``_spawned``) is no gap: what it runs is. A coroutine's call, a site's
        job and a project callable are followed on their own; a library callable is matched
        as if called here (``ex.submit(requests.post, url).result()`` posts); a callable
        the scan cannot name is a gap that names it."""
        call = target.call
        if spawn.written == "" or call.span.line in self.graph.sites_in(fn.qualname):
            return None
        written = spawn.written
        index = self.graph.index
        if written is not None and handed_function(index, fn, written) is not None:
            return None  # a callee of fn (``_dispatch.callbacks``)
        if forgets_the_future(spawn):
            return None
        library = self._library_callable(spawn, call, fn) if written else None
        if library is not None:
            return self._call(library, fn, path)
        api = _short(written or f"{spawn.api}(...)")
        runner = spawn.api.rpartition(".")[2]
        detail = f"handed to {runner}, which calls it: what it runs is only known at run time"
        effect = _effect(EffectKind.DYNAMIC_CALL, path, call.span, api, fn, detail)
        return Found(effect, exact=False, gap=True)

    def _library_callable(
        self, spawn: Spawn, call: CallInfo, fn: FunctionInfo
    ) -> CallTarget | None:
        """``os.remove`` / ``partial(send_mail, ...)`` handed to a spawn API: the library
        function, called as the spawn calls it; None for anything else."""
        root = handed_root(spawn.written or "")
        summary = self.graph.index.home.get(fn.qualname)
        head = (root or "").partition(".")[0]
        if root is None or summary is None:
            return None
        if head in fn.params or head in ("self", "cls"):
            return self._held_method(spawn, call, fn, root)
        name = f"{summary.module}.{root}"
        found = self.graph.index.resolve(name)
        if found.kind != SymbolKind.EXTERNAL and not self.graph.index.is_library(found.name):
            return self._held_method(spawn, call, fn, root)
        receiver = ReceiverKind.MODULE if "." in root else ReceiverKind.NONE
        handed = spawn.handed(call).model_copy(
            update={
                "target": name,
                "receiver": receiver,
                "receiver_source": "",
                "returned_from": "",
            }
        )
        return self.graph.resolve_call(handed, fn)

    def _held_method(
        self, spawn: Spawn, call: CallInfo, fn: FunctionInfo, root: str
    ) -> CallTarget | None:
        """``task.add_done_callback(self._tasks.discard)``, ``run_in_executor(None,
        self.client.post, url)``: a method of a value the function holds (no project
        function), called as the spawn calls it, as if written here on that receiver; the
        catalogue and the receiver rules decide as for a direct call, so nothing vanishes."""
        receiver, _, method = root.rpartition(".")
        if not receiver or not method.isidentifier():
            return None
        handed = spawn.handed(call).model_copy(
            update={
                "target": f"{_UNKNOWN}{method}",
                "receiver": ReceiverKind.UNKNOWN,
                "receiver_source": receiver,
                "returned_from": "",
            }
        )
        return self.graph.resolve_call(handed, fn)

    def _unknown_receiver(self, call: CallInfo, fn: FunctionInfo, path: str) -> Found | None:
        """``job.func(...)``, ``instance.unpublish()``: a call no catalogue entry explains
        on a receiver of unknown type must not vanish (a job would look like a no-op)."""
        method = call.target.rsplit(".", 1)[-1]
        api = f"{call.receiver_source}.{method}" if call.receiver_source else method
        if method in _CALLABLE_ATTRS and call.receiver_source:
            detail = f"calls the callable stored in {_short(api)}: what it runs is only known at run time"
            effect = _effect(EffectKind.DYNAMIC_CALL, path, call.span, _short(api), fn, detail)
            return Found(effect, exact=False)
        if method in _PLAIN_METHODS or method.startswith("__"):
            return None
        owners = self.graph.index.classes_defining(method)
        if not owners or self._library_method_catalogued(call, owners):
            return None
        names = ", ".join(o.rsplit(".", 1)[-1] for o in owners[:3])
        more = f" and {len(owners) - 3} more" if len(owners) > 3 else ""
        detail = f"the receiver's type is unknown; {method} is defined on {names}{more}"
        effect = _effect(EffectKind.DYNAMIC_CALL, path, call.span, _short(api), fn, detail)
        return Found(effect, exact=False, gap=True)

    def _overridable(self, found: CallMatch, target: CallTarget) -> bool:
        """A by-name entry (``?.delete``) that says a call converges, on a receiver of
        unknown type, when a project class defines that method: the receiver may be one
        of them, whose override can do more (send, insert): the call is not explained."""
        if not found.by_name or found.kind in REPEATS:
            return False
        if not (target.name.startswith(_UNKNOWN) or target.kind in _UNTYPED):
            return False
        if self._inherited(target):
            return False
        index = self.graph.index
        method = target.name.rsplit(".", 1)[-1]
        return any(not index.is_library(owner) for owner in index.classes_defining(method))

    def _inherited(self, target: CallTarget) -> bool:
        """``condition.delete()`` on a project model whose classes define no ``delete``: the
        receiver's type is known, and the method is the ORM base's, not an override."""
        if target.kind != SymbolKind.MEMBER:
            return False
        owner, _, method = target.name.rpartition(".")
        index = self.graph.index
        if owner not in index.classes or index.is_library(owner):
            return False
        if index.method(owner, method) is not None:
            return False
        mro = index.mro(owner)
        return any(orm_base(index, b) for b in mro) and all(
            b in index.classes or orm_base(index, b) for b in mro
        )

    def _library_method_catalogued(self, call: CallInfo, owners: list[str]) -> bool:
        """``qs.distinct()`` where only a library read from the environment (Django's
        QuerySet) defines ``distinct``: a ``[[pure]]`` method entry, written for exactly
        those library APIs, speaks for it. A project class defining the method could be
        the receiver, with effects of its own: then the call stays a gap."""
        index = self.graph.index
        if not all(index.is_library(owner) for owner in owners):
            return False
        return self.catalogue.is_pure(call, call.target, unknown_receiver=True)

    def _local_variable(self, call: CallInfo, fn: FunctionInfo) -> bool:
        """``backend.accepts()`` on a comprehension or loop variable, ``type(x).m()``: the
        extractor qualified a local as a module global; it is a receiver of unknown type."""
        summary = self.graph.index.home.get(fn.qualname)
        if summary is None or not call.receiver_source:
            return False
        head = re.split(r"[.(\[]", call.receiver_source, maxsplit=1)[0]
        if "(" in call.receiver_source.split(".", 1)[0]:
            return True  # type(obj).method(), getattr(...).all()
        if summary.star_imports or not call.target.startswith(f"{summary.module}.{head}."):
            return False
        known = (summary.imports, summary.assignments)
        qualified = f"{summary.module}.{head}"
        index = self.graph.index
        return (
            all(head not in table for table in known)
            and qualified not in index.functions
            and qualified not in index.classes
            and qualified not in index.modules
        )

    def _new_instance_save(self, target: CallTarget, fn: FunctionInfo, path: str) -> Found | None:
        """``Page(slug=x).save()`` where Page overrides save(): the override's body is
        followed, and the call itself inserts a row."""
        call = target.call
        made = self._fresh(call, fn)
        if made is None or not self._is_model(made[1]):
            return None
        ctor = made[0]
        effect = _effect(EffectKind.DB_OVERWRITE, path, call.span, _short(f"{ctor}.save"), fn, "")
        return Found(_insert(effect, call, ctor), exact=False)

    def _fresh(self, call: CallInfo, fn: FunctionInfo) -> tuple[str, str] | None:
        """A ``.save()`` on a new instance: (how it was made, its class), else None.

        ``obj = Model(...)`` in the body, or ``change = helper()`` where the helper returns
        a new instance it builds without a primary key (``return Change(action=a)``;
        through ``super()`` and ``self`` helpers): ``change.save()`` inserts a row."""
        ctor = _fresh_instance(call, fn)
        if ctor is not None:
            return ctor, call.target.rsplit(".", 1)[0]
        if not call.target.endswith(".save") or not call.receiver_source.isidentifier():
            return None
        if call.receiver_source in fn.params or call.receiver_source in ("self", "cls"):
            return None
        index = self.graph.index
        returned = call.returned_from
        if returned.endswith("()") and call.receiver is ReceiverKind.UNKNOWN:
            helper = returned.removesuffix("()")
            if helper.startswith(_UNKNOWN):
                cls = index.fresh_by_name(helper.removeprefix(_UNKNOWN))
            else:
                found = index.resolve(helper)
                cls = index.fresh_class(found.name) if found.kind == SymbolKind.FUNCTION else None
            return (_made_by(cls, helper), cls) if cls else None
        if call.receiver is not ReceiverKind.INSTANCE:
            return None
        owner = index.resolve(call.target.rsplit(".", 1)[0])
        if owner.kind != SymbolKind.CLASS:
            return None
        for earlier in self.graph.targets(fn.qualname):
            if earlier.call.span.line > call.span.line or not earlier.call.result_used:
                continue
            if earlier.function and index.fresh_class(earlier.function) == owner.name:
                return _made_by(owner.name, earlier.function), owner.name
        return None

    def _sql_passed(self, target: CallTarget, fn: FunctionInfo, path: str) -> Found | None:
        """``run_sql("INSERT ...")`` where run_sql executes its parameter: the caller's
        literal says what the SQL does."""
        callee = self.graph.index.functions.get(target.function or "")
        params = self._sql_params(callee) if callee is not None else set()
        if not params or callee is None:
            return None
        call = target.call
        passed = _bound_literals(call, callee, params)
        kinds = [(k, text) for text in passed if (k := self.catalogue.classify_sql(text))]
        if not kinds:
            return None
        self.sql_bound.add((fn.qualname, callee.qualname))
        kind, text = kinds[0]
        api = f"{callee.name}({_short(text, 40)})"
        detail = f"SQL passed to {callee.qualname}: {_short(text)}"
        return Found(_effect(kind, path, call.span, api, fn, detail), exact=False)

    def _sql_params(self, fn: FunctionInfo) -> set[str]:
        """Parameters of ``fn`` whose value it executes as SQL (``cursor.execute(sql)``)."""
        cached = self._sql_param_memo.get(fn.qualname)
        if cached is None:
            cached = set()
            for target in self.graph.targets(fn.qualname):
                if target.function is None:
                    found = self.catalogue.match_call(target.call, target.name)
                    param = _parameter_root(found.sql_unknown if found else None, fn)
                    if param is not None:
                        cached.add(param)
            self._sql_param_memo[fn.qualname] = cached
        return cached

    def _is_model(self, cls: str) -> bool:
        index = self.graph.index
        found = index.resolve(cls)
        if found.kind != SymbolKind.CLASS:
            return False
        return any(orm_base(index, b) for b in index.mro(found.name))

    def _money_word(self, target: CallTarget, fn: FunctionInfo, path: str) -> Found | None:
        found = self.money.match(target)
        return _matched(found, target.call, fn, path) if found is not None else None

    def _fact(self, fact: Fact, fn: FunctionInfo, path: str) -> Found | None:
        money = self.state.of_fact(fact, fn, path, self._on_model(fn))
        if money is not None:
            return money
        if fact.kind == FactKind.DYNAMIC_DISPATCH:
            if self._constructs(fact, fn):
                return None
            detail = "dynamic dispatch: the callee is only known at run time"
            return Found(
                _effect(EffectKind.DYNAMIC_CALL, path, fact.span, _short(fact.text), fn, detail)
            )
        if fact.kind in (FactKind.AUGASSIGN_GLOBAL, FactKind.AUGASSIGN_SUBSCRIPT):
            return _in_memory(fact, fn, path)
        if fact.kind is FactKind.REQUEST_READ:
            if self.graph.index.is_library(fn.qualname):
                return None  # Flask's own helpers read the request they are given
            detail = (
                f"reads {fact.target}, of the request being served: a worker serves no "
                "request, so there it would fail or read a blank one"
            )
            return Found(_effect(EffectKind.REQUEST_READ, path, fact.span, fact.target, fn, detail))
        if fact.kind in (FactKind.MODULE_STATE, FactKind.REQUEST_STATE):
            if self.graph.index.is_library(fn.qualname):
                # A library's own bookkeeping (SQLAlchemy's creation counter, Django's lazily
                # loaded serializer registry): an implementation detail, not the job's state;
                # what a library documents as changing the process is in the catalogue.
                return None
            api = _short(fact.target)
            if fact.kind is FactKind.REQUEST_STATE:
                detail = (
                    f"changes {fact.target}, the session of the request being served (its "
                    "response's cookie): a worker serves no request, so the change would be lost"
                )
                return Found(_effect(EffectKind.REQUEST_HOOK, path, fact.span, api, fn, detail))
            detail = (
                f"changes {fact.target}, held in this process's memory: run by a worker, the "
                "job would change the worker's copy and this process would not see it"
            )
            return Found(_effect(EffectKind.PROCESS_STATE, path, fact.span, api, fn, detail))
        if fact.kind != FactKind.AUGASSIGN_ATTR:
            return None
        receiver, attr = augassign_parts(fact)
        kind = self.catalogue.match_augassign(attr)
        if kind is not None:
            detail = f"changes account state ({attr}) relative to its current value"
            return Found(_effect(kind, path, fact.span, _short(fact.text), fn, detail), exact=False)
        if receiver == "self" and self._on_model(fn) and not _saved_after(fn, receiver, fact):
            detail = (
                "sets a field of a model instance to an F() expression of stored values: "
                "persisted when saved, a retry applies it again"
                if _from_columns(fact)
                else "increments a field of a model instance: persisted when saved, "
                "a retry adds twice"
            )
            effect = _effect(
                EffectKind.DB_INCREMENT, path, fact.span, _short(fact.text), fn, detail
            )
            return Found(effect, exact=False)
        return None

    def _constructs(self, fact: Fact, fn: FunctionInfo) -> bool:
        """``cls(...)`` in a classmethod, ``Point(...)`` with ``Point = namedtuple("Point", ...)``:
        building a value, not a call only known at run time."""
        if self.graph.handed_by_callers(fn.qualname, fact):
            return True  # ``cb(x)``: each caller runs the function it hands (its own call)
        table = self.graph.table_of(fn.qualname, fact)
        if table:
            # Every value a project function: followed as calls (CallGraph.dispatched).
            return self.graph.table_followed(table)
        if fact.target == f"{PARAMETER_DISPATCH}cls":
            return bool(fn.params) and fn.params[0] == "cls"
        if not fact.target.startswith("variable "):
            return False
        name = fact.target.removeprefix("variable ")
        summary = self.graph.index.home.get(fn.qualname)
        if summary is None:
            return False
        made = self._value_types.get(summary.module)
        if made is None:
            made = {
                str(c.args[0])
                for c in summary.module_calls
                if c.target in _TYPE_FACTORIES and c.args and isinstance(c.args[0], str)
            }
            self._value_types[summary.module] = made
        return name in made

    def _on_model(self, fn: FunctionInfo) -> bool:
        """A method of an ORM model (``django.db.models.Model``, ``db.Model``...)."""
        if fn.class_name is None:
            return False
        owner = fn.qualname.rsplit(".", 1)[0]
        index = self.graph.index
        return any(orm_base(index, b) for b in index.mro(owner))

    def _dynamic_site(self, site: RawSite, fn: FunctionInfo, path: str) -> Found:
        detail = site.unresolved_reason or "starts work whose target is only known at run time"
        api = _short(site.target_source) or site.pattern.value
        return Found(_effect(EffectKind.DYNAMIC_CALL, path, site.span, api, fn, detail))


def _distinct(calls: Iterable[CallInfo]) -> list[CallInfo]:
    return list({id(c): c for c in calls}.values())


def orm_base(index: SymbolIndex, base: str) -> bool:
    """``django.db.models.Model``: an ORM base outside the project, whether or not the
    scan read the library's source (then it is in the index, as a library class)."""
    return base.endswith(_MODEL_BASE) and (base not in index.classes or index.is_library(base))


def _parameter_root(source: str | None, fn: FunctionInfo) -> str | None:
    """``sql`` / ``self.sql`` / ``query.text``: the parameter an expression starts from."""
    if not source:
        return None
    root = _ROOT.match(source)
    name = root.group(1) if root else ""
    return name if name in fn.params and name not in ("self", "cls") else None


def _bound_literals(call: CallInfo, callee: FunctionInfo, params: set[str]) -> list[str]:
    """String literals the call passes for ``params`` of ``callee``."""
    real = [p for p in callee.params if p not in ("self", "cls")]
    texts = [
        v for i, v in enumerate(call.args) if i < len(real) and real[i] in params and _is_text(v)
    ]
    texts += [v for k, v in call.kwargs.items() if k in params and _is_text(v)]
    return [str(t) for t in texts]


def _is_text(value: object) -> bool:
    return isinstance(value, str) and value != "<expr>"


_PK_KWARG = re.compile(r"^(pk|id|\w+_ptr(_id)?)$")


def _fresh_instance(call: CallInfo, fn: FunctionInfo) -> str | None:
    """``obj = Model(...); obj.save()`` / ``Model(...).save()`` without a primary key:
    the constructor call's name (``Model(...)``), else None."""
    if not call.target.endswith(".save") or call.receiver != ReceiverKind.INSTANCE:
        return None
    receiver = call.receiver_source.split("(", 1)[0]
    if receiver in fn.params or receiver in ("self", "cls"):
        return None
    if call.receiver_loaded:
        # a row the ORM loaded: an UPDATE, whatever other instance of its class the job
        # builds (``old = Model(...)`` beside ``obj, _ = get_or_create(...)``)
        return None
    cls = call.target.rsplit(".", 1)[0]
    # The constructor that made this very receiver when the extractor knows it
    # (``obj = Model(...)``, ``Model(...).save()``: ``receiver_made_at``); else any earlier one
    # of its class (a name bound in branches, ``self.instance = Model()``): maybe new.
    made = call.receiver_made_at
    for ctor in fn.calls:
        if ctor.target != cls or ctor.span.line > call.span.line:
            continue
        if made and ctor.span.line != made:
            continue
        if ctor.args or any(_PK_KWARG.match(k) for k in ctor.kwargs) or _spread_key(ctor):
            return None  # a primary key from the inputs: a retry updates the same row
        return f"{cls.rsplit('.', 1)[-1]}(...)"
    return None


def _spread_key(ctor: CallInfo) -> bool:
    """``Model(**kw)`` may pass a primary key: unless ``kw`` is a dict literal of the
    function whose keys (``spread_keys``) name none (``Contact(**{"name": n})``)."""
    if "**" not in ctor.kwarg_sources:
        return False
    keys = ctor.spread_keys
    return keys is None or any(_PK_KWARG.match(k) for k in keys)


def _made_by(cls: str, helper: str) -> str:
    """``Change(...) from to_change()``: how a new instance was made, for the evidence."""
    return f"{cls.rsplit('.', 1)[-1]}(...) from {helper.rsplit('.', 1)[-1]}()"


def _insert(effect: Effect, call: CallInfo, ctor: str) -> Effect:
    detail = (
        f"{call.receiver_source}.save() on a new {ctor} without a primary key inserts a row: "
        "a retry inserts another"
    )
    return _with(effect, kind=EffectKind.DB_INSERT, detail=detail)


def _saved_after(fn: FunctionInfo, receiver: str, fact: Fact) -> bool:
    """``receiver.save()`` later in the body: then the save carries the increment."""
    return any(
        c.target.endswith(".save")
        and c.receiver_source == receiver
        and c.span.line >= fact.span.line
        for c in fn.calls
    )


def _in_memory(fact: Fact, fn: FunctionInfo, path: str) -> Found:
    # Not persisted, so not a retry risk; but once the job runs in a worker, the
    # web process no longer sees the change: worth a line of evidence.
    detail = (
        "changes in-memory state: not persisted, and a worker process would change its own copy"
    )
    effect = _effect(EffectKind.DYNAMIC_CALL, path, fact.span, _short(fact.text), fn, detail)
    return Found(effect, exact=False, note=True)


def _collected(holder: str, call: CallInfo, fn: FunctionInfo, path: str) -> Found:
    detail = (
        f"adds to {_short(holder, 40)}, a collection that outlives the job (read or shipped "
        "later): a retry adds another item"
    )
    api = _short(f"{holder}.{call.target.rsplit('.', 1)[-1]}")
    return Found(_effect(EffectKind.CACHE_INCR, path, call.span, api, fn, detail), exact=False)


def _short(text: str, limit: int = 80) -> str:
    """Source text as one line, fit for an evidence message."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


def augassign_parts(fact: Fact) -> tuple[str, str]:
    """``order.total += x`` -> (``order``, ``total``)."""
    for text in (fact.target, fact.text):
        found = _AUGASSIGN.match(text)
        if found:
            return found.group(1), found.group(2)
    return "", fact.target


def _matched(found: CallMatch, call: CallInfo, fn: FunctionInfo, path: str) -> Found:
    keyed, minted = key_status(call, found, fn)
    detail = key_detail(call, found.keyed_by, keyed, minted) or found.detail
    effect = _effect(found.kind, path, call.span, found.api, fn, detail)
    effect = effect.model_copy(update={"keyed": keyed})
    return Found(
        effect,
        exact=found.exact,
        keyed_by=found.keyed_by,
        minted_key=minted,
        receiver=call.receiver_source,
        natural_key=natural_key(call, fn) if found.kind == EffectKind.DB_INSERT else None,
    )


def _effect(
    kind: EffectKind, path: str, span: Span, api: str, fn: FunctionInfo, detail: str
) -> Effect:
    return Effect(
        kind=kind, location=location(path, span), api=api, chain=[fn.qualname], detail=detail
    )


def _backoff(found: Found, call: CallInfo) -> Found:
    """``except OperationalError: await asyncio.sleep(delay); continue``: a sleep written in
    an ``except`` handler is a retry's back-off. It runs only when the work before it
    raised, so the call that reaches it does no slow work on its normal path; the effect
    stays in the evidence (a sleep is harmless on retry), marked."""
    if found.effect.kind is not EffectKind.SLEEP or not call.failure_path:
        return found
    detail = "a back-off: written in an except handler, it runs only when the work before it failed"
    return replace(found, effect=_with(found.effect, detail=detail), backoff=True)


def _sql_before(fn: FunctionInfo, line: int) -> str | None:
    """The SQL literal closest above a call: ``sql = "UPDATE ..."; cur.execute(sql)``."""
    texts = [f for f in fn.facts if f.kind == FactKind.SQL_LITERAL and f.span.line <= line]
    return max(texts, key=lambda f: f.span.line).text if texts else None


def _post_process(traces: list[Found], fn: FunctionInfo) -> list[Found]:
    bumped = _bumped_receivers(fn)
    kinds = {t.effect.kind for t in traces}
    persisting = bool(kinds & _PERSISTING)
    new_rows = bool(kinds & _NEW_ROWS)
    sleeps = [t.effect.location for t in traces if t.effect.kind == EffectKind.SLEEP]
    return [_refine(t, bumped, persisting and not _jitter(t, sleeps), new_rows) for t in traces]


def _jitter(trace: Found, sleeps: list[Location]) -> bool:
    """A random value written inside a sleep's arguments (``time.sleep(0.5 +
    random.random())``, ``await asyncio.sleep(random.uniform(1, 3))``): a back-off's
    jitter, which decides when the function goes on and is stored nowhere."""
    if trace.effect.kind != EffectKind.RANDOM_ID:
        return False
    at = trace.effect.location
    return any(_inside(at, sleep) for sleep in sleeps if sleep.path == at.path)


def _inside(inner: Location, outer: Location) -> bool:
    """``inner`` lies within ``outer`` (both spans of one file), and is not ``outer`` itself."""
    last = float("inf")  # a span without an end column reaches to the end of its line
    end = (outer.end_line or outer.line, last if outer.end_column is None else outer.end_column)
    inner_end = (inner.end_line or inner.line, inner.end_column or 0)
    starts_after = (inner.line, inner.column) > (outer.line, outer.column)
    return starts_after and inner_end <= end


def repeats_on_retry(found: Found) -> bool:
    """What a dedup guard can cover: an unkeyed repeat, a stored random id, or an opaque
    call (a stored callback...): when the guard holds, a repeat never reaches it."""
    effect = found.effect
    stored = effect.kind == EffectKind.RANDOM_ID and found.stored
    opaque = effect.kind in OPAQUE and not (found.gap or found.note)
    return (effect.kind in REPEATS or stored or opaque) and not effect.keyed


def _guarded(traces: list[Found], fn: FunctionInfo, guards: list[Guard]) -> list[Found]:
    """Repeats the body makes after one of its own dedup guards."""
    if not guards:
        return traces
    calls = {c.span.line: c for c in fn.calls}
    marked = []
    for trace in traces:
        effect = trace.effect
        line = effect.location.line
        if repeats_on_retry(trace) and trace.guard is None:
            call = calls.get(line)
            guard = covering(guards, line, inserted_model(call) if call else None)
            trace = replace(trace, guard=guard.what) if guard else trace
        marked.append(trace)
    return marked


_UPDATES = frozenset({"update", "aupdate"})
_WRITES = frozenset({EffectKind.DB_OVERWRITE, EffectKind.DB_INCREMENT})


def _updates_from_columns(matched: Found, call: CallInfo, fn: FunctionInfo) -> bool:
    """``qs.update(n=F("n") + 1)``, ``update(n=Col("n") - 1)`` after ``import F as Col``:
    an F() call among the arguments of a catalogued ``update``. Any F() there counts (a
    bare ``F("b")`` copy is no increment, but ``update(a=F("b"), b=...)`` is not
    idempotent either, and one argument cannot tell)."""
    if matched.effect.kind not in _WRITES or call.target.rpartition(".")[2] not in _UPDATES:
        return False
    if not (call.kwargs or call.args):
        return False
    start, end = _start(call.span), _end(call.span)
    chain = [
        c for c in fn.calls if c is not call and _start(c.span) == start and _end(c.span) < end
    ]
    return any(
        _is_f(c)
        and start <= _start(c.span)
        and _end(c.span) <= end
        and not any(
            _start(r.span) <= _start(c.span) and _end(c.span) <= _end(r.span) for r in chain
        )
        for c in fn.calls
    )


def _is_f(call: CallInfo) -> bool:
    """A call of Django's ``F`` however imported (or of anything named ``F`` the scan cannot
    resolve: when in doubt, an expression of stored values)."""
    if call.receiver in (ReceiverKind.SELF, ReceiverKind.INSTANCE):
        return False
    return call.target.rpartition(".")[2] == "F"


def _start(span: Span) -> tuple[int, int]:
    return span.line, span.column


def _end(span: Span) -> tuple[int, float]:
    """Where a span ends; a span without an end reaches to the end of its last line."""
    if span.end_line is None:
        return span.line, float("inf")
    return span.end_line, float("inf") if span.end_column is None else span.end_column


def _bumped_receivers(fn: FunctionInfo) -> dict[str, Fact]:
    """Receivers of ``obj.attr += n`` (or ``obj.attr = F("attr") + n``) and the first such
    statement."""
    bumped: dict[str, Fact] = {}
    for fact in fn.facts:
        if fact.kind == FactKind.AUGASSIGN_ATTR:
            receiver, _ = augassign_parts(fact)
            first = bumped.get(receiver)
            if first is None or fact.span.line < first.span.line:
                bumped[receiver] = fact
    return bumped


def _from_columns(fact: Fact) -> bool:
    """An AUGASSIGN_ATTR fact that is ``obj.n = F("n") - 1`` (an expression the database
    computes from the stored row), not ``obj.n += 1`` / ``obj.n = obj.n + 1``: the extractor
    records both; only the latter reads the field it writes."""
    found = re.match(rf"\s*{re.escape(fact.target)}\s*=(?!=)(.*)", fact.text, re.DOTALL)
    if found is None:
        return False
    return re.search(rf"{re.escape(fact.target)}(?!\w)", found.group(1)) is None


def _bump_detail(receiver: str, fact: Fact) -> str:
    if _from_columns(fact):
        return (
            f"{fact.target} is set to an F() expression of stored values then saved: "
            "the database recomputes it from the row, so a retry applies it again"
        )
    return f"{receiver} is incremented in memory (+=) then saved: a retry adds twice"


def _refine(trace: Found, bumped: dict[str, Fact], persisting: bool, new_rows: bool) -> Found:
    effect = trace.effect
    if effect.kind == EffectKind.RANDOM_ID and _TIME.search(effect.api) and not new_rows:
        # ``updated_at = now(); save()``: an overwrite with a later time converges.
        detail = "a time value: overwriting an existing row with it converges on a retry"
        return replace(trace, effect=_with(effect, detail=detail))
    if effect.kind == EffectKind.RANDOM_ID and persisting:
        return replace(
            trace, stored=True, effect=_with(effect, detail="random or time-based value stored")
        )
    if effect.kind == EffectKind.DB_OVERWRITE and effect.api.endswith(".save"):
        receiver = trace.receiver
        bump = bumped.get(receiver)
        if bump is not None and bump.span.line <= effect.location.line:
            detail = _bump_detail(receiver, bump)
            return replace(trace, effect=_with(effect, kind=EffectKind.DB_INCREMENT, detail=detail))
    return trace


def _with(effect: Effect, **changes: object) -> Effect:
    return effect.model_copy(update=changes)
