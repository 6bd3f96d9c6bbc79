"""Calls a function makes only when its caller sets a flag: ``if synchronous: task.apply()``.

The effects analysis is path-insensitive: what a function may do is everything its body
may reach, whoever calls it. A flag parameter with a falsy default is the one branch a
caller decides by what it writes: ``def enqueue_job(..., synchronous=False)`` runs the job
in the caller only under ``if synchronous:``, and a view that calls
``enqueue_job(job, user)`` never takes that branch. So, one call level deep, a trace of
the callee that starts at a call written under ``if p:`` (``CallInfo.when_param``, for a
parameter never rebound in the callee) is not the caller's when every call the caller
makes of it gives ``p`` a false value it can read: leaves ``p`` out while its default is
falsy (``FunctionInfo.falsy_defaults``), or passes a falsy literal (``notify=False``,
``None``, ``0``, ``""``), by name or by position. ``if p is not None:`` is the same guard
with ``None`` for false (``p is not None`` in ``when_param``). A call that passes anything
else for ``p``, or possibly passes it through ``*args`` / ``**kw``, keeps the trace; an
edge with no call of the caller's written as a call of the callee (a site, a callback, a
receiver a save fires, a task run through ``.apply``) keeps it too, and so does a trace
through a function the callee also reaches otherwise (a table of functions, a callback, a
thread): it may start on the unguarded path. And a function keeps, of the traces of one
effect, one that needs no flag when there is one (``EffectAnalysis._rank``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from inventory.summary import EXPR, NOT_NONE, ArgValue

if TYPE_CHECKING:
    from inventory._classify._graph import CallGraph
    from inventory._classify._target import CallTarget
    from inventory._classify._trace import Trace
    from inventory.summary import CallInfo, FunctionInfo


class ParamGuards:
    """Which of a callee's traces a caller's calls cannot reach, memoised per pair."""

    def __init__(self, graph: CallGraph) -> None:
        self.graph = graph
        self._starts: dict[str, tuple[dict[str, str], dict[tuple[int, int], str]]] = {}
        self._unset: dict[tuple[str, str], frozenset[str]] = {}

    def unset(self, caller: str, callee: str) -> frozenset[str]:
        """The guards of ``callee`` that no call of ``caller``'s passes."""
        key = (caller, callee)
        found = self._unset.get(key)
        if found is None:
            calls = [t.call for t in self.graph.targets(caller) if written_call(t, callee)]
            found = self._unset[key] = self.left_out(calls, callee)
        return found

    def left_out(self, calls: list[CallInfo], callee: str) -> frozenset[str]:
        """The guards of ``callee`` (``p``, ``p is not None``) whose test every one of
        ``calls`` fails; none without a call (the edge is not a call the caller writes)."""
        fn = self.graph.index.functions.get(callee)
        if fn is None or not calls:
            return frozenset()
        guards = {c.when_param for c in fn.calls if c.when_param}
        return frozenset(g for g in guards if not any(_may_pass(c, fn, g) for c in calls))

    def needs(self, callee: str, trace: Trace) -> str:
        """The guard under which ``callee`` starts ``trace``, else ""."""
        by_next, by_place = self._starts_of(callee)
        if len(trace.chain) > 1:
            return by_next.get(trace.chain[1], "")
        where = trace.found.effect.location
        return by_place.get((where.line, where.column), "")

    def _starts_of(self, callee: str) -> tuple[dict[str, str], dict[tuple[int, int], str]]:
        """For ``callee``: the function each guarded call runs (when every call of it is
        under the same guard), and each guarded call's place."""
        found = self._starts.get(callee)
        if found is None:
            by_next: dict[str, set[str]] = {}
            for target in self.graph.targets(callee):
                if target.function:
                    by_next.setdefault(target.function, set()).add(target.call.when_param)
            fn = self.graph.index.functions.get(callee)
            places = {
                (c.span.line, c.span.column): c.when_param
                for c in (fn.calls if fn else [])
                if c.when_param
            }
            # A function also reached otherwise (a table, a callback, a thread) is not
            # the guard's alone: a trace through it may start on the unguarded path.
            otherwise = self.graph.besides_calls(callee)
            single = {
                f: next(iter(g))
                for f, g in by_next.items()
                if len(g) == 1 and "" not in g and f not in otherwise
            }
            found = self._starts[callee] = (single, places)
        return found


def written_call(target: CallTarget, callee: str) -> bool:
    """``target`` is a call of ``callee`` written as one, whose arguments are its: not
    what the framework runs inside another call (``rep.delete()`` firing a receiver,
    ``Skill.objects.create`` running ``save``), nor a task run through its framework
    (``report.apply((pk,))``), each of which hands the function arguments of its own."""
    if target.function != callee or target.run_inside:
        return False
    return target.call.target.rpartition(".")[2] == callee.rpartition(".")[2]


def _may_pass(call: CallInfo, fn: FunctionInfo, guard: str) -> bool:
    """``call`` may give ``fn``'s guard parameter a value its test passes: true for
    ``p``, anything but ``None`` for ``p is not None`` (:data:`NOT_NONE`)."""
    param = guard.removesuffix(NOT_NONE)
    if param == guard:
        return _may_set(call, fn, param, bool, fn.falsy_defaults)
    return _may_set(call, fn, param, _not_none, fn.none_defaults)


def _not_none(value: ArgValue) -> bool:
    return value is not None


def _may_set(
    call: CallInfo,
    fn: FunctionInfo,
    param: str,
    passes: Callable[[ArgValue], bool],
    failing_defaults: list[str],
) -> bool:
    """``call`` may give ``param`` of ``fn`` a value that ``passes``: a passed literal that
    does (an expression, ``"<expr>"``, is any value), a possible pass through ``**`` or
    ``*``, or leaving it out while its default is not one of ``failing_defaults``. A
    method's argument is read at both places it may be (``obj.m(False)``,
    ``Class.m(obj, False)``): failing only when each does."""
    if param in call.kwargs:
        value = call.kwargs[param]
        return value == EXPR or passes(value)
    if "**" in call.kwargs or any(source.startswith("*") for source in call.arg_sources):
        return True
    index = fn.params.index(param) if param in fn.params else -1
    if index < 0:
        return True  # not a parameter as read: keep what the callee does
    if 0 <= fn.positional <= index:  # keyword-only: only a keyword passes it
        return param not in failing_defaults
    bound = 1 if fn.is_method and fn.params and fn.params[0] in ("self", "cls") else 0
    # ``obj.m(False)`` or ``Class.m(obj, False)``: either place may hold the value
    places = {i for i in (index - bound, index) if 0 <= i < len(call.args)}
    if places:
        return any(call.args[i] == EXPR or passes(call.args[i]) for i in places)
    return param not in failing_defaults
