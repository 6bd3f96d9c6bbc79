"""The soundness rule's half in a function body: which calls nothing explains.

A call is explained when the scan read its source (a project function, or a
library function read from the environment: the call graph follows those), when
an ``[[effect]]`` entry says what it does, or when a ``[[pure]]`` entry says it
does nothing a retry could repeat. Every other call is a *gap*: finding no effect
behind it is no evidence that it has none, so a job reaching one is never
``idempotent`` (``_verdict``).
"""

from __future__ import annotations

from collections.abc import Callable

from inventory._catalogue import Catalogue, api_name
from inventory._classify._dispatch import MAX_OVERRIDES
from inventory._classify._index import SymbolKind
from inventory._classify._target import CallTarget
from inventory._classify._trace import Found, GapReason, location
from inventory.models import Effect, EffectKind
from inventory.summary import CallInfo, FunctionInfo

_UNKNOWN = "?."
_RESULT = "()."  # a method called on the result of a call
# Kinds whose call runs nothing we could not see: a project module or class being
# built (its __init__, when the project defines one, is a call edge of its own).
_SEEN = frozenset({SymbolKind.FUNCTION, SymbolKind.CLASS, SymbolKind.MODULE})


class Gaps:
    """Turns a call the catalogue has no effect for into a gap, unless it is known pure."""

    def __init__(
        self, catalogue: Catalogue, library_gap: Callable[[str], str | None] | None = None
    ) -> None:
        self.catalogue = catalogue
        # top-level module -> why its source was not read ("not installed in ..."), or None.
        self.library_gap = library_gap or (lambda _top: None)

    def of(self, target: CallTarget, fn: FunctionInfo, path: str) -> Found | None:
        """The gap ``target`` leaves in ``fn``, or None when the call is explained."""
        if target.kind in _SEEN or target.function is not None or _dunder(target.name):
            return None
        call = target.call
        unknown = _unknown_receiver(target)
        if self._pure(target, unknown):
            return None
        api = _short(_receiver_api(call, target.name) if unknown else target.name)
        boundary = None if unknown else self.catalogue.undecided(call, target.name)
        effect = Effect(
            kind=EffectKind.DYNAMIC_CALL,
            location=location(path, call.span),
            api=api,
            chain=[fn.qualname],
            detail=boundary or self._why(target, unknown),
        )
        why = GapReason.UNREAD if boundary is None else GapReason.AT_RUN_TIME
        return Found(effect, exact=False, gap=True, why_unresolved=why)

    def overrides_not_followed(self, target: CallTarget, fn: FunctionInfo, path: str) -> Found:
        """``self.m()`` with more overrides below the class than ``_dispatch`` follows."""
        method = target.name.rpartition(".")[2]
        detail = (
            f"{target.more_overrides} more overrides of {method} than the {MAX_OVERRIDES} "
            "followed: which one runs is only known at run time"
        )
        effect = Effect(
            kind=EffectKind.DYNAMIC_CALL,
            location=location(path, target.call.span),
            api=_short(target.name),
            chain=[fn.qualname],
            detail=detail,
        )
        return Found(effect, exact=False, gap=True, why_unresolved=GapReason.OVERRIDES)

    def _pure(self, target: CallTarget, unknown: bool) -> bool:
        """An exact entry for the name; method entries when the receiver's type is unknown,
        including a method on what a library call returned (``requests.get(u).json()``)."""
        is_pure = self.catalogue.is_pure
        if is_pure(target.call, target.name, unknown_receiver=unknown):
            return True
        returned = not unknown and _RESULT in target.name
        return returned and is_pure(target.call, target.name, unknown_receiver=True)

    def _why(self, target: CallTarget, unknown: bool) -> str:
        if unknown:
            return "a method of a receiver of unknown type: what it runs is not known"
        if target.kind == SymbolKind.MEMBER:
            return "an attribute the project does not define (inherited from a library?): not read"
        top = target.name.split(".", 1)[0]
        reason = self.library_gap(top) or "its source was read, but the call is not defined there"
        return f"a library call not followed ({reason}) and not in the catalogue"


def _unknown_receiver(target: CallTarget) -> bool:
    """The receiver's type is unknown: only method-name ([[pure]] ``?.``) entries apply."""
    return target.name.startswith(_UNKNOWN) or target.kind in (
        SymbolKind.MISSING,
        SymbolKind.MEMBER,
    )


def _receiver_api(call: CallInfo, target: str) -> str:
    """``backend.accepts`` as written, not the synthetic ``module.backend.accepts``."""
    method = target.rsplit(".", 1)[-1]
    return f"{call.receiver_source}.{method}" if call.receiver_source else api_name(call, target)


def _dunder(name: str) -> bool:
    """``x()`` of an unknown value (``?.__call__``) is a dynamic-dispatch fact, which decides
    for itself (``cls(...)`` constructs); ``super().__init__()`` builds the object."""
    return name.rsplit(".", 1)[-1].startswith("__")


def _short(text: str, limit: int = 80) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."
