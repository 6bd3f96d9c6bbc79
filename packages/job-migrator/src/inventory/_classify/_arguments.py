"""Parameter types from the function's callers: what every project call passes.

``def notify(order): order.mark_paid()`` has no annotation, so ``order.mark_paid()`` is a
method of an unknown receiver (a gap) although every caller hands it an ``Order``
(``notify(Order.objects.get(pk=pk))``, ``notify(self)`` in an ``Order`` method, a caller's
own parameter typed the same way). Where the project's calls agree, the parameter is of
that class and the call graph resolves through it (``CallGraph._typed_parameter``), as a
checker that infers a parameter from its call sites would.

Sound only as far as the project's calls are all its callers, so a parameter is typed only
when:

* the function has at least one project call passing that parameter, and every one of
  them passes a value of the same known class (a call passing a value the scan cannot type,
  or ``*args`` / ``**kwargs`` it cannot spread, types nothing);
* a site that starts the function (a thread, a task, a scheduler) counts as a call with
  the site's arguments; one whose arguments the scan cannot read types nothing;
* nothing else runs the function with arguments the scan does not see: it is no request
  handler, no signal receiver, carries no
  decorator other than ``staticmethod`` / ``classmethod``, and its name is never handed
  on as a value (``Thread(target=f)``, ``map(f, ...)``, a table of callables).

A callable is typed the same way: where every project call hands a parameter one and the
same project function (``run_with(post_hook, x)``, ``Runner(callback=post_hook)``), what the
callee calls through it (``cb(x)``, or ``self._callback(x)`` after ``self._callback =
callback``) is that function (``CallGraph.passed_callable``). Callers handing it different
project functions (up to ``_MAX_HANDED``: ``CALLABLE`` + the names joined by ``ONE_OF``)
each run their own: ``run_with(post_hook, x)`` is a call of ``post_hook`` for that caller,
``run_with(tidy, x)`` of ``tidy`` for the other (``_owners``: the caller owns what it hands,
``CallGraph.set_handed``), and ``cb(x)`` in ``run_with`` is explained by them, no longer a
call of unknown target; a site starting ``run_with`` itself makes it a job run with any of
them (each followed from it). A caller handing anything else (a parameter of unknown value,
a lambda, a library function) leaves the call only known at run time.

Types flow through parameters handed on (``def a(o): b(o)``), up to ``_ROUNDS`` rounds:
each round reads every call again with the types of the round before. A parameter its
function's registration types (a receiver's ``instance`` by ``sender=``, a ModelAdmin hook's
``obj``, a receiver's keywords by its signal's sends: :func:`sent_types`) is handed on typed
the same way (``sync(instance)`` in a receiver of ``sender=Order`` passes an ``Order``).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from inventory._classify._graph import SENDS
from inventory._classify._index import CALLABLE, ONE_OF, SymbolIndex, SymbolKind
from inventory._extract.detectors._sites_signals import NAMED
from inventory.models import CallSite, Pattern
from inventory.summary import CallInfo, FunctionInfo, ReceiverKind

if TYPE_CHECKING:
    from inventory._classify._graph import CallGraph

_ROUNDS = 4
_DOTTED = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")
_BINDING = frozenset({"staticmethod", "classmethod"})
_UNTYPED = ""  # an observation of a value of unknown type
# A call that does not pass the parameter (its default holds): no class is learnt from it,
# but a callable is then not known for every call (the default may be another function).
_OMITTED = "<omitted>"
_CLASSES = (SymbolKind.CLASS, SymbolKind.EXTERNAL)
# Sites whose job is run with arguments the scan does not read: a receiver is handed the
# signal's (its ``instance`` is typed by the sender instead).
_OPEN_SITES = frozenset({Pattern.SIGNAL_RECEIVER})
Types = dict[str, dict[str, str]]  # function -> parameter -> class (or CALLABLE + function)
_MAX_HANDED = 4  # at most this many different functions handed to one parameter followed


@dataclass
class _Seen:
    """What the calls of one function pass for each parameter: the classes, or ``_UNTYPED``."""

    passed: dict[str, set[str]] = field(default_factory=dict)

    def add(self, param: str, cls: str) -> None:
        found = self.passed.setdefault(param, set())
        if cls.startswith(CALLABLE) and ONE_OF in cls:
            # a caller handing on a parameter that is one of several functions
            found.update(f"{CALLABLE}{f}" for f in cls.removeprefix(CALLABLE).split(ONE_OF))
        else:
            found.add(cls)


def caller_types(index: SymbolIndex, graph: CallGraph, sites: list[CallSite]) -> Types:
    """The parameters the project's calls type, by function (see the module's rules)."""
    closed = _using_parameters(index, _closed(index, sites))
    if not closed:
        return {}
    started = _started(index, sites, closed)
    names = {index.functions[f].name for f in closed}
    names |= {index.functions[f].class_name or "" for f in closed if f.endswith(".__init__")}
    # Calls on a parameter (``order.notify(x)``) may resolve once the parameter is typed:
    # they are resolved again each round; every other call resolves once.
    fixed: list[_Passing] = []
    moving: list[tuple[FunctionInfo, CallInfo]] = []
    for caller in _callers(index):
        for call in caller.calls:
            if not call.args and not call.kwargs:
                continue
            if call.target.rpartition(".")[2] not in names:
                continue  # no function whose parameters matter has this name
            if call.receiver_param or call.receiver_source.startswith("self."):
                moving.append((caller, call))
            else:
                fixed += _passing(index, graph, closed, caller, call)
    # What a call that resolves once and hands on no parameter passes is read once too.
    settled = [p for p in fixed if not (p[2].arg_params or p[2].kwarg_params)]
    base = _round(index, settled, {}, started)
    handing = [p for p in fixed if p[2].arg_params or p[2].kwarg_params]
    declared = graph.declared_types()
    types: Types = {}
    for _ in range(_ROUNDS):
        graph.set_inferred(types)
        passing = [p for c, call in moving for p in _passing(index, graph, closed, c, call)]
        known = _with_declared(declared, types)
        found = _agreed(_round(index, [*handing, *passing], known, base))
        if found == types:
            break
        types = found
    graph.set_inferred(types)
    passing = [p for c, call in moving for p in _passing(index, graph, closed, c, call)]
    graph.set_handed(_owners(index, [*fixed, *passing], types), frozenset(started))
    return types


def sent_types(index: SymbolIndex, graph: CallGraph) -> None:
    """A receiver of the project's own signal is handed what the signal's sends pass:
    Django's ``Signal.send(sender, **named)`` and blinker's ``send(sender, **kwargs)`` call
    every connected receiver with those keywords. Where every send in the project that runs
    a receiver passes ``instance=`` (or any keyword but ``sender``) a value of one and the
    same class, the receiver's parameter of that name (or its ``kwargs["instance"]``) holds
    that class (``CallGraph.type_parameter``), and the calls on it resolve.

    Only for a receiver every signal of which is defined in the project (or a blinker signal
    named by a string) and sent by it: a model signal (``post_save``) is sent by Django for
    whatever is saved, its ``instance`` typed by ``sender=``; a library's signal is sent
    where the scan does not look (and by Django itself, for a model signal the project also
    sends by hand). A send spreading ``**kwargs`` types only the keywords it names."""
    listens: dict[str, set[str]] = {}
    for key, pairs in graph.receivers().items():
        for receiver, _ in pairs:
            listens.setdefault(receiver, set()).add(key)
    sends: dict[str, list[CallInfo]] = {}
    heard: dict[str, set[str]] = {}  # receiver -> the signals a project send of runs it
    for caller in _callers(index):
        for call in caller.calls:
            if call.target.rpartition(".")[2] not in SENDS:
                continue
            sent = graph.sent(call, caller)
            if sent is None:
                continue
            key, receivers = sent
            for receiver in receivers:
                sends.setdefault(receiver, []).append(call)
                heard.setdefault(receiver, set()).add(key)
    for receiver, calls in sorted(sends.items()):
        keys = listens.get(receiver, set())
        fn = index.functions.get(receiver)
        if fn is None or heard[receiver] != keys or not all(_own(index, k) for k in keys):
            continue
        for name in sorted({n for call in calls for n in call.kwargs} - {"sender"}):
            if name not in fn.params and not fn.kwarg:
                continue
            classes = {
                _class(call.kwarg_types.get(name, ""), index) if name in call.kwargs else ""
                for call in calls
            }
            if len(classes) == 1 and _UNTYPED not in classes:
                graph.type_parameter(receiver, name, classes.pop())


def _own(index: SymbolIndex, signal: str) -> bool:
    """A signal the project defines, or a blinker signal named by a string."""
    return signal.startswith(NAMED) or index.in_project(signal)


def _with_declared(declared: Types, types: Types) -> Types:
    """What a caller's parameters hold, as it hands them on: the inferred types, and those
    its registration declares (a receiver's ``instance``: ``sync(instance)`` in a receiver
    of ``sender=Order`` passes an ``Order``), which win where both are known."""
    if not declared:
        return types
    merged = {f: dict(params) for f, params in types.items()}
    for function, params in declared.items():
        merged.setdefault(function, {}).update(params)
    return merged


def _owners(index: SymbolIndex, passings: list[_Passing], types: Types) -> dict[str, list[str]]:
    """Per caller, the functions it hands a parameter that holds one of several
    (``CALLABLE`` + names joined by ``ONE_OF``): what the callee runs through that parameter
    is, for this caller, what it hands (its own callers hand the others). A caller handing
    on a parameter of its own that holds one of several owns none: its callers do."""
    owners: dict[str, list[str]] = {}
    runs = _runs_parameter(index, passings, types)
    for callee, caller, call in passings:
        several = {
            p
            for p, c in types.get(callee, {}).items()
            if c.startswith(CALLABLE) and ONE_OF in c and (callee, p) in runs
        }
        if not several:
            continue
        fn = index.functions[callee]
        offset = _bound(call, fn)
        if offset is None:
            continue
        own = types.get(caller.qualname, {})
        for param, named, passed_on in _handed(call, fn, offset):
            if param not in several:
                continue
            value = _callable(named, index) or own.get(passed_on, "")
            if value.startswith(CALLABLE) and ONE_OF not in value:
                owners.setdefault(caller.qualname, []).append(value.removeprefix(CALLABLE))
    return owners


def _runs_parameter(
    index: SymbolIndex, passings: list[_Passing], types: Types
) -> set[tuple[str, str]]:
    """The (function, parameter) pairs whose callable the function runs in the call: it
    calls the parameter (``cb(x)``, a ``parameter cb`` dispatch fact), or hands it on to a
    function that does. A function that only keeps it (``HOOKS.append(cb)``, ``self.cb =
    cb``) runs nothing now: its callers own nothing."""
    runs = {
        (qualname, param)
        for qualname in types
        for fact in index.functions[qualname].facts
        if (param := fact.called_parameter()) is not None
    }
    handing = [
        (caller.qualname, callee, call) for callee, caller, call in passings if callee in types
    ]
    changed = True
    while changed:  # hands on to a function that runs it, through any number of callers
        changed = False
        for caller, callee, call in handing:
            fn = index.functions[callee]
            offset = _bound(call, fn)
            if offset is None:
                continue
            for param, _named, own in _handed(call, fn, offset):
                if own and (callee, param) in runs and (caller, own) not in runs:
                    runs.add((caller, own))
                    changed = True
    return runs


def _handed(call: CallInfo, fn: FunctionInfo, offset: int) -> list[tuple[str, str, str]]:
    """Per argument of ``call`` that lands on a named parameter of ``fn``: the parameter,
    the function the argument names ("" if none) and the caller's parameter it is ("")."""
    handed = [
        (fn.params[offset + i], _at(call.arg_callables, i), _at(call.arg_params, i))
        for i in range(len(call.args))
        if offset + i < fn.positional
    ]
    named = call.kwarg_callables
    handed += [(k, named.get(k, ""), call.kwarg_params.get(k, "")) for k in call.kwargs]
    return handed


