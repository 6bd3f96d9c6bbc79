"""``self.m()`` and ``cls.m()``: the method of the receiver's class, overrides included.

A method of ``C`` runs on instances of ``C`` and of every class below it, so
``self.m()`` written in ``C`` runs, per Python's MRO, the ``m`` of the receiver's
class: ``C``'s own (or inherited) for a ``C``, an override for an instance of a
subclass that defines one. The call may run any of them: each is a callee, and
what any of them does is what the call may do (the verdict takes the worst). A
class with no subclass that overrides ``m`` runs only its own ``m``.

Only the project's classes are read (a library subclass of a project class is not
looked for); a hierarchy with more overrides than ``MAX_OVERRIDES`` is followed up to
that many and the rest is a gap (which one runs is only known at run time).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from inventory.summary import ReceiverKind

if TYPE_CHECKING:
    from inventory._classify._index import SymbolIndex
    from inventory.summary import CallInfo, FunctionInfo

MAX_OVERRIDES = 16
_NOT_IMPLEMENTED = "NotImplementedError"
_SELF_NAMES = frozenset({"self", "cls"})
_ON_SELF = (ReceiverKind.SELF, ReceiverKind.CLASS)


@dataclass(frozen=True)
class Overrides:
    """What ``self.m()`` in class ``owner`` may run besides the class's own ``m``."""

    owner: str  # the class the call is written in
    method: str
    followed: tuple[str, ...]  # override qualnames, sorted, at most MAX_OVERRIDES
    more: int  # overrides beyond the cap, not followed


def empty_method(fn: FunctionInfo) -> bool:
    """No body of its own: ``@abstractmethod``, ``pass``, ``...``, ``raise NotImplementedError``."""
    if any(d.endswith("abstractmethod") for d in fn.decorators):
        return True
    return not fn.facts and all(c.target.endswith(_NOT_IMPLEMENTED) for c in fn.calls)


def self_class(call: CallInfo, caller: FunctionInfo | None) -> str | None:
    """The class of a ``self.m()`` / ``cls.m()`` call's receiver's bound, else None.

    ``super().m()`` and ``Mailer.m()`` name the class that runs: no dispatch."""
    if caller is None or call.receiver not in _ON_SELF:
        return None
    first = caller.params[0] if caller.params and caller.class_name else None
    if call.receiver_source not in _SELF_NAMES and call.receiver_source != first:
        return None
    owner, _, method = call.target.rpartition(".")
    return owner if owner and method.isidentifier() else None


class SelfDispatch:
    """The overrides below a class, memoised: the same ``self.m()`` recurs in many methods."""

    def __init__(self, index: SymbolIndex) -> None:
        self.index = index
        self._below: dict[str, list[str]] | None = None
        self._memo: dict[tuple[str, str], Overrides | None] = {}

    def overrides(self, owner: str, method: str) -> Overrides | None:
        """The overrides of ``method`` that instances of classes below ``owner`` run, or
        None when there is none (or ``owner`` is no project class)."""
        key = (owner, method)
        if key not in self._memo:
            self._memo[key] = self._find(owner, method)
        return self._memo[key]

    def _find(self, owner: str, method: str) -> Overrides | None:
        index = self.index
        if owner not in index.classes or index.is_library(owner) or method.startswith("__"):
            return None
        defining = {d for d in index.classes_defining(method) if not index.is_library(d)}
        # Checked first because it is cheap: most methods are defined on one line of bases.
        if not defining - set(index.mro(owner)):
            return None
        runs = {self._runs(sub, method, defining) for sub in self.below(owner)}
        own = index.method(owner, method)
        names = sorted(f"{d}.{method}" for d in runs if d is not None and f"{d}.{method}" != own)
        if not names:
            return None
        followed = tuple(names[:MAX_OVERRIDES])
        return Overrides(owner, method, followed, len(names) - len(followed))

    def _runs(self, cls: str, method: str, defining: set[str]) -> str | None:
        """The project class whose ``method`` an instance of ``cls`` runs (the first
        class of its MRO defining it), None when that is a library's."""
        for base in self.index.mro(cls):
            if base in defining:
                return base
            if self.index.is_library(base) and f"{base}.{method}" in self.index.functions:
                return None
        return None

    def below(self, owner: str) -> list[str]:
        """The project classes that inherit from ``owner``, transitively."""
        if self._below is None:
            below: dict[str, list[str]] = {}
            index = self.index
            for cls in sorted(index.classes):
                if index.is_library(cls):
                    continue
                for base in index.mro(cls)[1:]:
                    below.setdefault(base, []).append(cls)
            self._below = below
        return self._below.get(owner, [])
