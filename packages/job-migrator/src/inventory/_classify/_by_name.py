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

Deeper down (:func:`guessed_callees`, :func:`overrides_of_abstract`) guesses are
bounded so that they stay local: few classes or one small family, no name a library
base defines, no dunder, no further name guess behind a name guess (``_effects``).

The job is the method when exactly one class defines it, else ``unknown``
with the candidates as the reason. The receiver may still be a library object
with a method of the same name, so a guessed site is never called
``idempotent`` (:func:`guessed_verdict`): at best ``unknown``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from inventory._classify._index import SymbolKind
from inventory.models import CallSite, Idempotency

if TYPE_CHECKING:  # _graph calls guessed_callees: no import at run time
    from inventory._classify._effects import EffectAnalysis
    from inventory._classify._graph import CallGraph, CallTarget
    from inventory._classify._index import SymbolIndex
    from inventory._classify._trace import Trace
    from inventory.summary import CallInfo, FunctionInfo

GUESSED = "the receiver's type is not known here: "
_UNKNOWN = "?."
_RESULT = "()."
_NOT_IMPLEMENTED = "NotImplementedError"
_MAX_CANDIDATES = 16
_FEW = 3  # deeper down, a name defined by at most this many classes is followed
# Deeper down, a family (a base and its overrides) is followed up to this many classes; a
# wider one is a plugin registry (loggers, hooks, providers), and whichever plugin is
# configured runs: a plain gap, not the union of every plugin's work.
_WIDE = 6
_CONTAINER_METHODS = frozenset(
    {n for t in (dict, list, str, set, bytes, tuple, int, float) for n in dir(t)}
    | {"info", "debug", "warning", "warn", "error", "exception", "critical", "log"}
)

SiteMaker = Callable[["CallTarget", str, str], CallSite]  # (target, job, reason) -> site
IsSlow = Callable[[list["Trace"]], bool]
Explained = Callable[["CallInfo", str], bool]  # does the catalogue say what a call does?


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
        if not _untyped(target, graph.explained):
            continue
        method = target.name.rsplit(".", 1)[-1]
        candidates = _candidates(index, method, handler.qualname)
        if not candidates:
            continue
        analysis.analyse(candidates)
        slow = [c for c in candidates if is_slow(analysis.traces(c))]
        if not slow or (len(slow) < len(candidates) and not _one_family(index, candidates)):
            continue
        job = candidates[0] if len(candidates) == 1 else ""
        sites.append(make(target, job, _reason(method, candidates, slow)))
    return sites


def guessed_callees(
    index: SymbolIndex, targets: list[CallTarget], explained: Explained
) -> list[str]:
    """Deeper down, ``ticket.send()`` on a receiver of unknown type may run the project's
    ``send`` when few classes define it (at most ``_FEW``), or one family (a base and its
    overrides) of at most ``_WIDE`` classes: the callers' traces include what those methods
    may do (gaps, see ``_effects.Possible``; money stays an effect). The call stays a gap
    too (the receiver may be a library object), so this only adds effects, never removes
    one. Not guessed: a wider set (the call is a plain gap), and a name that a library
    base of a candidate defines (a project form overriding a method of the library's
    ``Form``: the receiver is as likely any other form, whose library method runs).
    ``_effects`` follows a guess one level: not through a further name guess."""
    found: list[str] = []
    for target in targets:
        if not _untyped(target, explained):
            continue
        method = target.name.rsplit(".", 1)[-1]
        candidates = _candidates(index, method, "")
        if not candidates:
            continue
        few = len(candidates) <= _FEW
        if not (few or (len(candidates) <= _WIDE and _one_family(index, candidates))):
            continue  # too wide to guess: decided before any library source is read
        if not _library_defines(index, candidates, method):
            found += candidates
    return found


def overrides_of_abstract(index: SymbolIndex, qualname: str) -> list[str]:
    """A method with no body of its own (``raise NotImplementedError``, ``pass``, ``...``,
    ``@abstractmethod``) runs, when called, one of its subclasses' overrides: a call
    resolved to it is a call of any of them (``provider.get_token()`` typed as the base
    ``OAuthProvider``). None for a dunder (``Base()`` and ``super().__init__()`` run the
    named class's own ``__init__``), nor when more than ``_WIDE`` classes override it
    (a plugin hook: see :func:`too_many_overrides`)."""
    found = _overrides(index, qualname)
    return found if len(found) <= _WIDE else []


def too_many_overrides(index: SymbolIndex, qualname: str) -> int:
    """How many overrides an empty method has when they are too many to follow, else 0:
    the call is then a plain gap (which plugin runs is only known at run time)."""
    found = _overrides(index, qualname)
    return len(found) if len(found) > _WIDE else 0