def _at(values: list[str], i: int) -> str:
    return values[i] if i < len(values) else ""


_Passing = tuple[str, FunctionInfo, CallInfo]  # callee, caller, call


def _using_parameters(index: SymbolIndex, closed: set[str]) -> set[str]:
    """The functions whose parameter types would change what the graph resolves: a call on
    a parameter (``order.notify()``), a call through one (``cb(x)``, ``await coro``), a
    parameter handed on to another call, or one kept as an attribute (``self.client =
    client``)."""
    used = {
        held.rpartition(":")[0]
        for info in index.classes.values()
        for held in info.held_parameters.values()
    } & closed
    for qualname in closed - used:
        fn = index.functions[qualname]
        if any(fact.called_parameter() is not None for fact in fn.facts):
            used.add(qualname)  # ``cb(x)``, ``await coro``: runs what its callers hand it
            continue
        for call in fn.calls:
            if call.receiver_param or call.arg_params or call.kwarg_params:
                used.add(qualname)
                break
    return used


def _callers(index: SymbolIndex) -> list[FunctionInfo]:
    # a list: resolving a call may read a library's source into the index
    return [fn for fn in index.functions.values() if not index.is_library(fn.qualname)]


def _passing(
    index: SymbolIndex, graph: CallGraph, closed: set[str], caller: FunctionInfo, call: CallInfo
) -> list[_Passing]:
    callee = graph.resolve_call(call, caller).function
    return [(callee, caller, call)] if callee is not None and callee in closed else []


