"""Traces: what a function body does (Found), and how it is reached (Trace).

A Found is created once per place in one body; a Trace is a Found plus the
call path from some function down to it. The fixpoint makes many Traces, so
they are light objects and the pydantic Effect is built only when reported.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field
from enum import StrEnum
from functools import cached_property

from inventory.models import Effect, EffectKind, Location
from inventory.summary import Span

GAP_BUCKETS = 8  # at most this many unresolved calls from callees are kept per function
_GAP = "gap"


class GapReason(StrEnum):
    """Why a gap is one: the job's evidence lists unresolved calls by reason."""

    UNREAD = "no source read, not in the catalogue; lower confidence"
    # A catalogued API whose effect an argument decides, and the scan could not read that
    # argument (``session.execute(stmt)``): not a call it failed to follow.
    AT_RUN_TIME = (
        "catalogued, but what they do depends on a value only known at run time, "
        "such as a statement the scan could not type"
    )
    OVERRIDES = (
        "overridden by more classes than are followed: which one runs is only known at run time"
    )
    # ``signal.send(...)`` of a signal no project receiver listens to: the scan reads
    # Django's (or blinker's) dispatch only to find receivers it already looked for.
    RECEIVERS_ELSEWHERE = (
        "signals sent with no receiver in the project: what runs is what other packages "
        "connect, only known at run time"
    )
    # A ``typing.Protocol``'s empty method: any class with the method matches it.
    PROTOCOL = (
        "methods of a Protocol: what runs is the implementation the caller holds, only "
        "known at run time"
    )


@dataclass(frozen=True, eq=False)  # identity: each Found is one place in one body
class Found:
    """What one function body does at one place, with what the verdict needs to know."""

    effect: Effect  # its chain is just the function itself
    exact: bool = True  # matched an exact catalogue entry
    keyed_by: str | None = None  # the catalogue's key kwarg for this API
    minted_key: bool = False  # a key was passed but minted inside (uuid4...): does not count
    stored: bool = False  # a random id next to a persisting write in the same function
    gap: bool = False  # not an effect: a project call we could not resolve
    note: bool = False  # not an effect: in-memory state a reviewer should know about
    receiver: str = ""  # the receiver as written, for "+= then save()" on the same object
    natural_key: str | None = None  # an insert carrying an id-like column from the inputs
    guard: str | None = None  # a dedup guard before it (a cache.add claim...): see _guards
    sql_param: str | None = None  # SQL from this parameter: a caller's literal binds it
    # A gap only because it is behind a guessed call of this callee (``_effects.Possible``):
    # what is unresolved is that dispatch, not the (catalogued) API of the effect.
    guessed_via: str = ""
    why_unresolved: GapReason = field(default_factory=lambda: GapReason.UNREAD)
    # A gap a [tool.migrator.catalogue] entry can explain: that entry's ``call``
    # (``?.method`` for a receiver of unknown type, the dotted name of a library call),
    # and for ``?.method`` the ``receiver`` regex that keeps it to this receiver as written.
    entry: str | None = None
    entry_receiver: str | None = None
    # A sleep written in an ``except`` handler: a retry's back-off, which runs only when the
    # work before it failed (``_local._backoff``): no slow work of the call's normal path.
    backoff: bool = False

    @cached_property
    def summary_key(self) -> tuple[object, ...]:
        effect = self.effect
        return (
            effect.kind,
            effect.api,
            effect.keyed,
            self.minted_key,
            self.stored,
            self.gap,
            self.note,
            self.exact,
            self.guard,
            self.backoff,
        )


class Trace:
    """A Found reached from some function through ``chain`` (a real call path).

    Kept light on purpose: the fixpoint makes millions of these on big code
    bases, and the pydantic Effect is only built for the traces reported.
    """

    __slots__ = ("_effect", "chain", "found")

    def __init__(self, found: Found, chain: tuple[str, ...]) -> None:
        self.found = found
        self.chain = chain
        self._effect: Effect | None = None

    @property
    def key(self) -> object:
        """Identity in a function's trace set.

        A function's own effects are kept per place; effects reached through
        callees once per (kind, api, flags), with the shortest chain: that
        bounds each set by the number of distinct APIs, not by the size of the
        reachable code (a Django view can reach thousands of functions).
        """
        if len(self.chain) == 1:
            return self.found
        if self.found.gap:
            # Gaps are many (every unexplained library call) and only need examples:
            # a few buckets per function keep the fixpoint linear in the reachable code.
            return (_GAP, zlib.crc32(self.found.effect.api.encode()) % GAP_BUCKETS)
        return self.found.summary_key

    def via(self, caller: str) -> Trace:
        return Trace(self.found, (caller, *self.chain))

    @property
    def effect(self) -> Effect:
        if len(self.chain) == 1:
            return self.found.effect
        if self._effect is None:
            self._effect = self.found.effect.model_copy(update={"chain": list(self.chain)})
        return self._effect

    @property
    def kind(self) -> EffectKind:
        return self.found.effect.kind

    @property
    def api(self) -> str:
        return self.found.effect.api

    @property
    def keyed(self) -> bool:
        return self.found.effect.keyed

    @property
    def keyed_by(self) -> str | None:
        return self.found.keyed_by

    @property
    def minted_key(self) -> bool:
        return self.found.minted_key

    @property
    def natural_key(self) -> str | None:
        return self.found.natural_key

    @property
    def guard(self) -> str | None:
        return self.found.guard

    @property
    def stored(self) -> bool:
        return self.found.stored

    @property
    def exact(self) -> bool:
        return self.found.exact

    @property
    def gap(self) -> bool:
        return self.found.gap

    @property
    def note(self) -> bool:
        return self.found.note

    @property
    def is_effect(self) -> bool:
        return not (self.found.gap or self.found.note)

    @property
    def guessed_via(self) -> str:
        return self.found.guessed_via

    @property
    def gap_name(self) -> str:
        """What a gap leaves unresolved: the call; for an effect behind a guessed call,
        ``api (behind callee)``: which callee runs is the unresolved part, not the API."""
        via, api = self.found.guessed_via, self.found.effect.api
        return f"{api} (behind {via})" if via else api


def location(path: str, span: Span) -> Location:
    return Location(
        path=path,
        line=span.line,
        column=span.column,
        end_line=span.end_line,
        end_column=span.end_column,
    )