def plugin_overrides(index: SymbolIndex, qualname: str) -> list[str]:
    """The overrides of an empty method with too many to follow (at most
    ``_MAX_CANDIDATES`` of them), for a request handler's slow work only: the handler that
    calls ``provider.get_token()`` runs one of them inline, whichever is configured."""
    found = _overrides(index, qualname)
    return found[:_MAX_CANDIDATES] if len(found) > _WIDE else []


def _overrides(index: SymbolIndex, qualname: str) -> list[str]:
    fn = index.functions.get(qualname)
    if fn is None or fn.class_name is None or not _abstract(fn):
        return []
    owner, _, method = qualname.rpartition(".")
    if method.startswith("__") and method.endswith("__"):
        return []
    found = [
        f"{o}.{method}"
        for o in index.classes_defining(method)
        if o != owner and not index.is_library(o) and owner in index.mro(o)
    ]
    return [q for q in found if q in index.functions]


def _abstract(fn: FunctionInfo) -> bool:
    if any(d.endswith("abstractmethod") for d in fn.decorators):
        return True
    return not fn.facts and all(c.target.endswith(_NOT_IMPLEMENTED) for c in fn.calls)


def guessed_verdict(site: CallSite, verdict: Idempotency) -> Idempotency:
    """A site whose job was guessed by method name is never ``idempotent``."""
    if verdict == Idempotency.IDEMPOTENT and site.unresolved_reason.startswith(GUESSED):
        return Idempotency.UNKNOWN
    return verdict


def _untyped(target: CallTarget, explained: Explained) -> bool:
    """A method call whose receiver's type was lost: ``?.send``, or an attribute of what an
    unresolved call returned (``billing.lookup().send``), unless the catalogue explains the
    call (``CacheKey.objects.filter().delete`` is a queryset's delete; ``cache_keys.delete``
    matches an entry by its receiver's name): then the entry speaks for it."""
    if target.function is not None:
        return False
    lost = target.name.startswith(_UNKNOWN) or _RESULT in target.name.rpartition(".")[0] + "."
    return lost and not explained(target.call, target.name)


def _candidates(index: SymbolIndex, method: str, handler: str) -> list[str]:
    if method in _CONTAINER_METHODS or (method.startswith("__") and method.endswith("__")):
        return []
    owners = [o for o in index.classes_defining(method) if not index.is_library(o)]
    found = [
        q
        for o in owners
        if (q := f"{o}.{method}") in index.functions
        and q != handler
        and index.functions[q].handler is None  # another view's ``post``: not a helper
    ]
    return found if len(found) <= _MAX_CANDIDATES else []


def _library_defines(index: SymbolIndex, candidates: list[str], method: str) -> bool:
    """A candidate's class inherits ``method`` from a library base (it overrides a library
    method): the name is the library's, and the project's overrides are no sample of what
    the receiver runs. Bases whose source cannot be read are given the benefit of the
    doubt (the call is a gap anyway). Memoised per (candidates, method) on the index:
    the same untyped call recurs in many functions, and the answer reads library code."""
    key = (tuple(candidates), method)
    memo = index.by_name_memo
    if key not in memo:
        memo[key] = _library_defines_uncached(index, candidates, method)
    return memo[key]


def _library_defines_uncached(index: SymbolIndex, candidates: list[str], method: str) -> bool:
    for candidate in candidates:
        owner = candidate.rsplit(".", 1)[0]
        for base in index.mro(owner)[1:]:
            if base in index.classes and not index.is_library(base):
                continue  # a project base: its own method, if any, is a candidate
            found = index.resolve_in_library(f"{base}.{method}")
            if found.kind == SymbolKind.FUNCTION:
                return True
    return False


def _one_family(index: SymbolIndex, candidates: list[str]) -> bool:
    """One candidate's class is a base of every other candidate's class."""
    owners = [c.rsplit(".", 1)[0] for c in candidates]
    lines = {o: set(index.mro(o)) for o in owners}
    return any(all(root in lines[o] for o in owners) for root in owners)


def _reason(method: str, candidates: list[str], slow: list[str]) -> str:
    names = ", ".join(c.rsplit(".", 2)[-2] for c in candidates[:3])
    more = f" and {len(candidates) - 3} more" if len(candidates) > 3 else ""
    where = "it" if len(candidates) == 1 else f"{len(slow)} of them"
    return (
        f"{GUESSED}{method} is defined on {names}{more} in the project, with slow work in "
        f"{where}; check which class the receiver is"
    )