def _closed(index: SymbolIndex, sites: list[CallSite]) -> set[str]:
    """Project functions whose every caller is a call or a site the scan reads."""
    at_sites = {(s.enclosing_function, s.location.line) for s in sites}
    handed = _handed_names(index.functions.values(), at_sites)
    received = {s.job for s in sites if s.pattern in _OPEN_SITES}
    closed = set()
    for qualname, fn in index.functions.items():
        if fn.handler is not None or qualname in received or fn.positional < 0:
            continue
        if fn.name in handed or (fn.name.startswith("__") and fn.name != "__init__"):
            continue
        if _kinds(fn) - _BINDING:
            continue
        if "<locals>" in qualname or index.is_library(qualname):
            continue
        closed.add(qualname)
    return closed


def _started(index: SymbolIndex, sites: list[CallSite], closed: set[str]) -> dict[str, _Seen]:
    """What the sites that start a function (a thread, a task...) pass it."""
    seen: dict[str, _Seen] = {}
    for site in sites:
        fn = index.functions.get(site.job)
        if fn is None or site.job not in closed or _written_call(site, fn):
            continue
        observed = seen.setdefault(site.job, _Seen())
        offset = _site_offset(site, fn)
        if not site.arguments:
            for param in fn.params[offset:]:  # passed as the scan cannot read (``args=t``)
                observed.add(param, _UNTYPED)
        for argument in site.arguments:
            cls = _class(argument.type, index)
            if not argument.name.startswith("#"):
                if argument.name in fn.params:
                    observed.add(argument.name, cls)
                continue
            at = offset + int(argument.name[1:])
            if 0 < at < fn.positional or (at == 0 and not fn.is_method):
                observed.add(fn.params[at], cls)  # (``self`` is typed by its class)
    return seen


