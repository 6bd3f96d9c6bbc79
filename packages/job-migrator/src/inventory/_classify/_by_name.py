"""Slow calls in a request handler on a receiver whose type is not known.

``ticket.send(roles)``, ``database.db_engine_spec.get_oauth2_token(config, code)``,
``await provider.get_token(code)``: the handler calls a method on an object the
resolver could not type (a model fetched by a helper, a value of a dict, a
plugin chosen by name). The call still runs whatever the receiver's class does,
inline, inside the request. When the project's classes that define a method of
that name do slow work (mail, HTTP, payment...), the call is reported as a
direct-call site if either

* every such class does slow work in it (whichever the receiver is, the call is
  slow), or
* they are one family: one of them is a base of all the others (a provider base
  class and its overrides), and at least one does slow work.

Methods named like the builtin containers' (``get``, ``update``, ``pop``) or a
logger's are never guessed: a dict or a logger is the likelier receiver.

Deeper down (``_guesses``: :func:`guessed_callees`, :func:`overrides_of_abstract`)
guesses are bounded so that they stay local: few classes or one small family, no name
a library base defines, no dunder, no further name guess behind a name guess (``_effects``).

The job is the method when exactly one class defines it, else ``unknown``
with the candidates as the reason. The receiver may still be a library object
with a method of the same name, so a guessed site is never called
``idempotent`` (``_guesses.guessed_verdict``): at best ``unknown``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from inventory._classify._guesses import GUESSED, candidates_of, one_family, untyped
from inventory._classify._index import UNSTORED
from inventory.models import CallSite

if TYPE_CHECKING:
    from inventory._classify._effects import EffectAnalysis
    from inventory._classify._graph import CallGraph
    from inventory._classify._target import CallTarget
    from inventory._classify._trace import Trace
    from inventory.summary import FunctionInfo

SiteMaker = Callable[["CallTarget", str, str], CallSite]  # (target, job, reason) -> site
IsSlow = Callable[[list["Trace"]], bool]


def guessed_sites(
    handler: FunctionInfo,
    graph: CallGraph,
    analysis: EffectAnalysis,
    targets: list[CallTarget],
    is_slow: IsSlow,
    make: SiteMaker,
) -> list[CallSite]:
    """Sites for the handler's slow calls on receivers of unknown type (see the module)."""
    index = graph.index
    sites: list[CallSite] = []
    for target in targets:
        if not untyped(target, graph.explained):
            continue
        method = target.name.rsplit(".", 1)[-1]
        candidates = candidates_of(index, method, handler.qualname)
        if not candidates and target.name.startswith(UNSTORED):
            sites.append(make(target, "", _unstored(target)))
        if not candidates:
            continue
        analysis.analyse(candidates)
        slow = [c for c in candidates if is_slow(analysis.traces(c))]
        if not slow or (len(slow) < len(candidates) and not one_family(index, candidates)):
            continue
        job = candidates[0] if len(candidates) == 1 else ""
        sites.append(make(target, job, _reason(method, candidates, slow)))
    return sites


def _unstored(target: CallTarget) -> str:
    """``current_app.extensions["mail"].send``, with nothing registering ``"mail"``."""
    key = target.name[len(UNSTORED) :].partition(".")[0].partition(":")[2]
    method = target.name.rpartition(".")[2]
    written = f"{target.call.receiver_source}.{method}" if target.call.receiver_source else method
    return (
        f"{written}: a call through the app's extension {key!r}, which no module of the scan "
        "registers (app.extensions[...] = ...), or whose attribute's type is not known: "
        "what it runs is not known"
    )


def _reason(method: str, candidates: list[str], slow: list[str]) -> str:
    names = ", ".join(c.rsplit(".", 2)[-2] for c in candidates[:3])
    more = f" and {len(candidates) - 3} more" if len(candidates) > 3 else ""
    where = "it" if len(candidates) == 1 else f"{len(slow)} of them"
    return (
        f"{GUESSED}{method} is defined on {names}{more} in the project, with slow work in "
        f"{where}; check which class the receiver is"
    )
