"""Interprocedural effects: a worklist fixpoint over the reachable call graph.

Every function starts with its local traces; a function's set grows with
its callees' traces (chain prefixed with the caller) until nothing changes.
Traces are keyed by :attr:`Trace.key`, and a trace is only replaced by a
strictly shorter chain, so the iteration is monotone over a finite set and
terminates on recursion and cycles; the chains kept are shortest call paths,
hence real and simple.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from dataclasses import replace

from inventory._classify._dispatch import empty_method
from inventory._classify._graph import SIGNAL_DISPATCH, CallGraph
from inventory._classify._guesses import (
    all_overrides,
    guessed_callees,
    overrides_of_abstract,
    too_many_overrides,
)
from inventory._classify._index import SymbolIndex
from inventory._classify._local import LocalEffects, repeats_on_retry
from inventory._classify._param_guards import ParamGuards, written_call
from inventory._classify._target import CallTarget
from inventory._classify._trace import Found, GapReason, Trace, location
from inventory._classify._verdict import MONEY
from inventory.models import Effect, EffectKind

_SUPER = "super()"


class EffectAnalysis:
    def __init__(self, graph: CallGraph, local: LocalEffects) -> None:
        self.graph = graph
        self.local = local
        self._traces: dict[str, dict[object, Trace]] = {}
        self._guesses: dict[str, tuple[frozenset[str], frozenset[str]]] = {}
        self._possibles: dict[tuple[Found, str], Found] = {}
        self._one_ofs: dict[tuple[Found, str], Found] = {}
        self._cuts: dict[str, Found] = {}  # guessed callee -> the gap its own guesses leave
        self._super_only: dict[str, frozenset[str]] = {}
        self.guards = ParamGuards(graph)

    def traces(self, qualname: str) -> list[Trace]:
        """The traces of an analysed function, sorted by location."""
        found = self._traces.get(qualname, {})
        return sorted(found.values(), key=_order)

    def traces_of_call(self, target: CallTarget, qualname: str) -> list[Trace]:
        """What one call of ``qualname`` may do: its traces but those that start under a
        flag the call leaves at its falsy default (``_param_guards``; only for a call
        written as one of ``qualname``, whose arguments are the function's)."""
        traces = self.traces(qualname)
        if not written_call(target, qualname):
            return traces
        unset = self.guards.left_out([target.call], qualname)
        return (
            [t for t in traces if self.guards.needs(qualname, t) not in unset] if unset else traces
        )

    def analyse(self, roots: Iterable[str]) -> None:
        """Compute traces for every project function reachable from ``roots``."""
        fresh = [f for f in self._reachable(roots) if f not in self._traces]
        for qualname in fresh:
            fn = self.graph.index.functions[qualname]
            own = self._dispatch(qualname) or [*self.local.of(fn), *self._plugin_hook(qualname)]
            self._traces[qualname] = {t.key: t for t in own}
        self._fixpoint(fresh)

    def _reachable(self, roots: Iterable[str]) -> list[str]:
        """Not yet analysed functions reachable from ``roots``: an analysed one's callees
        were analysed with it, so the walk stops there (``analyse`` is called again for
        each handler's guessed callees)."""
        functions = self.graph.index.functions
        done = self._traces
        seen = {r for r in roots if r in functions and r not in done}
        todo = deque(sorted(seen))
        while todo:
            for callee in self.graph.callees(todo.popleft()):
                if callee in functions and callee not in seen and callee not in done:
                    seen.add(callee)
                    todo.append(callee)
        return sorted(seen)

    def _fixpoint(self, functions: list[str]) -> None:
        callers = self._callers(functions)
        work = deque(functions)
        queued = set(functions)
        while work:
            current = work.popleft()
            queued.discard(current)
            if self._absorb_callees(current):
                for caller in callers.get(current, ()):
                    if caller not in queued:
                        queued.add(caller)
                        work.append(caller)

    def _callers(self, functions: list[str]) -> dict[str, list[str]]:
        callers: dict[str, list[str]] = {}
        for caller in functions:
            for callee in self.graph.callees(caller):
                callers.setdefault(callee, []).append(caller)
        return callers

    def _absorb_callees(self, qualname: str) -> bool:
        mine = self._traces[qualname]
        # What the body does itself is always the shortest chain: never shadow it.
        own = {t.found.summary_key for t in mine.values() if len(t.chain) == 1}
        changed = False
        bound = self.local.sql_bound
        named, overrides = self._guessed(qualname)
        through_super = self._through_super(qualname)
        for callee in self.graph.callees(qualname):
            unset = self.guards.unset(qualname, callee)
            for trace in list(self._traces.get(callee, {}).values()):
                if trace.found.sql_param and (qualname, callee) in bound:
                    continue  # the caller passes the SQL as a literal: its own effect says what
                if unset and self.guards.needs(callee, trace) in unset:
                    continue  # ``if synchronous: ...`` in the callee, a flag the caller leaves out
                if callee in through_super and self._via_override(trace, callee):
                    continue  # ``super().hook()`` runs the base's empty hook, no override
                candidate = self._behind_guard(qualname, callee, trace)
                if callee in named:
                    candidate = self._guess(candidate, callee)
                elif callee in overrides:
                    candidate = self._override(candidate, callee)
                if candidate.key in own:
                    continue
                old = mine.get(candidate.key)
                if old is None or self._rank(qualname, candidate) < self._rank(qualname, old):
                    mine[candidate.key] = candidate
                    changed = True
        return changed

    def _guess(self, trace: Trace, callee: str) -> Trace:
        """``trace`` of ``callee``, guessed by method name, seen from its caller. A name
        guess is followed one level: what the callee reaches through name guesses of its
        own is no sample of what the call runs (chained, guesses reach half of a big
        project), so it is cut to one gap. Money stays an effect (``unsafe`` is the
        stricter verdict, and a reviewer must see it); anything else may happen: a gap
        (see :class:`Possible`)."""
        if isinstance(trace, Guessed):
            return NamedPossible(self._cut(callee), trace.chain[:2])
        if trace.kind in MONEY:
            return Guessed(trace.found, trace.chain)
        return NamedPossible(self._possible(trace, callee), trace.chain)

    def _override(self, trace: Trace, callee: str) -> Trace:
        """``trace`` of an override of the empty method a call resolved to. The receiver's
        declared type bounds what runs: one of its class's overrides (at most ``_WIDE``,
        all in the scanned tree), so each is a callee and its effects are effects of the
        call, marked with the class (``if the receiver is X``) and inexact (the verdict's
        confidence is medium), as for a concrete base method's overrides
        (``_graph``'s subclass dispatch). What an override reaches through a guess stays
        what it was (a gap, money aside)."""
        if isinstance(trace, Possible) or trace.found.gap:
            return trace
        key = (trace.found, callee)
        found = self._one_ofs.get(key)
        if found is None:
            effect = trace.found.effect
            owner = callee.rsplit(".", 2)[-2]
            detail = f"if the receiver is {owner}: {effect.detail}".rstrip(": ")
            update = {"detail": detail}
            found = replace(trace.found, exact=False, effect=effect.model_copy(update=update))
            self._one_ofs[key] = found
        return Trace(found, trace.chain)

    def _cut(self, callee: str) -> Found:
        found = self._cuts.get(callee)
        if found is None:
            fn = self.graph.index.functions[callee]
            effect = Effect(
                kind=EffectKind.DYNAMIC_CALL,
                location=location(self.graph.index.function_path(callee), fn.span),
                api=callee,
                chain=[callee],
                detail=(
                    "a guessed callee: what it reaches through guessed calls of its own is "
                    "not followed"
                ),
            )
            found = self._cuts[callee] = Found(effect, exact=False, gap=True)
        return found

    def _dispatch(self, qualname: str) -> list[Trace]:
        """Django's or blinker's ``Signal.send`` reached by a send whose signal has no
        receiver in the project (``_graph.SIGNAL_DISPATCH``): one gap naming the send."""
        if qualname not in SIGNAL_DISPATCH:
            return []
        index = self.graph.index
        fn = index.functions[qualname]
        effect = Effect(
            kind=EffectKind.DYNAMIC_CALL,
            location=location(index.function_path(qualname), fn.span),
            api=qualname,
            chain=[qualname],
            detail=(
                "a signal no receiver of the project listens to: what runs is what other "
                "packages connect to it, only known at run time"
            ),
        )
        gap = Found(effect, exact=False, gap=True, why_unresolved=GapReason.RECEIVERS_ELSEWHERE)
        return [Trace(gap, (qualname,))]

    def _plugin_hook(self, qualname: str) -> list[Trace]:
        """An empty method overridden by too many classes to follow (a plugin hook), or
        one of a ``typing.Protocol`` (any class with the method matches it, no subclass
        needed): a call of it runs an implementation only known at run time, a gap."""
        index = self.graph.index
        count = too_many_overrides(index, qualname)
        fn = index.functions[qualname]
        if count:
            detail = (
                f"has no body of its own and {count} classes override it: which one runs "
                "is only known at run time"
            )
            why = GapReason.OVERRIDES
        elif fn.class_name and _protocol(index, qualname) and empty_method(fn):
            detail = (
                "is a method of a Protocol, with no body of its own: what runs is the "
                "implementation the caller holds, only known at run time"
            )
            why = GapReason.PROTOCOL
        else:
            return []
        effect = Effect(
            kind=EffectKind.DYNAMIC_CALL,
            location=location(index.function_path(qualname), fn.span),
            api=qualname,
            chain=[qualname],
            detail=detail,
        )
        return [Trace(Found(effect, exact=False, gap=True, why_unresolved=why), (qualname,))]

    def _through_super(self, qualname: str) -> frozenset[str]:
        """Empty methods every call of which in ``qualname`` is ``super().m()``: the base's
        own (empty) method runs, not a sibling's override, unless a project class also
        inherits from a sibling (cooperative multiple inheritance: ``super()`` then runs
        the next class of the instance's MRO, which may be that sibling)."""
        found = self._super_only.get(qualname)
        if found is None:
            calls: dict[str, bool] = {}
            for target in self.graph.targets(qualname):
                if target.function:
                    is_super = target.call.receiver_source == _SUPER
                    calls[target.function] = calls.get(target.function, True) and is_super
            owner = qualname.rsplit(".", 1)[0]
            found = self._super_only[qualname] = frozenset(
                f for f, s in calls.items() if s and self._no_sibling(owner, f)
            )
        return found

    def _via_override(self, trace: Trace, callee: str) -> bool:
        """``trace`` (of the empty method ``callee``) comes from one of its overrides, or is
        the gap its too many overrides leave (``_plugin_hook``): both stand for what an
        override does, and ``super()`` runs none."""
        chain = trace.chain
        if chain == (callee,):
            return trace.found.gap and trace.found.why_unresolved is GapReason.OVERRIDES
        return len(chain) > 1 and chain[1] in self._guessed(chain[0])[1]

    def _no_sibling(self, owner: str, base_method: str) -> bool:
        """``owner`` calls ``super().m()`` to the empty ``base_method``: no project class
        puts another override of it after ``owner`` in its MRO (however many there are: a
        plugin hook's too)."""
        index = self.graph.index
        overrides = all_overrides(index, base_method)
        others = {o.rsplit(".", 1)[0] for o in overrides} - {owner}
        if not overrides or not others:
            return bool(overrides)
        # Only ``owner`` and the classes below it have ``owner`` in their order.
        for cls in (owner, *self.graph.dispatch.below(owner)):
            mro = index.mro(cls)
            if owner in mro and any(o in mro[mro.index(owner) + 1 :] for o in others):
                return False
        return True

    def _guessed(self, qualname: str) -> tuple[frozenset[str], frozenset[str]]:
        """Callees reached only by a guess: by method name on an untyped receiver, and the
        overrides of an empty method. What they do may happen, not must."""
        found = self._guesses.get(qualname)
        if found is None:
            index = self.graph.index
            resolved = {t.function for t in self.graph.targets(qualname) if t.function}
            named = {*guessed_callees(index, self.graph.targets(qualname), self.graph.explained)}
            overrides = {*overrides_of_abstract(index, qualname)} - named
            found = frozenset(named - resolved), frozenset(overrides - resolved)
            self._guesses[qualname] = found
        return found

    def _possible(self, trace: Trace, callee: str) -> Found:
        """``trace``'s Found behind a guessed call (one per original and callee, so trace
        keys stay stable and the copy is made once)."""
        key = (trace.found, callee)
        found = self._possibles.get(key)
        if found is None:
            found = self._possibles[key] = Possible.of(trace, callee).found
        return found

    def _rank(self, owner: str, trace: Trace) -> tuple[bool, bool, int]:
        """Which of two traces of one key ``owner`` may keep: one that needs no guess, then
        one that starts with no call under a flag of ``owner``'s (a caller leaving the flag
        out drops such a trace, so the effect must be kept by a path that does not need
        it when there is one), then the shorter chain (a strict order over a finite set:
        the fixpoint still terminates). A NamedPossible is a Guessed."""
        flagged = bool(self.guards.needs(owner, trace))
        return isinstance(trace, Guessed), flagged, len(trace.chain)

    def _behind_guard(self, caller: str, callee: str, trace: Trace) -> Trace:
        """``trace`` seen from ``caller``: a repeat behind the caller's dedup guard is marked."""
        found = trace.found
        if found.guard is None and repeats_on_retry(found):
            what = self.local.callee_guard(caller, callee)
            if what is not None:
                guarded = self.local.guarded(found, what)
                return type(trace)(guarded, (caller, *trace.chain))
        return trace.via(caller)


def _order(trace: Trace) -> tuple[str, int, int, str, str]:
    effect = trace.found.effect
    loc = effect.location
    return (loc.path, loc.line, loc.column, effect.kind, effect.api)


class Guessed(Trace):
    """A trace reached through a call guessed by method name (its chain holds one): not
    followed through a further name guess."""

    __slots__ = ()

    def via(self, caller: str) -> Trace:
        return type(self)(self.found, (caller, *self.chain))


class Possible(Trace):
    """A trace reached through a guessed call: it may happen, so it is a gap for the verdict
    (never evidence of idempotency, never certain enough for ``non_idempotent``), kept apart
    from the other gaps so that a request handler's slow work is still seen."""

    __slots__ = ()

    @classmethod
    def of(cls, trace: Trace, callee: str) -> Possible:
        found = trace.found
        effect = found.effect
        detail = f"if the receiver is {callee.rsplit('.', 2)[-2]}: {effect.detail}".rstrip(": ")
        update = {"detail": detail}
        possible = replace(
            found, gap=True, guessed_via=callee, effect=effect.model_copy(update=update)
        )
        return cls(possible, trace.chain)

    @property
    def key(self) -> object:
        """One per effect kind: like the gaps, these only need an example each, and the
        kind is what a handler's slow work is told by (the fixpoint stays linear)."""
        return ("possible", self.found.effect.kind)

    def via(self, caller: str) -> Trace:
        return type(self)(self.found, (caller, *self.chain))


class NamedPossible(Possible, Guessed):
    """A :class:`Possible` whose chain holds a name guess."""

    __slots__ = ()


_PROTOCOLS = frozenset({"typing.Protocol", "typing_extensions.Protocol"})


def _protocol(index: SymbolIndex, method: str) -> bool:
    """The method's class is a ``typing.Protocol`` (a structural type: its implementations
    need not derive from it)."""
    owner = method.rpartition(".")[0]
    info = index.classes.get(owner)
    return info is not None and any(b in _PROTOCOLS for b in info.bases)