def _written_call(site: CallSite, fn: FunctionInfo) -> bool:
    """``asyncio.create_task(logged(notify(url)))``: the job's own call is written at the
    site, and the enclosing function's calls hold it with what each argument is (a function
    handed over, a coroutine of one): read there, not again here as an untyped value."""
    try:
        node = ast.parse(site.target_source.strip(), mode="eval").body
    except SyntaxError:
        return False
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    return bool(name) and name == fn.name


def _site_offset(site: CallSite, fn: FunctionInfo) -> int:
    """Where a site's first argument lands: after ``self`` for a bound method
    (``Thread(target=self.send, args=(order,))``), at ``self`` for one named through its
    class (``Thread(target=Mailer.send, args=(mailer, order))``)."""
    kinds = _kinds(fn)
    if not fn.is_method or "staticmethod" in kinds:
        return 0
    owner = site.target_source.rpartition(".")[0].rpartition(".")[2]
    return 0 if owner == fn.class_name and "classmethod" not in kinds else 1


def _kinds(fn: FunctionInfo) -> set[str]:
    return {d.rpartition(".")[2] for d in fn.decorators}


def _handed_names(
    functions: Iterable[FunctionInfo], at_sites: set[tuple[str | None, int]]
) -> set[str]:
    """Names handed on as values somewhere: ``map(self.render, rows)`` hands ``render``. A
    site's own call (``Thread(target=notify, args=(order,))``) is read as the site."""
    names = set()
    for fn in functions:
        for call in fn.calls:
            if (fn.qualname, call.span.line) in at_sites:
                continue
            for source in [*call.arg_sources, *call.kwarg_sources.values()]:
                if _DOTTED.fullmatch(source):
                    names.add(source.rpartition(".")[2])
    return names


def _round(
    index: SymbolIndex, passing: list[_Passing], types: Types, seen_before: dict[str, _Seen]
) -> dict[str, _Seen]:
    """What ``passing`` passes, added to a copy of what was seen before."""
    seen = {f: _Seen({p: set(c) for p, c in s.passed.items()}) for f, s in seen_before.items()}
    for callee, caller, call in passing:
        fn = index.functions[callee]
        _observe(seen.setdefault(callee, _Seen()), call, fn, caller, types, index)
    return seen


def _agreed(seen: dict[str, _Seen]) -> Types:
    """The parameters every observation gives one and the same class."""
    found: Types = {}
    for callee, observed in sorted(seen.items()):
        agreed: dict[str, str] = {}
        for param, observations in observed.passed.items():
            classes = observations - {_OMITTED}
            omitted = len(classes) < len(observations)
            if len(classes) == 1 and _UNTYPED not in classes:
                cls = next(iter(classes))
                if not (omitted and cls.startswith(CALLABLE)):
                    agreed[param] = cls
            elif (
                not omitted
                and 1 < len(classes) <= _MAX_HANDED
                and all(c.startswith(CALLABLE) for c in classes)
            ):
                handed = sorted(c.removeprefix(CALLABLE) for c in classes)
                agreed[param] = CALLABLE + ONE_OF.join(handed)
        if agreed:
            found[callee] = agreed
    return found


