"""What a call on a receiver of unknown type may run: the bounded guesses by method name.

``ticket.send()`` on a receiver the resolver could not type may run the project's
``send``. This module names the candidates (:func:`candidates_of`) and bounds the
guesses deeper down (:func:`guessed_callees`, :func:`overrides_of_abstract`) so that
they stay local: few classes or one small family, no name a library base defines, no
dunder, no further name guess behind a name guess (``_effects``). A request handler's
guessed sites are made in ``_by_name``; a guessed site is never ``idempotent``
(:func:`guessed_verdict`).

Methods named like the builtin containers' (``get``, ``update``, ``pop``) or a
logger's are never guessed: a dict or a logger is the likelier receiver.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from inventory._classify._dispatch import empty_method
from inventory._classify._index import SymbolKind
from inventory._extract._library import LOG_METHODS
from inventory.models import CallSite, Idempotency

if TYPE_CHECKING:
    from inventory._classify._index import SymbolIndex
    from inventory._classify._target import CallTarget
    from inventory.summary import CallInfo

GUESSED = "the receiver's type is not known here: "
_UNKNOWN = "?."
_RESULT = "()."
_MAX_CANDIDATES = 16
_FEW = 3  # deeper down, a name defined by at most this many classes is followed
# Deeper down, a family (a base and its overrides) is followed up to this many classes; a
# wider one is a plugin registry (loggers, hooks, providers), and whichever plugin is
# configured runs: a plain gap, not the union of every plugin's work.
_WIDE = 6
_CONTAINER_METHODS = frozenset(
    {n for t in (dict, list, str, set, bytes, tuple, int, float) for n in dir(t)} | LOG_METHODS
)

Explained = Callable[["CallInfo", str], bool]  # does the catalogue say what a call does?


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
        if not untyped(target, explained):
            continue
        method = target.name.rsplit(".", 1)[-1]
        candidates = candidates_of(index, method, "")
        if not candidates:
            continue
        few = len(candidates) <= _FEW
        if not (few or (len(candidates) <= _WIDE and one_family(index, candidates))):
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


def all_overrides(index: SymbolIndex, qualname: str) -> list[str]:
    """Every project override of an empty method, however many (none for a dunder)."""
    return _overrides(index, qualname)


def _overrides(index: SymbolIndex, qualname: str) -> list[str]:
    fn = index.functions.get(qualname)
    if fn is None or fn.class_name is None or not empty_method(fn):
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


def guessed_verdict(site: CallSite, verdict: Idempotency) -> Idempotency:
    """A site whose job was guessed by method name is never ``idempotent``."""
    if verdict == Idempotency.IDEMPOTENT and site.unresolved_reason.startswith(GUESSED):
        return Idempotency.UNKNOWN
    return verdict


def untyped(target: CallTarget, explained: Explained) -> bool:
    """A method call whose receiver's type was lost: ``?.send``, or an attribute of what an
    unresolved call returned (``billing.lookup().send``), unless the catalogue explains the
    call (``CacheKey.objects.filter().delete`` is a queryset's delete; ``cache_keys.delete``
    matches an entry by its receiver's name): then the entry speaks for it."""
    if target.function is not None:
        return False
    lost = target.name.startswith(_UNKNOWN) or _RESULT in target.name.rpartition(".")[0] + "."
    return lost and not explained(target.call, target.name)


def candidates_of(index: SymbolIndex, method: str, handler: str) -> list[str]:
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


def one_family(index: SymbolIndex, candidates: list[str]) -> bool:
    """One candidate's class is a base of every other candidate's class."""
    owners = [c.rsplit(".", 1)[0] for c in candidates]
    lines = {o: set(index.mro(o)) for o in owners}
    return any(all(root in lines[o] for o in owners) for root in owners)
