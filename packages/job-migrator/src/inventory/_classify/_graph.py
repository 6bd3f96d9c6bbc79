"""The call graph: each call of a function resolved to a project function or a library name.

Built lazily, one function at a time, and memoised: only functions reachable
from job sites and request handlers are ever looked at.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from itertools import pairwise

from inventory._classify._admin import ADMIN_DEFAULTS, DEFAULT_HOOKS
from inventory._classify._dispatch import (
    SelfDispatch,
    callbacks,
    declared_receiver,
    empty_method,
    self_class,
    site_lines,
)
from inventory._classify._guesses import (
    guessed_callees,
    overrides_of_abstract,
    too_many_overrides,
)
from inventory._classify._index import (
    CALLABLE,
    FIELD_VALUES,
    MANAGER,
    MEMO_METHODS,
    ONE_OF,
    TABLE,
    Resolved,
    SymbolIndex,
    SymbolKind,
    union_members,
)
from inventory._classify._spawned import spawned
from inventory._classify._target import CallTarget
from inventory._classify._tasks import enqueued_by_call, immediate_task
from inventory._extract._library import (
    SESSION,
    SESSION_RESULTS,
    SESSION_TYPES,
    known_type,
    library_type,
)
from inventory._extract.detectors._sites_signals import DEFAULT_NAMESPACE, NAMED
from inventory.models import Pattern
from inventory.summary import (
    CallInfo,
    Fact,
    FactKind,
    FunctionInfo,
    ReceiverKind,
)

_UNKNOWN_PREFIX = "?."
_EVER = 1 << 30  # a column past any line's end
# A receiver named like a database session (``session``, ``db_session``, ``self.session``):
# the name the catalogue's ``?.execute`` / ``?.add`` rules read as a SQLAlchemy session.
_SESSION_NAMED = re.compile(r"(?i)(^|[._])(async_)?session$")
_LOADED = "__model__."  # the extractor's name for a model looked up at run time
_SELF_PREFIX = "self."
# Django's Signal.send / send_robust / asend / asend_robust and blinker's send /
# send_async: each runs the receivers connected to the signal, in the caller.
SENDS = frozenset({"send", "send_robust", "asend", "asend_robust", "send_async"})
# Django's and blinker's dispatch methods themselves. The call graph gives a send the
# project's receivers of its signal as callees (``_signal_receivers``); a send that reaches
# one of these has none here, and the body (a loop over whatever is connected at run time)
# says nothing more: it is a gap of its own (``_effects``), not followed.
# ``signal("done").send()`` as the scan names its target's head, and the name it gives.
_NAMED_FACTORIES = frozenset(f"{f}()" for f in DEFAULT_NAMESPACE)
_SIGNAL_LITERAL = re.compile(r"""^\s*(?:[\w.]+\.)?signal\(\s*(['"])(.*?)\1\s*\)\s*$""")
SIGNAL_DISPATCH = frozenset(
    {f"django.dispatch.dispatcher.Signal.{m}" for m in ("send", "send_robust", "asend")}
    | {"django.dispatch.dispatcher.Signal.asend_robust"}
    | {f"blinker.base.Signal.{m}" for m in ("send", "send_async")}
)
# What Django's model methods send, with the model's class as sender (its documentation of
# django.db.models.signals): save() pre_save and post_save, delete() pre_delete and
# post_delete; a manager's create() (and get_or_create / update_or_create, which may
# create) saves the new row.
_SIGNALS = "django.db.models.signals."
_SAVED = (f"{_SIGNALS}pre_save", f"{_SIGNALS}post_save")
_DELETED = (f"{_SIGNALS}pre_delete", f"{_SIGNALS}post_delete")
_MODEL_SENDS = {"save": _SAVED, "asave": _SAVED, "delete": _DELETED, "adelete": _DELETED}
_CREATES = frozenset(
    {"create", "acreate", "get_or_create", "aget_or_create", "update_or_create"}
    | {"aupdate_or_create"}
)
# What ``_saved_model`` reads: the model a call saves, the signals sent, and whether the
# framework calls the model's save() inside the call.
_Saved = tuple[str, tuple[str, ...], bool]
_SAVING = _CREATES | _MODEL_SENDS.keys() | {"save"}
_TABLE = "table "
_NAMED = "getattr "  # the extractor's ``values._facts.NAMED``
_LOOKUP = "lookup "  # ``fn = TABLE.get(k); fn()`` (``values._facts.LOOKUP``)
_PARTIAL = "partial "  # ``partial(f, x)()`` (``values._facts.PARTIAL``)
# What a statement runs of the object a call made (the data model): ``with``, ``for``.
_PROTOCOLS = {
    "with": ("__enter__", "__exit__"),
    "async with": ("__aenter__", "__aexit__"),
    "for": ("__iter__", "__next__"),
    "async for": ("__aiter__", "__anext__"),
}
# What a generated ``__init__`` calls after setting the fields (dataclasses, attrs, pydantic).
_POST_INIT = ("__post_init__", "__attrs_post_init__", "model_post_init")
# Declared classes whose instances' attributes say nothing of what they are: a module
# (``async_import_module(...) -> ModuleType``: ``mod.get_info`` is the module's function), a
# namespace (``-> SimpleNamespace``) or ``object``: what is called on such a value stays a
# call on a receiver of unknown type.
_OPAQUE = ("types.ModuleType.", "types.SimpleNamespace.", "builtins.object.")


def dispatch_table(fact: Fact) -> list[str] | None:
    """The functions a call through a literal table can run (``table NAME: a b``), else None."""
    if fact.kind != FactKind.DYNAMIC_DISPATCH or not fact.target.startswith(_TABLE):
        return None
    _, _, values = fact.target.partition(":")
    return values.split()


_SUPER = "super()"  # the receiver of ``super().m()`` as written
_SUPER_CHAIN = 8  # cooperative overrides followed along one order, at most


def _super_calls(fn: FunctionInfo) -> frozenset[str]:
    """The methods ``fn`` calls as ``super().method(...)``."""
    return frozenset(c.target.rpartition(".")[2] for c in fn.calls if c.receiver_source == _SUPER)


# Decorators that make a method an attribute: reading it runs the method.
_PROPERTIES = frozenset(
    {
        "property",
        "functools.cached_property",
        "cached_property",
        "django.utils.functional.cached_property",
    }
)


class CallGraph:
    def __init__(
        self,
        index: SymbolIndex,
        catalogued: frozenset[str] = frozenset(),
        explained: Callable[[CallInfo, str], bool] | None = None,
    ) -> None:
        self.index = index
        # Does the catalogue say what a call does (an effect, or pure)? Then a library's
        # source is not read for it: the entry speaks for it.
        self.explained = explained or (lambda _call, _name: False)
        # Project functions named by an exact catalogue entry: the entry speaks for them
        # (a user declaring what an in-house client does), so their bodies are not followed.
        self.catalogued = catalogued
        self._targets: dict[str, list[CallTarget]] = {}
        self._site_edges: dict[str, list[str]] = {}
        self._called: dict[str, frozenset[str]] = {}
        self._besides: dict[str, frozenset[str]] = {}
        self._queued: dict[str, str | None] = {}  # function -> its call's enqueue, if any
        # function -> parameter -> project class, from ``connect(f, sender=Page)``: ``instance``
        # of a model signal receiver is a Page. None when two senders disagree.
        self._param_types: dict[str, dict[str, str | None]] = {}
        # function -> parameter -> class every project call passes (``_arguments``); a
        # sender's type above wins over it
        self._inferred: dict[str, dict[str, str]] = {}
        self._callables: dict[str, dict[str, str]] = {}
        # caller -> the functions it hands a parameter that holds one of several; the
        # functions some site starts (``_arguments._owners``)
        self._handed: dict[str, list[str]] = {}
        self._started: frozenset[str] = frozenset()
        self.dispatch = SelfDispatch(index)
        self._site_lines: dict[str, set[int]] | None = None  # function -> its sites' lines
        # signal -> its project receivers, each with its sender filter ("" none, "?" unknown)
        self._receivers: dict[str, list[tuple[str, str]]] | None = None
        self._named: dict[str, str] | None = None  # FileSummary.named_signals, all modules
        self._admin_objects: dict[str, list[str]] = {}  # ModelAdmin hook -> its obj models
        self._supers: dict[str, frozenset[str]] = {}  # function -> methods it calls on super()
        self._every_super: frozenset[str] | None = None  # methods called on super() anywhere

    def library_gap(self, top_level: str) -> str | None:
        """Why a library's source was not read (for a gap's evidence), None if it was."""
        library = self.index.library
        if library is None:
            return "no environment was read"
        return library.missing(top_level)

    def add_site_edge(self, enclosing: str, job: str) -> None:
        """Work started in-process by ``enclosing`` (a thread, a task...) is part of what it does."""
        self._site_edges.setdefault(enclosing, []).append(job)

    def set_admin_objects(self, hooks: dict[str, list[str]]) -> None:
        """The models a ``ModelAdmin`` hook's ``obj`` may be (``_admin.admin_hooks``): typed
        as the one model where there is one; Django's default hook runs each one's method."""
        self._admin_objects = hooks
        for function, models in hooks.items():
            if len(models) == 1:
                self.type_parameter(function, "obj", models[0])

    def type_parameter(self, function: str, param: str, cls: str) -> None:
        types = self._param_types.setdefault(function, {})
        types[param] = cls if types.get(param, cls) == cls else None

    def declared_types(self) -> dict[str, dict[str, str]]:
        """The parameters typed by how the function is registered (a receiver's ``instance``
        by its sender, a ModelAdmin hook's ``obj`` by its model, a receiver's keywords by
        its signal's sends), those of one class only."""
        found = {
            f: {p: c for p, c in params.items() if c is not None}
            for f, params in self._param_types.items()
        }
        return {f: params for f, params in found.items() if params}

    def set_inferred(self, types: dict[str, dict[str, str]]) -> None:
        """Parameter types read from the callers (``_arguments.caller_types``); what was
        resolved with the previous ones is forgotten. A parameter handed a function
        (``CALLABLE`` + its name) is kept apart: it holds a callable, not an instance."""
        self._inferred = {
            f: {p: c for p, c in params.items() if not c.startswith(CALLABLE)}
            for f, params in types.items()
        }
        self._callables = {
            f: {p: c.removeprefix(CALLABLE) for p, c in params.items() if c.startswith(CALLABLE)}
            for f, params in types.items()
        }
        self._targets.clear()
        self._called.clear()

    def passed_callable(self, function: str, param: str) -> str | None:
        """The project function every project call hands ``function``'s ``param``."""
        found = self._callables.get(function, {}).get(param)
        return found if found is not None and ONE_OF not in found else None

    def set_handed(self, owners: dict[str, list[str]], started: frozenset[str]) -> None:
        """What each caller hands a parameter holding one of several functions (each is
        the caller's call), and the functions a site starts (a job run with any of them)."""
        self._handed = owners
        self._started = started
        self._targets.clear()
        self._called.clear()

    def handed_by_callers(self, qualname: str, fact: Fact) -> bool:
        """``cb(x)`` on a parameter whose callers each hand a named project function, and
        that no site starts: each caller runs its own (``set_handed``), so nothing here is
        left unknown and no edge is drawn (no caller borrows another's function)."""
        param = fact.called_parameter()
        if param is None:
            return False
        passed = self.passed_callables(qualname, param)
        return len(passed) > 1 and qualname not in self._started

    def passed_callables(self, function: str, param: str) -> list[str]:
        """The project functions the project's calls hand ``function``'s ``param``, each
        call one of them; [] when a call hands anything else (``_arguments``)."""
        found = self._callables.get(function, {}).get(param)
        return found.split(ONE_OF) if found else []

    def _held_callable(self, call: CallInfo, caller: FunctionInfo | None) -> str | None:
        """``self._callback(x)`` where ``__init__`` did ``self._callback = callback`` and
        every construction hands ``callback`` the same project function: that function."""
        if caller is None or caller.class_name is None or call.receiver is not ReceiverKind.SELF:
            return None
        owner, _, attr = call.target.rpartition(".")
        if self.index.method(owner, attr) is not None:
            return None  # a method of the class: called as one
        holder = self._holder(owner, attr)
        return self.passed_callable(*holder) if holder else None

    def parameter_type(self, function: str, param: str) -> str | None:
        """The class a parameter holds: the sender's for a receiver's ``instance``, else
        the one every project call passes; None when neither is known."""
        declared = self._param_types.get(function, {})
        if param in declared:
            return declared[param]
        return self._inferred.get(function, {}).get(param)

    def called(self, qualname: str) -> frozenset[str]:
        """The project functions ``qualname`` calls (call edges only, no site edges)."""
        found = self._called.get(qualname)
        if found is None:
            called = [t.function for t in self.targets(qualname) if t.function]
            guessed = guessed_callees(self.index, self.targets(qualname), self.explained)
            guessed += overrides_of_abstract(self.index, qualname)
            fn = self.index.functions.get(qualname)
            handed = (
                callbacks(self.index, fn, self._calls_followed(qualname), self.sites_in(qualname))
                if fn
                else []
            )
            entered = [
                m for t in self.targets(qualname) for m in (*self._entered(t), *self._post_init(t))
            ]
            besides = frozenset(
                [
                    *self.dispatched(qualname),
                    *guessed,
                    *handed,
                    *entered,
                    *self._handed.get(qualname, ()),
                ]
            )
            self._besides[qualname] = besides
            found = self._called[qualname] = besides.union(called)
        return found

    def besides_calls(self, qualname: str) -> frozenset[str]:
        """The functions ``qualname`` reaches by an edge other than a call it writes of
        them: a table's dispatch, a guessed override, a callback it hands on, a protocol
        method, a site (thread, executor, receiver), work a library starts."""
        self.called(qualname)
        started = [*self._site_edges.get(qualname, []), *self._library_starts(qualname)]
        return self._besides[qualname].union(started)

    def _entered(self, target: CallTarget) -> list[str]:
        """``with Audit(order):`` runs ``Audit.__enter__`` and ``Audit.__exit__`` (``async
        with``: ``__aenter__`` and ``__aexit__``; ``for entry in Feed(url)``: ``__iter__``
        and ``__next__``), inherited ones included, when the call builds a project class; a
        library's context manager or iterator is the catalogue's matter."""
        names = _PROTOCOLS.get(target.call.entered, ())
        if not names or target.kind != SymbolKind.CLASS:
            return []
        if not self.index.in_project(target.name) or self.index.is_library(target.name):
            return []
        found = [self.index.resolve(f"{target.name}.{name}") for name in names]
        return [
            r.name
            for r in found
            if r.kind == SymbolKind.FUNCTION and not self.index.is_library(r.name)
        ]

    def _post_init(self, target: CallTarget) -> list[str]:
        """``Receipt(order_id)`` of a project dataclass: the ``__init__`` dataclasses write
        calls ``__post_init__`` (attrs: ``__attrs_post_init__``, pydantic:
        ``model_post_init``), when the project writes no ``__init__`` of its own."""
        if target.kind != SymbolKind.CLASS or target.function is not None:
            return []
        if not self.index.in_project(target.name) or self.index.is_library(target.name):
            return []
        found = [self.index.method(target.name, hook) for hook in _POST_INIT]
        return [f for f in found if f is not None and not self.index.is_library(f)]

    def sites_in(self, qualname: str) -> set[int]:
        """The lines of the job sites written in ``qualname``."""
        if self._site_lines is None:
            found = (s for summary in self.index.modules.values() for s in summary.sites)
            self._site_lines = site_lines(list(found))
        return self._site_lines.get(qualname, set())

    def _calls_followed(self, qualname: str) -> list[tuple[CallTarget, bool]]:
        """Each call of ``qualname``, and whether it runs project code (a function, or a
        project class's construction) that the graph follows."""
        return [
            (
                t,
                t.function is not None
                or (
                    t.kind in (SymbolKind.FUNCTION, SymbolKind.CLASS)
                    and self.index.in_project(t.name)
                ),
            )
            for t in self.targets(qualname)
        ]

    def crosses_site_edge(self, chain: tuple[str, ...]) -> bool:
        """A call path with a step that is work started in the background, not a call."""
        return any(b not in self.called(a) for a, b in pairwise(chain))

    def targets(self, qualname: str) -> list[CallTarget]:
        if qualname not in self._targets:
            fn = self.index.functions.get(qualname)
            calls = fn.calls if fn and qualname not in SIGNAL_DISPATCH else []
            self._targets[qualname] = [t for c in calls for t in self._each_member(c, fn)]
        return self._targets[qualname]

    def _each_member(self, call: CallInfo, caller: FunctionInfo | None) -> list[CallTarget]:
        """``parent.get_url_path()`` with ``parent = self.category or self.project``: the
        receiver is one of a few classes (``union_members``), and the call runs the method
        of one of them: one target per member, each resolved as for a single type. So is
        an object stored on the app by several classes (``SymbolIndex.app_object``)."""
        name = self._through_attribute(call, caller) or call.target
        receivers = self._signal_receivers(call, caller)
        if receivers is not None:
            return receivers
        # ``current_app.extensions["x"].send()`` with two classes registering "x": each.
        members = union_members(self.index.app_object(name) or name)
        if members is None:
            looked_up = self._table_members(call)
            if looked_up is not None:
                return looked_up
            found = self._overridden(self.resolve_call(call, caller), caller)
            found += self._cooperative(call, found)
            found += self._admin_default(call, caller, found)
            saved = self._saved_model(call, caller)
            if saved is None:
                return found
            return found + self._model_signal_receivers(call, saved) + self._saved(call, saved)
        update = {"receiver": ReceiverKind.INSTANCE}
        return [
            self.resolve_call(call.model_copy(update={**update, "target": m}), None)
            for m in members
        ]

    def _signal_receivers(
        self, call: CallInfo, caller: FunctionInfo | None
    ) -> list[CallTarget] | None:
        """``order_paid.send(sender=..., order=o)``: Django (and blinker) run every receiver
        connected to the signal then and there, so each project receiver of it is a callee
        of the call. None when the call sends no signal the project has receivers for (a
        signal whose receivers live elsewhere stays what it was)."""
        sent = self.sent(call, caller)
        if sent is None:
            return None
        _, run = sent
        return [
            CallTarget(
                call,
                r,
                SymbolKind.FUNCTION,
                self._runs(Resolved(SymbolKind.FUNCTION, r)),
                run_inside=True,  # the receiver runs inside the send, which is not its call
            )
            for r in run
        ]

    def sent(self, call: CallInfo, caller: FunctionInfo | None) -> tuple[str, list[str]] | None:
        """The signal ``call`` sends (``_signal_key``) and the project receivers it runs, or
        None when it is no send of a signal the project has receivers for (for this sender)."""
        head, _, method = call.target.rpartition(".")
        if method not in SENDS or not head:
            return None
        named = self._named_send(call, head, caller)
        if named is not None:
            head = named
        elif head == "?" or head.startswith(_UNKNOWN_PREFIX):
            # ``user_registered.send(...)`` on a module's ``ns.signal("...")`` (a value of
            # no known type): the module-level name as written.
            in_module = self._in_module(call.receiver_source, caller)
            if in_module is None:
                return None
            head = in_module
        key = self._signal_key(head)
        found = self.receivers().get(key)
        if not found:
            return None
        sent_by = self._sent_by(call, caller)
        run = sorted({r for r, sender in found if sent_by is None or sender in ("", "?", sent_by)})
        if not run:
            return None  # receivers for other senders only: as a signal nobody here receives
        return key, run

    def _sent_by(self, call: CallInfo, caller: FunctionInfo | None) -> str | None:
        """The project class a send names as ``sender=`` (``sender=Ticket``): a receiver
        connected for another sender is not run. None when it names none the scan knows."""
        written = self._in_module(call.kwarg_sources.get("sender", ""), caller)
        found = self.index.resolve(written) if written is not None else None
        return found.name if found is not None and found.kind == SymbolKind.CLASS else None

    def _in_module(self, written: str, caller: FunctionInfo | None) -> str | None:
        """A dotted name as written in ``caller``, as its module sees it (``Note`` ->
        ``shop.jobs.Note``, which the index resolves through the imports); None for
        anything else (a call, a subscript)."""
        summary = self.index.home.get(caller.qualname) if caller is not None else None
        if summary is None or not written.replace(".", "").isidentifier():
            return None
        return f"{summary.module}.{written}"

    def receivers(self) -> dict[str, list[tuple[str, str]]]:
        """Each signal the project connects receivers to -> those receivers (functions),
        each with the class its ``sender=`` names ("" for none, "?" for one not named)."""
        if self._receivers is None:
            found: dict[str, set[tuple[str, str]]] = {}
            # a copy: resolving a target may read a library module into the index
            for summary in list(self.index.modules.values()):
                for site in summary.sites:
                    if site.pattern is not Pattern.SIGNAL_RECEIVER or not site.target:
                        continue
                    job = self.index.resolve(site.target)
                    if job.kind != SymbolKind.FUNCTION:
                        continue
                    sender = site.sender
                    if sender not in ("", "?"):
                        sender = self.index.resolve(sender).name
                    for signal in site.signals:
                        found.setdefault(self._signal_key(signal), set()).add((job.name, sender))
            self._receivers = {k: sorted(v) for k, v in found.items()}
        return self._receivers

    def _model_signal_receivers(self, call: CallInfo, saved: _Saved) -> list[CallTarget]:
        """``order.save()``, ``order.delete()``, ``Order.objects.create(...)``,
        ``OrderForm(...).save()`` on a project model (``saved``): the project's receivers of
        the signals Django sends then, for that model (``sender=Order``) or for every
        sender, run in the call too."""
        if not self.receivers():
            return []
        model, signals, _ = saved
        found: list[CallTarget] = []
        for signal in signals:
            for receiver, sender in self.receivers().get(signal, []):
                if sender in ("", "?", model):
                    runs = self._runs(Resolved(SymbolKind.FUNCTION, receiver))
                    target = CallTarget(call, receiver, SymbolKind.FUNCTION, runs, run_inside=True)
                    found.append(target)
        return found

    def _saved(self, call: CallInfo, saved: _Saved) -> list[CallTarget]:
        """A call that saves a project model by calling its ``save()`` from the framework's
        own code, when the model's class (or a project base) overrides ``save``: the
        override runs in the call. Django documents both: ``QuerySet.create`` builds the
        instance and saves it "all in one step" (``get_or_create`` creates through it,
        ``update_or_create`` saves the row it finds or makes), and a ``ModelForm``'s
        ``save()`` saves ``self.instance`` unless ``commit=False``. ``bulk_create`` calls no
        ``save()`` (documented too) and stays the insert."""
        if not saved[2]:
            return []  # ``order.save()`` itself: the call resolves to the override already
        for owner in self.index.mro(saved[0]):
            info = self.index.classes.get(owner)
            if info is None or self.index.is_library(owner):
                return []  # Django's own Model.save: the call's catalogued write says it
            if "save" in info.methods:
                save = Resolved(SymbolKind.FUNCTION, f"{owner}.save")
                runs = self._runs(save)
                return [CallTarget(call, save.name, SymbolKind.FUNCTION, runs, run_inside=True)]
        return []

    def _saved_model(self, call: CallInfo, caller: FunctionInfo | None) -> _Saved | None:
        """The project model a call saves or deletes, the signals Django sends then, and
        whether the framework calls the model's ``save()`` inside the call (a manager's
        create, a ModelForm's save) rather than the call being the model's own method."""
        if call.target.rpartition(".")[2] not in _SAVING:
            return None  # typing the receiver keeps the method: no other call saves a model
        name = (
            self._through_attribute(call, caller)
            or self._typed_parameter(call, caller)
            or self._on_returned_class(call)
            or call.target
        )
        head, _, method = name.rpartition(".")
        inside = False
        if method in _CREATES and head.endswith(MANAGER):
            head, signals, inside = head.removesuffix(MANAGER), _SAVED, True
        elif method == "save" and (form := self._form_model(head, call, caller)) is not None:
            head, signals, inside = form, _SAVED, True
        elif method in _MODEL_SENDS:
            signals = _MODEL_SENDS[method]
        else:
            return None
        if not head or head.startswith(_UNKNOWN_PREFIX):
            return None
        model = self.index.resolve(head)
        if model.kind != SymbolKind.CLASS or not self.index.is_model(model.name):
            return None
        return model.name, signals, inside

    def _form_model(self, head: str, call: CallInfo, caller: FunctionInfo | None) -> str | None:
        """``form.save()`` on a project ``ModelForm`` that inherits Django's ``save``, or
        ``super().save()`` in a project form's own ``save`` that reaches Django's: its
        ``Meta.model``. None for ``save(commit=False)`` (nothing is saved), a form whose
        project classes define ``save`` (that override is what runs), or any other class."""
        if call.kwargs.get("commit") is False or (call.args and call.args[0] is False):
            return None
        library = self.index.is_library(head) or head not in self.index.classes
        if (
            call.receiver_source == "super()"
            and caller is not None
            and caller.is_method
            and library
        ):
            return self.index.meta_model(caller.qualname.rpartition(".")[0])
        found = self.index.resolve(head) if head else None
        if found is None or found.kind != SymbolKind.CLASS or self.index.is_library(found.name):
            return None
        for owner in self.index.mro(found.name):
            info = self.index.classes.get(owner)
            if info is None or self.index.is_library(owner):
                return None
            if "save" in info.methods:
                return None
            if info.form_model:
                return info.form_model
        return None

    def _on_returned_class(self, call: CallInfo) -> str | None:
        """``article = form.save(commit=False); article.save()``: the call on the class a
        project class's method returns (``SymbolIndex.returned_class``: a ModelForm's
        ``save`` returns its model's instance), for a receiver otherwise untyped."""
        made = call.returned_from
        if not call.target.startswith(_UNKNOWN_PREFIX) or not made.endswith("()"):
            return None
        owner, _, method = made[:-2].rpartition(".")
        if "()" in owner or not owner:
            return None
        cls = self.index.resolve(owner)
        returned = (
            self.index.returned_class(cls.name, method) if cls.kind == SymbolKind.CLASS else None
        )
        return f"{returned}.{call.target.rpartition('.')[2]}" if returned else None

    def _signal_key(self, name: str) -> str:
        """One name per signal object, whichever module it is imported through (re-exports
        followed: ``shop.order_paid`` is ``shop.signals.order_paid``); blinker's named
        signals by their name (``done = signal("done")``: ``NAMED + "done"``)."""
        for _ in range(8):
            module, _, attr = name.rpartition(".")
            summary = self.index.modules.get(module)
            imported = summary.imports.get(attr) if summary is not None else None
            if imported is None or imported == name:
                break
            name = imported
        named = self.named_signals().get(name)
        return NAMED + named if named is not None else name

    def named_signals(self) -> dict[str, str]:
        """Every module's ``FileSummary.named_signals``."""
        if self._named is None:
            self._named = {
                k: v for s in list(self.index.modules.values()) for k, v in s.named_signals.items()
            }
        return self._named

    def _named_send(self, call: CallInfo, head: str, caller: FunctionInfo | None) -> str | None:
        """The signal a send names by blinker's default namespace: ``signal("done").send()``
        written inline, or ``self.sig.send()`` where the class (or a base) set ``self.sig =
        signal("done")``. None for any other send."""
        if head in _NAMED_FACTORIES:
            found = _SIGNAL_LITERAL.search(call.receiver_source)
            return NAMED + found.group(2) if found else None
        source = call.receiver_source
        if caller is None or caller.class_name is None or not source.startswith(_SELF_PREFIX):
            return None
        attr = source.removeprefix(_SELF_PREFIX)
        if not attr.isidentifier():
            return None
        owner = caller.qualname.rpartition(".")[0]
        named = self.named_signals()
        for cls in self.index.mro(owner):
            if f"{cls}.{attr}" in named:
                return NAMED + named[f"{cls}.{attr}"]
        return None

    def _table_members(self, call: CallInfo) -> list[CallTarget] | None:
        """``EXPORTERS[k].export()`` (``EXPORTERS.get(k)``, ``e = EXPORTERS[k]; e.export()``,
        ``EXPORTERS[k]().export()``) on a module-level table: ``export`` of each value (a
        module's function, a class's method, an instance's class's method, or a method of
        what a function value returns). A value whose method cannot be named stays a gap.
        None when the receiver is no table the scan knows."""
        returned = call.returned_from
        called = returned.endswith(f"{TABLE}()")
        if not call.target.startswith(_UNKNOWN_PREFIX) or not (called or returned.endswith(TABLE)):
            return None
        values = self.index.table(returned.removesuffix("()"))
        if values is None:
            return None
        method = call.target[len(_UNKNOWN_PREFIX) :]
        targets: list[CallTarget] = []
        for value in values:
            name = self._on_value(value, method, called)
            if name is None:
                targets.append(CallTarget(call, call.target, SymbolKind.EXTERNAL, None))
                continue
            update = {"receiver": ReceiverKind.INSTANCE, "target": name, "returned_from": ""}
            targets.append(self.resolve_call(call.model_copy(update=update), None))
        return targets

    def _on_value(self, value: str, method: str, called: bool) -> str | None:
        instance = value.endswith("()")
        if not called:
            return f"{value.removesuffix('()')}.{method}" if instance else f"{value}.{method}"
        if instance:
            return None  # an instance called, then a method of what it returned
        is_class = self.index.resolve(value).kind == SymbolKind.CLASS
        return f"{value}.{method}" if is_class else f"{value}().{method}"

    def _overridden(self, target: CallTarget, caller: FunctionInfo | None) -> list[CallTarget]:
        """``self.m()`` in class C, or ``x.m()`` with x declared a C: C's own ``m`` and
        every override below C (``_dispatch``);
        an own ``m`` with no body runs nothing and is left out. Past the cap, one more
        target stands for the overrides not followed (a gap)."""
        on_self = self_class(target.call, caller)
        owner = on_self or self._declared_class(target)
        method = target.call.target.rpartition(".")[2]
        found = self.dispatch.overrides(owner, method) if owner else None
        if found is None:
            return [target]
        own = self.index.functions.get(target.function or "")
        if not on_self and own is not None and too_many_overrides(self.index, own.qualname):
            return [target]  # an empty hook of a plugin registry: a gap (``_guesses``)
        kept = [] if own is not None and empty_method(own) else [target]
        for name in found.followed:
            runs = self._runs(Resolved(SymbolKind.FUNCTION, name))
            kept.append(CallTarget(target.call, name, SymbolKind.FUNCTION, runs))
        if found.more:
            rest = f"{found.owner}.{method}"
            kept.append(CallTarget(target.call, rest, SymbolKind.FUNCTION, None, found.more))
        return kept

    def _cooperative(self, call: CallInfo, found: list[CallTarget]) -> list[CallTarget]:
        """``gallery.save()`` on a ``class Gallery(Displayable, RichText, BaseGallery)``
        runs ``Displayable.save``, whose ``super().save()`` runs the next ``save`` of
        *Gallery's* method resolution order: ``BaseGallery.save``, a class ``Displayable``
        does not inherit from (cooperative ``super()``). Read where the receiver's class is
        known, at the call: each method the call runs that calls ``super().m()`` hands on to
        the next project definition after its class in that order, beside what its own
        ``super()`` resolves to (its class's first base, the same for a plain instance)."""
        owner, _, method = call.target.rpartition(".")
        if method not in self._super_methods() or not owner or method.startswith("__"):
            return []  # the cheap test first: few methods are ever called on super()
        cls = self.index.resolve(owner)
        if cls.kind != SymbolKind.CLASS or cls.name not in self.index.classes:
            return []
        order = self.index.mro(cls.name)
        known = {t.function for t in found if t.function}
        extra: list[CallTarget] = []
        for target in found:
            current = target.function
            for _ in range(_SUPER_CHAIN):
                fn = self.index.functions.get(current or "")
                here = (current or "").rpartition(".")[0]
                if fn is None or here not in order or method not in self._calls_on_super(fn):
                    break
                current = self._next_definition(order, here, method)
                if current is None or self.index.is_library(current):
                    break
                own = self._next_definition(self.index.mro(here), here, method)
                if current not in known and current != own:  # ``own``: its super() edge
                    known.add(current)
                    runs = self._runs(Resolved(SymbolKind.FUNCTION, current))
                    extra.append(CallTarget(call, current, SymbolKind.FUNCTION, runs))
        return extra

    def _super_methods(self) -> frozenset[str]:
        """Every method name a project function calls on ``super()`` (not a library's:
        which library modules are read by then depends on the order calls are met)."""
        if self._every_super is None:
            functions = list(self.index.functions.values())
            self._every_super = frozenset(
                m
                for fn in functions
                if not self.index.is_library(fn.qualname)
                for m in self._calls_on_super(fn)
            )
        return self._every_super

    def _calls_on_super(self, fn: FunctionInfo) -> frozenset[str]:
        found = self._supers.get(fn.qualname)
        if found is None:
            found = self._supers[fn.qualname] = _super_calls(fn)
        return found

    def _admin_default(
        self, call: CallInfo, caller: FunctionInfo | None, found: list[CallTarget]
    ) -> list[CallTarget]:
        """``super().save_model(request, obj, form, change)`` in a project ``ModelAdmin``:
        Django's default calls ``obj.save()`` (``delete_model``: ``obj.delete()``), so the
        project model's own ``save`` runs, for each model the hook's admins are registered
        for (``_admin``). Nothing when the call hands on anything but the hook's ``obj``."""
        if call.target.rpartition(".")[2] not in ADMIN_DEFAULTS or caller is None:
            return []  # the cheap test first
        hook = next((t.name for t in found if t.name in DEFAULT_HOOKS), None)
        if hook is None:
            return []
        if "obj" not in (*call.arg_params[1:2], call.kwarg_params.get("obj", "")):
            return []
        default = ADMIN_DEFAULTS[hook.rpartition(".")[2]]
        methods = [
            self.index.method(m, default) for m in self._admin_objects.get(caller.qualname, [])
        ]
        return [
            CallTarget(call, m, SymbolKind.FUNCTION, self._runs(Resolved(SymbolKind.FUNCTION, m)))
            for m in dict.fromkeys(methods)
            if m is not None and not self.index.is_library(m)
        ]

    def _next_definition(self, order: list[str], cls: str, method: str) -> str | None:
        """The first ``method`` defined after ``cls`` in ``order`` (a project or a read
        library function), None when no class after it defines one the index knows."""
        after = order[order.index(cls) + 1 :] if cls in order else []
        return next(
            (f"{o}.{method}" for o in after if f"{o}.{method}" in self.index.functions), None
        )

    def _declared_class(self, target: CallTarget) -> str | None:
        """The project class a receiver is declared as (``declared_receiver``), else None:
        the class the receiver resolves to, or, for what a method returns
        (``backend.compute().get_offers()``), the class whose method the call resolved to."""
        written = declared_receiver(target.call)
        if not written:
            return None
        found = self.index.resolve(written)
        if found.kind == SymbolKind.CLASS:
            return found.name
        owner = target.name.rpartition(".")[0] if target.kind == SymbolKind.FUNCTION else ""
        return owner if owner in self.index.classes and written.endswith("()") else None

    def callees(self, qualname: str) -> list[str]:
        started = [*self._site_edges.get(qualname, []), *self._library_starts(qualname)]
        return sorted({*self.called(qualname), *started})

    def _library_starts(self, qualname: str) -> list[str]:
        """Work a library function starts in-process (``Thread(target=send).start()``)."""
        names = self.index.library_starts.get(qualname, [])
        found = [self._runs(self.index.resolve(name)) for name in names]
        return [f for f in found if f is not None]

    def dispatched(self, qualname: str) -> list[str]:
        """``COMPLEX[name]()`` through a module-level table of functions: each of them.

        The extractor writes such a call as a DYNAMIC_DISPATCH fact whose target is
        ``table NAME: a.b c.d`` (the table's values, locally resolved).
        """
        fn = self.index.functions.get(qualname)
        found: list[str] = []
        for fact in fn.facts if fn else []:
            functions = self.table_functions(self.table_of(qualname, fact) or [])
            found += [f for f in functions if f is not None]
        return found

    def table_of(self, qualname: str, fact: Fact) -> list[str] | None:
        """The values of the table a dispatch fact calls through: written into the fact,
        or a module-level dict literal of names of the function's module
        (``COMPLEX[name]()`` with ``COMPLEX = {"a": get_a, "b": get_b}``)."""
        written = dispatch_table(fact)
        if written is not None or fact.kind != FactKind.DYNAMIC_DISPATCH:
            return written
        if fact.target.startswith(_NAMED):  # ``getattr(chats, f"send_to_{channel}")``
            owner, _, pattern = fact.target.removeprefix(_NAMED).partition(" ")
            return self.index.named_like(owner, pattern)
        if fact.target.startswith(_LOOKUP):  # ``fn = TABLE.get(k); fn()``
            values = self.index.table(fact.target.removeprefix(_LOOKUP))
            return [f"{v[:-2]}.__call__" if v.endswith("()") else v for v in values or []] or None
        if fact.target.startswith(_PARTIAL):  # ``partial(notify, user)()`` runs notify
            return [fact.target.removeprefix(_PARTIAL)]
        param = fact.called_parameter()
        if param is not None:
            # ``cb(x)`` on a parameter every project call hands one function; one of a few
            # only in a job a site starts (else each caller runs its own: ``_handed``)
            passed = self.passed_callables(qualname, param)
            several = len(passed) > 1 and qualname not in self._started
            return passed if passed and not several else None
        summary = self.index.home.get(qualname)
        fn = self.index.functions.get(qualname)
        if summary is None or fn is None or fact.target in fn.params:
            return None  # a parameter shadowing the module's table
        found = summary.tables.get(fact.target)
        if found is not None or not fact.target.isidentifier():
            return found
        # ``EXPORTERS[k](...)`` on a table of instances, or one imported from another module:
        # an instance called runs its class's ``__call__``.
        values = self.index.table(f"{summary.module}.{fact.target}{TABLE}")
        if values is None:
            return None
        return [f"{v[:-2]}.__call__" if v.endswith("()") else v for v in values]

    def table_followed(self, values: list[str]) -> bool:
        """Every value of a table runs project code the graph follows, or builds a project
        class (whose ``__init__``, if it has one, is followed): nothing left unknown."""
        for name in values:
            found = self.index.resolve(name)
            if self.index.is_library(found.name):
                return False
            if found.kind != SymbolKind.CLASS and self._runs(found) is None:
                return False
        return True

    def table_functions(self, values: list[str]) -> list[str | None]:
        """The project function each table value runs, None for anything else."""
        return [self._runs(self.index.resolve(name)) for name in values]

    def resolve_call(self, call: CallInfo, caller: FunctionInfo | None) -> CallTarget:
        name = (
            self._held_callable(call, caller)
            or self._through_attribute(call, caller)
            or self._typed_parameter(call, caller)
            or call.target
        )
        if name.startswith(_UNKNOWN_PREFIX):
            made = self._made_by_parameter(call, caller) or call
            return self._on_returned(made, name) or CallTarget(
                call, name, SymbolKind.EXTERNAL, None
            )
        task = immediate_task(self.index, name)  # ``send.enqueue(x)`` of a Django @task
        if task is not None:
            return CallTarget(
                call, task, SymbolKind.FUNCTION, self._runs(Resolved(SymbolKind.FUNCTION, task))
            )
        found = self.index.resolve(name)
        if found.kind == SymbolKind.FUNCTION:  # ``thumb(pk)`` of a Huey task enqueues
            if found.name not in self._queued:  # its decorators resolved once per function
                self._queued[found.name] = enqueued_by_call(self.index, found.name)
            queued = self._queued[found.name]
            if queued is not None:
                return CallTarget(call, queued, SymbolKind.EXTERNAL, None)
        if name.startswith(_LOADED):
            name = found.name  # a model looked up by name: what it resolved to is the name
        if found.kind == SymbolKind.EXTERNAL or self.index.is_library(found.name):
            found = self._outside(call, name, found)
        elif found.kind == SymbolKind.MEMBER:
            found = self._called_instance(found) or self._inherited(call, found)
        runs = self._runs(found)
        if found.kind == SymbolKind.CLASS and runs is not None and self.explained(call, runs):
            runs = None  # ``Metric(...)``: a catalogued constructor (Django's Model.__init__)
        return CallTarget(call, found.name, found.kind, runs)

    def _called_instance(self, found: Resolved) -> Resolved | None:
        """``self.session(url)`` (or ``bot.session(url)``) where ``session`` is no method
        but an instance attribute holding a project class's instance (``self.session =
        Session()``, an annotation, or ``__init__``'s parameter every caller types): calling
        an instance runs its class's ``__call__`` (the data model's ``type(x).__call__``).
        None when the attribute's class is not known or defines no ``__call__``."""
        owner, _, attr = found.name.rpartition(".")
        if owner not in self.index.classes or self.index.method(owner, attr) is not None:
            return None
        cls = self.index.attribute_class(owner, attr) or self._held_parameter(owner, attr)
        if cls is None or cls not in self.index.classes:
            return None
        runs = self.index.resolve(f"{cls}.__call__")
        return runs if runs.kind == SymbolKind.FUNCTION else None

    def _inherited(self, call: CallInfo, found: Resolved) -> Resolved:
        """``self.bulk_create(...)`` in a ``models.Manager`` subclass: a method the project
        class inherits from a library base is named by that base for the catalogue."""
        owner, _, method = found.name.rpartition(".")
        if owner not in self.index.classes or self.index.is_library(owner):
            return found
        for base in self.index.mro(owner)[1:]:
            if base in self.index.classes and not self.index.is_library(base):
                continue
            if self.explained(call, f"{base}.{method}"):
                return Resolved(SymbolKind.EXTERNAL, f"{base}.{method}")
        return found

    def _on_returned(self, call: CallInfo, name: str) -> CallTarget | None:
        """``s = get_session(); s.commit()`` where get_session is known to return a Session
        (annotation, or the class every return builds): Session.commit runs. Else the
        receiver stays of unknown type."""
        if not call.returned_from:
            return None
        method = name.rsplit(".", 1)[-1]
        found = self.index.resolve(f"{call.returned_from}.{method}")
        if found.kind != SymbolKind.FUNCTION:
            # ``async with registry.session() as session`` (a method typed to yield one), or
            # ``session = session_factory()`` with ``session_factory = sessionmaker(...)`` in
            # another module: a session's method, when the catalogue knows it.
            library = found.kind == SymbolKind.EXTERNAL or self.index.is_library(found.name)
            typed = (known_type(found.name) if library else "") or self._made_session(call, method)
            if typed and self.explained(call, typed):
                return CallTarget(call, typed, SymbolKind.EXTERNAL, None)
            typed_by_project = library and self._project_made(call.returned_from)
            if typed_by_project and "()" not in found.name and not found.name.startswith(_OPAQUE):
                # ``client = get_client(); client.post(...)`` with the project's
                # ``def get_client() -> httpx.Client``: that class's method, as the same
                # call written in one expression (``get_client().post(...)``) resolves
                outside = self._outside(call, found.name, found)
                return CallTarget(call, outside.name, outside.kind, self._runs(outside))
            found = self._read_producer(call, method, found)
            if found.kind != SymbolKind.FUNCTION:
                return None
        if self.index.is_library(found.name):
            found = self._outside(call, found.name, found)
        return CallTarget(call, found.name, found.kind, self._runs(found))

    def _project_made(self, returned_from: str) -> bool:
        """``pkg.pool.get_client()``: a value a project function (or a project class's
        method) returned, whose declared or built class the index has just read."""
        head, called, _ = returned_from.partition("()")
        if not called or not head:
            return False
        made = self.index.resolve(head)
        return made.kind == SymbolKind.FUNCTION and not self.index.is_library(made.name)

    def _read_producer(self, call: CallInfo, method: str, found: Resolved) -> Resolved:
        """``pipe = r.pipeline(); pipe.hdel(k)`` with ``r: redis.asyncio.Redis``: the library
        module of the call that made the receiver, read now (whether another call had the
        scan read it first must not decide what this one is), then the name again."""
        producer = call.returned_from.partition("()")[0]
        if found.kind != SymbolKind.EXTERNAL or not producer:
            return found
        if self.index.resolve_in_library(producer).kind == SymbolKind.EXTERNAL:
            return found
        return self.index.resolve(f"{call.returned_from}.{method}")

    def _made_by_parameter(self, call: CallInfo, caller: FunctionInfo | None) -> CallInfo | None:
        """``result = await session.execute(q); result.scalar()``: the receiver is what the
        earlier call made, named by its method only (``?.execute()``). That call is found
        among the caller's calls (every earlier call of that method on the same receiver,
        or the receiver stays unknown), and its receiver typed: a parameter whose class the
        callers or an annotation give, else, for a session's statement methods, a receiver
        named like a session, the name the catalogue's ``?.execute`` rule reads as a
        database session: what SQLAlchemy's ``Session.execute`` returns, a ``Result``."""
        made = call.returned_from
        if caller is None or not made.startswith(_UNKNOWN_PREFIX) or not made.endswith("()"):
            return None
        producer = made.removesuffix("()")
        method = producer.removeprefix(_UNKNOWN_PREFIX)
        if not method.isidentifier():
            return None
        # earlier, or inside the receiver: ``(await session.execute(q)).scalars()``
        at = (call.span.end_line or call.span.line, call.span.end_column or _EVER)
        earlier = [
            c for c in caller.calls if c.target == producer and (c.span.line, c.span.column) <= at
        ]
        receivers = {(c.receiver_param, c.receiver_source) for c in earlier}
        if len(receivers) != 1:
            return None
        root, written = receivers.pop()
        cls = self.parameter_type(caller.qualname, root) if root.isidentifier() else None
        if not cls and method in SESSION_RESULTS and _SESSION_NAMED.search(written):
            cls = SESSION
        if not cls:
            return None
        return call.model_copy(update={"returned_from": f"{cls}.{method}()"})

    def _made_session(self, call: CallInfo, method: str) -> str:
        """``s = session_factory(); s.commit()``, the factory (``sessionmaker(...)``, which
        stands for the session class) assigned in another module: ``Session.commit``."""
        head, called, rest = call.returned_from.partition("()")
        if not called or not head:
            return ""
        made = self.index.resolve(head)
        if made.name not in SESSION_TYPES:
            return ""
        # ``session_factory().execute().scalars`` (``result = session.execute(q)``...).
        return known_type(f"{made.name}(){rest}.{method}" if rest else f"{made.name}.{method}")

    def _outside(self, call: CallInfo, written: str, found: Resolved) -> Resolved:
        """A library name: the catalogue's entry when it has one (by the name as written,
        ``django.core.mail.EmailMessage.send``, or as resolved), else its installed source."""
        # ``app.db.SessionLocal.execute`` resolved to ``sqlalchemy.orm.Session.execute``:
        # the project's alias is no API, the library's name is tried first.
        aliased = found.name != written and self.index.in_project(written)
        names = (found.name, written) if aliased else (written, found.name)
        for name in names:
            if spawned(CallTarget(call, name, SymbolKind.EXTERNAL, None)) is not None:
                return Resolved(SymbolKind.EXTERNAL, name)  # what it runs is followed instead
        # The names on the way count too: an entry names a library's public API
        # (``loguru.logger.*``), which the installed source resolves past (``Logger.warning``).
        on_the_way = self.index.aliases(written)
        tried = (*names, *on_the_way, library_type(written), library_type(found.name))
        for name in dict.fromkeys(tried):
            if self.explained(call, name):
                return Resolved(SymbolKind.EXTERNAL, name)
        if found.kind == SymbolKind.EXTERNAL:
            found = self.index.resolve_in_library(found.name)
        if not self.index.is_library(found.name):
            return found
        # Read now: the names it was handed on through (a library re-exporting loguru's
        # logger, ``commonlib.logger.logger``) are known only after the reading.
        for name in dict.fromkeys((*self.index.aliases(written), found.name)):
            if self.explained(call, name):
                return Resolved(SymbolKind.EXTERNAL, name)
        return found

    def _runs(self, found: Resolved) -> str | None:
        if found.kind == SymbolKind.FUNCTION:
            return None if found.name in self.catalogued else found.name
        if found.kind == SymbolKind.CLASS:
            return self.index.method(found.name, "__init__")
        return None

    def _typed_parameter(self, call: CallInfo, caller: FunctionInfo | None) -> str | None:
        """``instance.unpublish()`` in a receiver connected with ``sender=Page``."""
        if caller is None or not call.target.startswith(_UNKNOWN_PREFIX):
            return None
        # the receiver as rooted at a parameter (``instance.x``, ``group = kwargs["instance"];
        # group.x``); a local that merely shares the parameter's name has none
        head, _, attr = call.receiver_param.partition(".")
        cls = self.parameter_type(caller.qualname, head)
        method = call.target.rsplit(".", 1)[-1]
        if cls and attr.endswith("[]"):
            # ``for rep in instance.corp_profile.reps.all(): rep.delete()``: a row of a
            # relation, along the ForeignKeys of the parameter's model.
            row = self._along(cls, attr.split("."))
            return f"{row}.{method}" if row else None
        if cls and attr.isidentifier() and self._relation(cls, attr):
            # ``instance.tags.add(tag)``: a related manager of the sender's model.
            return f"{cls}.{attr}.{method}"
        held = self.index.attribute_class(cls, attr) if cls and attr.isidentifier() else None
        if cls and attr.isidentifier() and (held is None or self.index.file_value(held)):
            # ``instance.file.delete()``: a FileField's FieldFile, or the ``attr_class`` of a
            # project FileField subclass (``_index._member``).
            found = self.index.resolve(f"{cls}.{attr}.{method}")
            if found.kind == SymbolKind.EXTERNAL and found.name.startswith(FIELD_VALUES):
                return found.name
            if held is not None:
                return found.name if found.kind == SymbolKind.FUNCTION else None
        if cls and attr:
            # ``instance.billing.check_limits()``: a ForeignKey of the sender's model.
            cls = self.index.attribute_class(cls, attr) if attr.isidentifier() else None
        return f"{cls}.{method}" if cls else None

    def _along(self, cls: str, attrs: list[str]) -> str | None:
        """The model reached from ``cls`` through ``attrs``: a ForeignKey (or another
        attribute holding a project class) per plain name, the rows of a relation (reverse
        or many-to-many) for ``name[]``; None as soon as one is not known."""
        current: str | None = cls
        for attr in attrs:
            if current is None:
                return None
            name = attr.removesuffix("[]")
            if not name.isidentifier():
                return None
            if attr.endswith("[]"):
                many = self.index.many_model(current, name)
                current = (
                    (current if many == "self" else many)
                    if many is not None
                    else self.index.reverse_model(current, name)
                )
            else:
                current = self.index.attribute_class(current, name)
        return current

    def _held_parameter(self, cls: str, attr: str) -> str | None:
        """The class of ``self.attr`` set from a method's parameter (``ClassInfo.
        held_parameters``) in ``cls`` or a base, when the method's callers type it."""
        holder = self._holder(cls, attr)
        return self.parameter_type(*holder) if holder else None

    def _holder(self, cls: str, attr: str) -> tuple[str, str] | None:
        """The method and parameter ``self.attr`` is set from in ``cls`` or a base (``ClassInfo.
        held_parameters``); None when the nearest class setting it sets it otherwise."""
        for owner in self.index.mro(cls):
            info = self.index.classes.get(owner)
            held = info.held_parameters.get(attr) if info else None
            if held:
                function, _, param = held.rpartition(":")
                return function, param
            if info is not None and attr in info.attributes:
                return None
        return None

    def _property(self, cls: str, attr: str) -> bool:
        """``attr`` of ``cls`` is a method made a property (``@property``,
        ``functools.cached_property``), so ``self.attr`` is what it returns."""
        found = self.index.method(cls, attr)
        info = self.index.functions.get(found) if found else None
        return info is not None and any(d in _PROPERTIES for d in info.decorator_sources)

    def _relation(self, cls: str, attr: str) -> bool:
        """``attr`` of model ``cls`` is a related manager (many-to-many, reverse ForeignKey)."""
        if self.index.many_model(cls, attr) is not None:
            return True
        if self.index.attribute_class(cls, attr) is not None or self.index.method(cls, attr):
            return False
        return self.index.reverse_model(cls, attr) is not None

    def _through_attribute(self, call: CallInfo, caller: FunctionInfo | None) -> str | None:
        """``self.mailer.send()`` where some method did ``self.mailer = Mailer()``."""
        if caller is None or caller.class_name is None:
            return None
        if not call.receiver_source.startswith(_SELF_PREFIX):
            return None
        attr = call.receiver_source[len(_SELF_PREFIX) :]
        cls = caller.qualname.rsplit(".", 1)[0]
        owner = self.index.classes.get(cls)
        method = call.target.rsplit(".", 1)[-1]
        memo = method in MEMO_METHODS and owner and attr not in owner.attributes
        if memo and self.index.method(cls, attr) is not None:
            return f"{cls}.{attr}.{method}"  # ``self.entries.cache_clear()``: the memo's
        if owner and attr not in owner.attributes and self._property(cls, attr):
            # ``self.client.post()`` with ``@property def client(self) -> Session``: the
            # getter runs on the attribute read, and its result is what is called
            returned = self.index.returned_class(cls, attr)
            return f"{returned}.{method}" if returned else None
        ctor = owner.attributes.get(attr) if owner else None
        if ctor is None:
            # ``self.client = client`` in ``__init__``, typed by ``__init__``'s callers
            held = self._held_parameter(caller.qualname.rsplit(".", 1)[0], attr)
            return f"{held}.{call.target.rsplit('.', 1)[-1]}" if held else None
        name = f"{ctor}.{call.target.rsplit('.', 1)[-1]}"
        if ctor.endswith("()") and self.index.resolve(name).kind != SymbolKind.FUNCTION:
            return None  # ``self.store = get_store()`` with a result of unknown type
        return name
