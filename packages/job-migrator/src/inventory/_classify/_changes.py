"""What a job changes, in memory, of the objects it is given.

A job moved to a worker gets a copy of each argument (a row read again, a snapshot, a
value decoded from JSON), never the caller's object. A job that only reads its arguments
does the same on the copy; one that changes them (``instance.file.delete(save=False)``
sets ``instance.file`` to an empty name; ``self.name = None`` in a method it calls) would
change the copy, and the caller, which may read its object afterwards, would not see it.

This follows the resolved calls, as the verdict does, from each parameter of the job:

- a store into the parameter (``p.x = v``, ``p.items[k] = v``, ``del p.x``,
  ``FunctionInfo.stores``) is a change;
- a method called on the parameter or on one of its attributes (``p.m()``, ``p.file.m()``)
  runs with ``self`` bound to that object: its own body is read for changes of ``self``
  (project code and library source read alike); a catalogued call changes it when its
  effect is one that changes the object it acts on (a row written or deleted through it, an
  image processed in place: ``_CHANGES_OBJECT``), not a read, a file written through a
  path, or an effect on another system the object is only a client of (a mail sent, an HTTP
  request, a cache key: ``user.email_user(...)``); a call the scan could
  not follow may change it, and the change carries the catalogue entry that would explain
  it, as the verdict's gaps do (``_gaps.Gaps``: the same rule, the same entry);
- a method of Python's containers that changes them in place (``append``, ``update``,
  ``pop``, ``add``, ``sort``...: ``p.items.append(x)``) on the parameter or on one of its
  attributes, typed as a list, dict, set or deque, is a change, though the catalogue calls
  it pure: a pure entry means no effect a retry repeats, not that the object is left as it
  was; on a receiver of unknown type (``user.groups.remove(g)``: a list's ``remove``, or a
  related manager's, which writes rows) it is a call that may change it; the ``**`` dict
  a function receives is its own (Python builds a new one for each call), so nothing done
  to it is a change of the caller's;
- an attribute that is a method of the parameter's class (a property, a
  ``classproperty``) is a value computed from the object, not a part of it: calls on it are
  not changes of the parameter (``self.cache_backend.delete(key)`` deletes a cache key);
- the parameter (or an attribute of it) handed to a project function is followed into it,
  under that function's name for it.

An argument handed to a library function is not followed (``str(p)``, ``logger.info(p)``),
as the receiver rules never were: a library's function changing an object it is handed is
rare, and reading every one of them would make every job undecided.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from inventory._catalogue import Catalogue, api_name
from inventory._classify._gaps import Gaps
from inventory._classify._graph import CallGraph
from inventory._classify._index import MANAGER, RELATED_MANAGER
from inventory._classify._target import CallTarget
from inventory._classify._trace import location
from inventory._extract.values._process_state import CONTAINER_ADDS, CONTAINER_REMOVES
from inventory.models import EffectKind, Location, ParameterChange, UnexplainedCall
from inventory.summary import CallInfo, ReceiverKind

_DEPTH = 6  # calls followed from the job; deeper changes are not looked for
_SELF = "self"
_ROOT = re.compile(r"[.\[(]")
# ``setattr(p, "x", v)`` / ``delattr(p, "x")``: a store written as a call.
_SETS_ATTRIBUTE = frozenset({"builtins.setattr", "builtins.delattr", "setattr", "delattr"})
_METHOD_RECEIVERS = frozenset({ReceiverKind.INSTANCE, ReceiverKind.SELF, ReceiverKind.UNKNOWN})
# The catalogued effects that change, in memory, the object they are called on (or on one
# of its attributes): a row written or deleted through it (Django's ``save()`` sets a new
# row's key, ``delete()`` empties it, a FieldFile's ``delete``/``save`` set its ``name``, a
# related manager's ``add`` resets its cache), an image processed in place, account state,
# a call dispatched at run time. Reads, files written through a path (pathlib's paths are
# immutable), and effects on another system the object is only a client of (a mail sent,
# a request made, a cache key set, a message published, a program run) leave it as the
# caller has it.
# The methods of list, dict, set, bytearray and collections.deque that change the container
# in place (Python's documentation of each type's "mutable sequence" / "mapping" / "set"
# operations).
# The built-in and standard containers those methods change, as the scan names a typed
# receiver (typed by its callers: ``builtins.list``; by an annotation: ``list``).
_CONTAINERS = (
    "builtins.list.",
    "builtins.dict.",
    "builtins.set.",
    "builtins.bytearray.",
    "list.",  # as an annotation names them (``entries: list``)
    "dict.",
    "set.",
    "bytearray.",
    "collections.deque.",
    "collections.OrderedDict.",
    "collections.defaultdict.",
    "collections.Counter.",
)
_MUTATORS = (
    CONTAINER_ADDS
    | CONTAINER_REMOVES
    | {"reverse", "sort", "rotate", "difference_update", "intersection_update"}
    | {"symmetric_difference_update"}
)
_CHANGES_OBJECT = frozenset(
    {
        EffectKind.DB_INSERT,
        EffectKind.DB_UPSERT,
        EffectKind.DB_OVERWRITE,
        EffectKind.DB_INCREMENT,
        EffectKind.DB_DELETE,
        EffectKind.FILE_APPEND,
        EffectKind.IMAGE_PROCESS,
        EffectKind.ACCOUNT_STATE,
        EffectKind.PAYMENT,
        EffectKind.DYNAMIC_CALL,
    }
)


_USER_RELATIONS = frozenset({"groups", "user_permissions"})
_RELATION_EDITS = frozenset({"add", "remove", "clear", "set"})


def _other_rows(name: str) -> bool:
    """A write through one of the object's relations (``order.tags.add(tag)``, Django's
    related manager; ``order.lines.filter(...).delete()``, the related model's query): rows
    of the relation are written in the database, the object in memory is as it was.
    ``name``: the call as the catalogue names it (``api_name``)."""
    # ``Leaf.objects.filter().update``: a query of a model's rows
    if name.startswith(f"{RELATED_MANAGER}.") or f"{MANAGER}." in name:
        return True
    # ``instance.user_permissions.add(p)`` on a user the scan could not type: the catalogue's
    # relation edits of Django's user relations (PermissionsMixin's groups, user_permissions)
    *_, relation, method = name.split(".") if name.count(".") >= 2 else ("", "", "")
    return relation in _USER_RELATIONS and method in _RELATION_EDITS


@dataclass(frozen=True)
class _Found:
    what: str
    location: Location | None
    chain: tuple[str, ...]
    unexplained: UnexplainedCall | None = None  # a call on it the scan could not follow
    inner: str = ""  # the innermost statement or call, when ``what`` is a call reaching it

    @property
    def innermost(self) -> str:
        return self.inner or self.what

    @property
    def followed(self) -> bool:
        return self.unexplained is None


class ParameterChanges:
    """``of(function, parameters)``: the change of each parameter the scan finds (or the
    call on it it could not follow), memoised per function and parameter."""

    def __init__(self, graph: CallGraph, catalogue: Catalogue, gaps: Gaps) -> None:
        self.graph = graph
        self.index = graph.index
        self.catalogue = catalogue
        self.gaps = gaps
        self._memo: dict[tuple[str, str], _Found | None] = {}
        # Set when a search stopped at the depth limit or a call cycle: its "no change" then
        # holds for that search only and is not remembered (a change found always is).
        self._cut = False

    def of(self, function: str, parameters: list[str]) -> list[ParameterChange]:
        found = []
        fn = self.index.functions.get(function)
        bound = fn is not None and fn.is_method and fn.params[:1] == [_SELF]
        for param in [
            *([_SELF] if bound else []),
            *parameters,
            *self._keywords(function, parameters),
        ]:
            change = self._changed(function, param, 0, frozenset())
            if change is not None:
                found.append(
                    ParameterChange(
                        parameter=param,
                        change=change.what,
                        location=change.location,
                        chain=list(change.chain),
                        unexplained=change.unexplained,
                    )
                )
        return found

    def self_change(self, method: str) -> str | None:
        """What ``method`` does to ``self`` that surely changes it (a store, a container of it
        changed in place), written as in its body; None when it changes nothing of it, or
        only may (a call the scan could not follow)."""
        fn = self.index.functions.get(method)
        if fn is None or not fn.is_method or fn.params[:1] != [_SELF]:
            return None
        found = self._changed(method, _SELF, 0, frozenset())
        if found is None or found.unexplained is not None:
            return None
        return found.innermost

    def _keywords(self, function: str, parameters: list[str]) -> list[str]:
        """Values the function reads from its ``**`` parameter by key and changes or calls
        methods on (``kwargs["instance"].title = ""``): a signal receiver's ``instance``
        given by keyword is the same object as a named parameter would be."""
        fn = self.index.functions.get(function)
        if fn is None or not fn.kwarg:
            return []
        read = {s.param for s in fn.stores}
        read |= {_ROOT.split(c.receiver_param, maxsplit=1)[0] for c in fn.calls if c.receiver_param}
        return sorted(read - {*parameters, *fn.params})

    def _changed(
        self, function: str, param: str, depth: int, seen: frozenset[str]
    ) -> _Found | None:
        key = (function, param)
        if key in self._memo:
            return self._memo[key]
        outer, self._cut = self._cut, False
        found = self._search(function, param, depth, seen | {function})
        if found is not None or not self._cut:
            self._memo[key] = found
        self._cut = outer or self._cut
        return found

    def _search(self, function: str, param: str, depth: int, seen: frozenset[str]) -> _Found | None:
        fn = self.index.functions.get(function)
        if fn is None:
            return None
        path = self.index.function_path(function)
        for store in fn.stores:
            if store.param == param:
                return _Found(store.text, location(path, store.span), (function,))
        for target in self.graph.targets(function):
            found = self._on_call(function, param, target, depth, seen)
            if found is not None:
                return found
        return None

    def _on_call(
        self, function: str, param: str, target: CallTarget, depth: int, seen: frozenset[str]
    ) -> _Found | None:
        call = target.call
        if target.name in _SETS_ATTRIBUTE and param in _first(call):
            here = location(self.index.function_path(function), call.span)
            return _Found(_written(call), here, (function,))
        if _on_param(call, param) and not self._computed(function, param, call):
            runs = target.function
            if runs is not None and runs in self.index.functions:
                inner = self._follow(runs, _SELF, depth, seen)
                if inner is None:
                    return None
                what = _written(call)
                if inner.followed:
                    what = f"{what}, which changes it: `{inner.innermost}`"
                chain = (function, *inner.chain)
                return _Found(what, inner.location, chain, inner.unexplained, inner.innermost)
            return self._called_on(function, target, param)
        for name in self._handed_as(call, param, target):
            inner = self._follow(target.function or "", name, depth, seen)
            if inner is not None:
                return _Found(
                    inner.what, inner.location, (function, *inner.chain), inner.unexplained
                )
        return None

    def _called_on(self, function: str, target: CallTarget, param: str) -> _Found | None:
        """A call on the parameter whose body the scan does not read: a container changed in
        place, else the catalogue's word, else a call it could not follow (with the entry
        that would explain it)."""
        call, name = target.call, target.name
        fn = self.index.functions[function]
        path = self.index.function_path(function)
        here = location(path, call.span)
        if self.gaps.pure(target):
            return self._in_place(call, name, here, function, param)
        match = self.catalogue.match_call(call, name)
        if match is not None:
            changes = match.kind in _CHANGES_OBJECT and not _other_rows(api_name(call, name))
            return _Found(_written(call), here, (function,)) if changes else None
        gap = self.gaps.of(target, fn, path)
        if gap is None:
            return None  # a query being built, a dunder: nothing done to the object
        unexplained = UnexplainedCall(
            call=gap.effect.api, entry=gap.entry, receiver=gap.entry_receiver
        )
        return _Found(_written(call), here, (function,), unexplained)

    def _in_place(
        self, call: CallInfo, name: str, here: Location, function: str, param: str
    ) -> _Found | None:
        """A container's method that changes it in place: a change when the scan typed the
        receiver as a list, dict, set or deque; on a receiver of unknown type (``?.remove``:
        a list's, or a related manager's, which writes rows and leaves the object as it was)
        a call that may change it, left to the runtime as any call the scan could not
        follow. The ``**`` dict the function receives is made for the call: not the caller's."""
        if call.target.rpartition(".")[2] not in _MUTATORS or _other_rows(api_name(call, name)):
            return None
        if param == self.index.functions[function].kwarg:
            return None
        if name.startswith(_CONTAINERS):
            return _Found(_written(call), here, (function,))
        return _Found(_written(call), here, (function,), UnexplainedCall(call=name))

    def _follow(self, function: str, param: str, depth: int, seen: frozenset[str]) -> _Found | None:
        if depth + 1 > _DEPTH or function in seen:
            self._cut = True
            return None
        fn = self.index.functions.get(function)
        if fn is None or param not in fn.params:
            return None
        return self._changed(function, param, depth + 1, seen)

    def _computed(self, function: str, param: str, call: CallInfo) -> bool:
        """``self.cache_backend.delete()``: the first attribute after the parameter is a
        method of its class (a property), so the call acts on what it computes."""
        rest = _receiver(call)[len(param) :]
        if not rest.startswith("."):
            return False
        attr = _ROOT.split(rest[1:], maxsplit=1)[0]
        cls = self._class_of(function, param)
        return cls is not None and self.index.method(cls, attr) is not None

    def _class_of(self, function: str, param: str) -> str | None:
        fn = self.index.functions[function]
        if param == _SELF and fn.is_method:
            return function.rpartition(".")[0]
        return self.graph.parameter_type(function, param)

    def _handed_as(self, call: CallInfo, param: str, target: CallTarget) -> list[str]:
        """The names a project function called here gives ``param`` (passed as it is, or an
        attribute of it: ``_note(instance.history)``)."""
        runs = target.function
        fn = None if runs is None else self.index.functions.get(runs)
        if fn is None or self.index.is_library(runs or ""):
            return []
        params = [p for p in fn.params if p not in (_SELF, "cls")] if fn.is_method else fn.params
        names = [
            params[i] for i, s in enumerate(call.arg_sources) if _part(s, param) and i < len(params)
        ]
        names += [k for k, s in call.kwarg_sources.items() if _part(s, param) and k in fn.params]
        return names