def _observe(
    seen: _Seen,
    call: CallInfo,
    callee: FunctionInfo,
    caller: FunctionInfo,
    types: Types,
    index: SymbolIndex,
) -> None:
    """Record, per parameter of ``callee``, the class ``call`` passes (``_UNTYPED``: unknown)."""
    offset = _bound(call, callee)
    if offset is None or any(s.startswith("*") for s in call.arg_sources) or "**" in call.kwargs:
        for param in callee.params:  # the call may pass anything anywhere: nothing is typed
            seen.add(param, _UNTYPED)
        return
    own = types.get(caller.qualname, {})
    # A function calling itself with its own parameter in the same place adds no value the
    # parameter could hold: its other callers decide it.
    recursive = caller.qualname == callee.qualname
    for position in range(len(call.args)):
        at = offset + position
        if at >= callee.positional:
            break  # into ``*args``
        if at == 0 and callee.is_method and "staticmethod" not in _kinds(callee):
            continue  # ``Base.method(self, ...)``: ``self`` is typed by its class already
        declared = call.arg_types[position] if position < len(call.arg_types) else ""
        param = call.arg_params[position] if position < len(call.arg_params) else ""
        if recursive and param == callee.params[at]:
            continue  # ``walk(child, visit)`` in ``walk``: hands on what it was given
        named = call.arg_callables[position] if position < len(call.arg_callables) else ""
        seen.add(
            callee.params[at],
            _class(declared, index) or _callable(named, index) or own.get(param, _UNTYPED),
        )
    for name in call.kwargs:
        if name in callee.params:
            declared = call.kwarg_types.get(name, "")
            param = call.kwarg_params.get(name, "")
            if recursive and param == name:
                continue
            named = call.kwarg_callables.get(name, "")
            seen.add(
                name,
                _class(declared, index) or _callable(named, index) or own.get(param, _UNTYPED),
            )
    passed = set(callee.params[offset : offset + len(call.args)]) | set(call.kwargs)
    for param in callee.params[offset:]:
        if param not in passed:
            seen.add(param, _OMITTED)


def _class(name: str, index: SymbolIndex) -> str:
    """A class name the call graph can resolve through: a name, or a project class's
    constructor (``pkg.Mailbox()``); any other call's result is not typed here. Resolved,
    so that two calls naming one class two ways (a re-export, ``pkg.views.str`` and
    ``builtins.str``) agree."""
    if name and _DOTTED.fullmatch(name):
        found = index.resolve(name)
        return found.name if found.kind in _CLASSES else name
    made = name.removesuffix("()")
    if made != name and _DOTTED.fullmatch(made) and index.resolve(made).kind == SymbolKind.CLASS:
        return index.resolve(made).name
    return _UNTYPED


def _callable(name: str, index: SymbolIndex) -> str:
    """``run_with(post_hook, x)``: ``CALLABLE`` + the project function the argument names
    (``CallGraph.passed_callable`` reads it), "" for anything else (a library function's
    work is not read here, a class is typed by ``_class``). ``logged(notify(url))`` hands
    the coroutine of ``notify``, an ``async def``: awaiting it (``await coro``, a call
    through the parameter) runs ``notify``, so it counts as ``notify`` handed over; a
    plain function's call hands whatever it returns, which is not named here."""
    if not name:
        return ""
    called = name.removesuffix("()")
    found = index.resolve(called)
    if found.kind != SymbolKind.FUNCTION or index.is_library(found.name):
        return ""
    if called != name:
        fn = index.functions.get(found.name)
        if fn is None or not fn.is_async:
            return ""
    return f"{CALLABLE}{found.name}"


def _bound(call: CallInfo, callee: FunctionInfo) -> int | None:
    """How many leading parameters the call does not pass (``self``, ``cls``); None when
    the scan cannot tell how the call binds them."""
    kinds = _kinds(callee)
    if not callee.is_method or "staticmethod" in kinds:
        return 0
    if callee.name == "__init__" and not call.target.endswith(".__init__"):
        return 1  # ``Order(...)`` runs ``__init__`` bound
    if "classmethod" in kinds:
        return 1
    if call.receiver in (ReceiverKind.SELF, ReceiverKind.INSTANCE, ReceiverKind.UNKNOWN):
        return 1
    if call.receiver is ReceiverKind.CLASS:
        return 0  # ``Order.method(order, ...)`` passes ``self`` itself
    return None
