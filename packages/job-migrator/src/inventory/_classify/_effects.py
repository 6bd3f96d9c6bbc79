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

from inventory._classify._by_name import guessed_callees, overrides_of_abstract
from inventory._classify._graph import CallGraph
from inventory._classify._local import LocalEffects, repeats_on_retry
from inventory._classify._trace import Found, Trace
from inventory._classify._verdict import MONEY


class EffectAnalysis:
    def __init__(self, graph: CallGraph, local: LocalEffects) -> None:
        self.graph = graph
        self.local = local
        self._traces: dict[str, dict[object, Trace]] = {}
        self._guesses: dict[str, frozenset[str]] = {}
        self._possibles: dict[tuple[Found, str], Found] = {}

    def traces(self, qualname: str) -> list[Trace]:
        """The traces of an analysed function, sorted by location."""
        found = self._traces.get(qualname, {})
        return sorted(found.values(), key=_order)

    def analyse(self, roots: Iterable[str]) -> None:
        """Compute traces for every project function reachable from ``roots``."""
        fresh = [f for f in self._reachable(roots) if f not in self._traces]
        for qualname in fresh:
            fn = self.graph.index.functions[qualname]
            self._traces[qualname] = {t.key: t for t in self.local.of(fn)}
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
        guessed = self._guessed(qualname)
        for callee in self.graph.callees(qualname):
            for trace in list(self._traces.get(callee, {}).values()):
                if trace.found.sql_param and (qualname, callee) in bound:
                    continue  # the caller passes the SQL as a literal: its own effect says what
                candidate = self._behind_guard(qualname, callee, trace)
                if callee in guessed and _maybe(candidate):
                    candidate = self._possible(candidate, callee)
                if candidate.key in own:
                    continue
                old = mine.get(candidate.key)
                if old is None or len(candidate.chain) < len(old.chain):
                    mine[candidate.key] = candidate
                    changed = True
        return changed

    def _guessed(self, qualname: str) -> frozenset[str]:
        """Callees reached only by a guess (a method name on an untyped receiver, the
        overrides of an abstract method): what they do may happen, not must."""
        found = self._guesses.get(qualname)
        if found is None:
            index = self.graph.index
            resolved = {t.function for t in self.graph.targets(qualname) if t.function}
            guessed = {*guessed_callees(index, self.graph.targets(qualname), self.graph.explained)}
            guessed |= {*overrides_of_abstract(index, qualname)}
            found = self._guesses[qualname] = frozenset(guessed - resolved)
        return found

    def _possible(self, trace: Trace, callee: str) -> Trace:
        """``trace`` behind a guessed call (one Found per original and callee, so trace
        keys stay stable and the copy is made once)."""
        key = (trace.found, callee)
        found = self._possibles.get(key)
        if found is None:
            found = self._possibles[key] = Possible.of(trace, callee).found
        return Possible(found, trace.chain)

    def _behind_guard(self, caller: str, callee: str, trace: Trace) -> Trace:
        """``trace`` seen from ``caller``: a repeat behind the caller's dedup guard is marked."""
        found = trace.found
        if found.guard is None and repeats_on_retry(found):
            what = self.local.callee_guard(caller, callee)
            if what is not None:
                return Trace(self.local.guarded(found, what), (caller, *trace.chain))
        return trace.via(caller)


def _order(trace: Trace) -> tuple[str, int, int, str, str]:
    effect = trace.found.effect
    loc = effect.location
    return (loc.path, loc.line, loc.column, effect.kind, effect.api)


def _maybe(trace: Trace) -> bool:
    """Behind a guessed call, an effect may happen: a gap, except money or account state,
    which stays an effect (``unsafe`` is the stricter verdict, and a reviewer must see it)."""
    return not isinstance(trace, Possible) and trace.kind not in MONEY


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
        possible = replace(found, gap=True, effect=effect.model_copy(update={"detail": detail}))
        return cls(possible, trace.chain)

    @property
    def key(self) -> object:
        """One per effect kind: like the gaps, these only need an example each, and the
        kind is what a handler's slow work is told by (the fixpoint stays linear)."""
        return ("possible", self.found.effect.kind)

    def via(self, caller: str) -> Trace:
        return Possible(self.found, (caller, *self.chain))