def _part(source: str, param: str) -> bool:
    """``param`` itself, or an attribute reached from it (``instance.history``): what the
    callee changes of it is a change of ``param``."""
    if source == param:
        return True
    head, dot, rest = source.partition(".")
    return head == param and bool(dot) and all(p.isidentifier() for p in rest.split("."))


def _receiver(call: CallInfo) -> str:
    return call.receiver_param or call.receiver_source


def _on_param(call: CallInfo, param: str) -> bool:
    """A method call whose receiver is ``param`` or reached from it (``param.file``)."""
    if call.receiver not in _METHOD_RECEIVERS:
        return False
    receiver = _receiver(call)
    return bool(receiver) and _ROOT.split(receiver, maxsplit=1)[0] == param


def _first(call: CallInfo) -> tuple[str, ...]:
    """The parameter the first argument is part of: as written, or the one a local copy of
    it stands for (``CallInfo.arg_params``)."""
    written = _ROOT.split(call.arg_sources[0], maxsplit=1)[0] if call.arg_sources else ""
    copied = call.arg_params[0] if call.arg_params else ""
    return (written, copied.partition(".")[0])


def _written(call: CallInfo) -> str:
    """The call as written, near enough: ``instance.file.delete(save=False)``."""
    method = call.target.rpartition(".")[2]
    args = [*call.arg_sources, *(f"{k}={v}" for k, v in call.kwarg_sources.items())]
    head = f"{call.receiver_source}." if call.receiver_source else ""
    return f"{head}{method}({', '.join(args)})"
