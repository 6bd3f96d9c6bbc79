"""The effect sinks the census counts, read from the analyzer's own shipped catalogue.

``inventory`` has no public loader for the catalogue (``inventory._catalogue`` is
private), so this reads the same data file, ``inventory/catalogue.toml``, through
``importlib.resources``: the census and the analyzer always share one catalogue.
Only *sink* kinds count (mail, SMS, push, HTTP, payment, message publish, object
storage, image and report rendering); database, cache, file, metric, clock and
sleep entries are no sinks here.
"""

from __future__ import annotations

import ast
import re
import tomllib
from dataclasses import dataclass
from fnmatch import fnmatchcase
from functools import cached_property
from importlib import resources
from typing import Any

from inventory import EffectKind

SINK_KINDS = frozenset(
    {
        EffectKind.HTTP_GET,
        EffectKind.HTTP_POST,
        EffectKind.HTTP_PUT,
        EffectKind.HTTP_PATCH,
        EffectKind.HTTP_DELETE,
        EffectKind.EMAIL_SEND,
        EffectKind.SMS_SEND,
        EffectKind.PUSH_SEND,
        EffectKind.PAYMENT,
        EffectKind.MESSAGE_PUBLISH,
        EffectKind.OBJECT_PUT,
        EffectKind.IMAGE_PROCESS,
        EffectKind.REPORT_GENERATE,
    }
)
_SUFFIX = "?."


@dataclass(frozen=True)
class ExactSink:
    pattern: str  # dotted name or fnmatch glob
    kind: EffectKind

    def matches(self, dotted: str) -> bool:
        return fnmatchcase(dotted, self.pattern)


@dataclass(frozen=True)
class MethodSink:
    """``?.suffix`` or ``[[keyword]]``: matched by the method name on any receiver."""

    name: re.Pattern[str]  # the whole trailing text after the receiver (``messages.create``)
    receiver: re.Pattern[str] | None
    kind: EffectKind
    source: str  # the catalogue entry, as written
    keyword: bool = False  # a [[keyword]] name rule rather than a ``?.method`` entry
    # An entry with no effect of its own whose sink comes from ``present = true`` refinements
    # (``?.messages.create`` is an SMS only when it passes ``to``, by keyword, position 0 or
    # a ``**`` mapping, which the analyzer records as the keyword ``**``):
    # the arguments one of which the call must pass; None when any call counts.
    passes: tuple[int | str, ...] | None = None

    def counts(self, call: ast.Call) -> bool:
        """The call passes what the entry's refinements ask for (always, without any)."""
        if self.passes is None:
            return True
        given = {k.arg or "**" for k in call.keywords}
        return any(
            (isinstance(p, int) and len(call.args) > p) or (isinstance(p, str) and p in given)
            for p in self.passes
        )


@dataclass(frozen=True)
class SinkCatalogue:
    exact: tuple[ExactSink, ...]
    methods: tuple[MethodSink, ...]

    def exact_match(self, dotted: str) -> ExactSink | None:
        """The first exact entry ``dotted`` matches; entries are tried only when their
        first name is ``dotted``'s (every shipped pattern starts with a literal name)."""
        head = dotted.split(".", 1)[0]
        return next((e for e in self._by_head.get(head, ()) if e.matches(dotted)), None)

    @cached_property
    def _by_head(self) -> dict[str, list[ExactSink]]:
        index: dict[str, list[ExactSink]] = {}
        for entry in self.exact:
            index.setdefault(entry.pattern.split(".", 1)[0], []).append(entry)
        return index


def load_sinks(text: str | None = None) -> SinkCatalogue:
    """The sink entries of ``text`` (TOML), by default the catalogue ``inventory`` ships."""
    if text is None:
        text = resources.files("inventory").joinpath("catalogue.toml").read_text()
    data = tomllib.loads(text)
    exact: list[ExactSink] = []
    methods: list[MethodSink] = []
    for entry in data.get("effect", []):
        kind = _sink_kind(entry)
        if kind is None:
            continue
        call: str = entry["call"]
        if call.startswith(_SUFFIX):
            name = re.compile(re.escape(call[len(_SUFFIX) :]) + "$")
            receiver = _regex(entry.get("receiver"))
            methods.append(MethodSink(name, receiver, kind, call, passes=_passes(entry)))
        else:
            exact.append(ExactSink(call, kind))
    for entry in data.get("keyword", []):
        kind = EffectKind(entry["effect"])
        if kind in SINK_KINDS:
            source = f"[[keyword]] {entry['name']}"
            name, receiver = re.compile(entry["name"]), _regex(entry["receiver"])
            methods.append(MethodSink(name, receiver, kind, source, keyword=True))
    return SinkCatalogue(tuple(exact), tuple(methods))


def _sink_kind(entry: dict[str, Any]) -> EffectKind | None:
    """The entry's sink kind: its own effect, else the first refinement's that is a sink."""
    kinds = [entry.get("effect")] + [w.get("effect") for w in entry.get("when", [])]
    sinks = [EffectKind(k) for k in kinds if k is not None and EffectKind(k) in SINK_KINDS]
    return sinks[0] if sinks else None


def _passes(entry: dict[str, Any]) -> tuple[int | str, ...] | None:
    """The arguments an entry without an effect of its own needs, when every refinement
    giving it a sink kind is ``present = true`` on one argument; None otherwise (the
    finder then counts every call, as the entry's name and receiver say)."""
    if entry.get("effect") is not None:
        return None
    sinks = [w for w in entry.get("when", []) if EffectKind(w["effect"]) in SINK_KINDS]
    if not sinks or any(w.get("present") is not True for w in sinks):
        return None
    found: list[int | str] = [w["kwarg"] if "kwarg" in w else w["arg"] for w in sinks]
    return tuple(found)


def _regex(text: str | None) -> re.Pattern[str] | None:
    return re.compile(text) if text else None
