"""Each site's surroundings (``CallSite.surroundings``): the ``try``/``except`` and
``transaction.atomic`` blocks around it, from its function's guards
(``FunctionInfo.guards``, ``_extract.detectors._guards``).

A handler catches what the call raises when it is in the site's own function; a
transaction rolls back when the call raises anywhere under it, so a ``with atomic():``
(or ``@atomic``) of a function the site's function is nested in counts too (a nested def
defined and called inside the block). ``@transaction.non_atomic_requests`` is read on the
site's own function, the view Django would wrap.
"""

from __future__ import annotations

from collections.abc import Mapping

from inventory.models import CallSite, Surroundings
from inventory.summary import FileSummary, FunctionInfo, GuardKind

_LOCALS = ".<locals>."
_OPT_OUT = "non_atomic_requests"


def with_surroundings(
    sites: list[CallSite], functions: Mapping[str, FunctionInfo]
) -> list[CallSite]:
    found = []
    for site in sites:
        around = surroundings_of(site.enclosing_function or "", site.location.line, functions)
        changed = around != Surroundings()
        found.append(site.model_copy(update={"surroundings": around}) if changed else site)
    return found


def surroundings_at(summary: FileSummary, line: int) -> Surroundings:
    """What encloses ``line`` of the summarised module: the innermost function there."""
    functions = {f.qualname: f for f in summary.functions}
    inside = [
        f for f in summary.functions if f.span.line <= line <= (f.span.end_line or f.span.line)
    ]
    innermost = max(inside, key=lambda f: f.span.line, default=None)
    return surroundings_of(innermost.qualname if innermost else "", line, functions)


def surroundings_of(
    qualname: str, line: int, functions: Mapping[str, FunctionInfo]
) -> Surroundings:
    own = functions.get(qualname)
    if own is None:
        return Surroundings()
    caught = [
        n
        for g in own.guards
        if g.kind is GuardKind.CAUGHT and g.first <= line <= g.last
        for n in g.lines
    ]
    atomic = [
        n
        for fn in _enclosing(own.qualname, functions)
        for g in fn.guards
        if g.kind is GuardKind.ATOMIC and g.first <= line <= g.last
        for n in g.lines
    ]
    return Surroundings(
        caught_at=sorted(caught),
        atomic_at=sorted(set(atomic)),
        non_atomic_requests=any(d.rpartition(".")[2] == _OPT_OUT for d in own.decorators),
    )


def _enclosing(qualname: str, functions: Mapping[str, FunctionInfo]) -> list[FunctionInfo]:
    """The function and each function it is nested in (``f.<locals>.g`` -> g, f), methods
    of a class nested in a function included (``f.<locals>.C.m`` -> m, f)."""
    found: list[FunctionInfo] = []
    while qualname:
        fn = functions.get(qualname)
        if fn is not None:
            found.append(fn)
        qualname = qualname.rpartition(_LOCALS)[0]
    return found
