"""Effects of one function body on its own: catalogued calls and syntactic facts.

Callees are not looked at here (that is the fixpoint in ``_effects``); this
turns one FunctionInfo into :class:`Trace` records whose chain is just the
function itself.
"""

from __future__ import annotations

import re
from dataclasses import replace

from inventory._catalogue import CallMatch, Catalogue
from inventory._classify._graph import CallGraph, CallTarget
from inventory._classify._index import SymbolKind
from inventory._classify._keys import key_detail, key_status, natural_key
from inventory._classify._money import MoneyWords
from inventory._classify._trace import Found, Trace, location
from inventory.models import Effect, EffectKind
from inventory.summary import CallInfo, Fact, FactKind, FunctionInfo, RawSite, Span

_AUGASSIGN = re.compile(r"\s*([\w.\[\]()]+?)\.(\w+)\s*(?:[-+*/%|&^]?=|$)")
_MODEL_BASE = ".Model"  # django.db.models.Model, flask_sqlalchemy's db.Model
_PERSISTING = frozenset(
    {
        EffectKind.DB_INSERT,
        EffectKind.DB_UPSERT,
        EffectKind.DB_OVERWRITE,
        EffectKind.FILE_WRITE,
        EffectKind.OBJECT_PUT,
        EffectKind.CACHE_SET,
    }
)


class LocalEffects:
    """Turns one function body into traces, using the catalogue and the call graph."""

    def __init__(
        self, graph: CallGraph, catalogue: Catalogue, dynamic_sites: dict[str, list[RawSite]]
    ):
        self.graph = graph
        self.catalogue = catalogue
        self.dynamic_sites = dynamic_sites
        self.money = MoneyWords(graph, catalogue)

    def of(self, fn: FunctionInfo) -> list[Trace]:
        path = self.graph.index.function_path(fn.qualname)
        targets = self.graph.targets(fn.qualname)
        calls = [self._call(t, fn, path) for t in targets if t.function is None]
        calls += [self._money_word(t, fn, path) for t in targets if t.function is not None]
        traces = [t for t in calls if t is not None]
        traces += [t for f in fn.facts if (t := self._fact(f, fn, path)) is not None]
        traces += [self._dynamic_site(s, fn, path) for s in self.dynamic_sites.get(fn.qualname, [])]
        return [Trace(f, (fn.qualname,)) for f in _post_process(traces, fn)]

    def _call(self, target: CallTarget, fn: FunctionInfo, path: str) -> Found | None:
        call = target.call
        found = self.catalogue.match_call(call, target.name, _sql_before(fn, call.span.line))
        if found is None and target.kind != SymbolKind.FUNCTION:
            found = self.catalogue.match_keyword(call, target.name)
        if found is not None:
            return _matched(found, call, fn, path)
        if target.kind == SymbolKind.MISSING:
            detail = f"{target.name} looks like a project name but is defined nowhere in the scan"
            effect = _effect(EffectKind.DYNAMIC_CALL, path, call.span, target.name, fn, detail)
            return Found(effect, exact=False, gap=True)
        return None

    def _money_word(self, target: CallTarget, fn: FunctionInfo, path: str) -> Found | None:
        found = self.money.match(target)
        return _matched(found, target.call, fn, path) if found is not None else None

    def _fact(self, fact: Fact, fn: FunctionInfo, path: str) -> Found | None:
        if fact.kind == FactKind.DYNAMIC_DISPATCH:
            detail = "dynamic dispatch: the callee is only known at run time"
            return Found(
                _effect(EffectKind.DYNAMIC_CALL, path, fact.span, _short(fact.text), fn, detail)
            )
        if fact.kind in (FactKind.AUGASSIGN_GLOBAL, FactKind.AUGASSIGN_SUBSCRIPT):
            return _in_memory(fact, fn, path)
        if fact.kind != FactKind.AUGASSIGN_ATTR:
            return None
        receiver, attr = augassign_parts(fact)
        kind = self.catalogue.match_augassign(attr)
        if kind is not None:
            detail = f"changes account state ({attr}) relative to its current value"
            return Found(_effect(kind, path, fact.span, _short(fact.text), fn, detail), exact=False)
        if receiver == "self" and self._on_model(fn) and not _saved_after(fn, receiver, fact):
            detail = (
                "increments a field of a model instance: persisted when saved, a retry adds twice"
            )
            effect = _effect(
                EffectKind.DB_INCREMENT, path, fact.span, _short(fact.text), fn, detail
            )
            return Found(effect, exact=False)
        return None

    def _on_model(self, fn: FunctionInfo) -> bool:
        """A method of an ORM model (``django.db.models.Model``, ``db.Model``...)."""
        if fn.class_name is None:
            return False
        owner = fn.qualname.rsplit(".", 1)[0]
        index = self.graph.index
        return any(b not in index.classes and b.endswith(_MODEL_BASE) for b in index.mro(owner))

    def _dynamic_site(self, site: RawSite, fn: FunctionInfo, path: str) -> Found:
        detail = site.unresolved_reason or "starts work whose target is only known at run time"
        api = _short(site.target_source) or site.pattern.value
        return Found(_effect(EffectKind.DYNAMIC_CALL, path, site.span, api, fn, detail))


def _saved_after(fn: FunctionInfo, receiver: str, fact: Fact) -> bool:
    """``receiver.save()`` later in the body: then the save carries the increment."""
    return any(
        c.target.endswith(".save")
        and c.receiver_source == receiver
        and c.span.line >= fact.span.line
        for c in fn.calls
    )


def _in_memory(fact: Fact, fn: FunctionInfo, path: str) -> Found:
    # Not persisted, so not a retry risk; but once the job runs in a worker, the
    # web process no longer sees the change: worth a line of evidence.
    detail = (
        "changes in-memory state: not persisted, and a worker process would change its own copy"
    )
    effect = _effect(EffectKind.DYNAMIC_CALL, path, fact.span, _short(fact.text), fn, detail)
    return Found(effect, exact=False, note=True)


def _short(text: str, limit: int = 80) -> str:
    """Source text as one line, fit for an evidence message."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


def augassign_parts(fact: Fact) -> tuple[str, str]:
    """``order.total += x`` -> (``order``, ``total``)."""
    for text in (fact.target, fact.text):
        found = _AUGASSIGN.match(text)
        if found:
            return found.group(1), found.group(2)
    return "", fact.target


def _matched(found: CallMatch, call: CallInfo, fn: FunctionInfo, path: str) -> Found:
    keyed, minted = key_status(call, found, fn)
    detail = key_detail(call, found.keyed_by, keyed, minted)
    effect = _effect(found.kind, path, call.span, found.api, fn, detail)
    effect = effect.model_copy(update={"keyed": keyed})
    return Found(
        effect,
        exact=found.exact,
        keyed_by=found.keyed_by,
        minted_key=minted,
        receiver=call.receiver_source,
        natural_key=natural_key(call, fn) if found.kind == EffectKind.DB_INSERT else None,
    )


def _effect(
    kind: EffectKind, path: str, span: Span, api: str, fn: FunctionInfo, detail: str
) -> Effect:
    return Effect(
        kind=kind, location=location(path, span), api=api, chain=[fn.qualname], detail=detail
    )


def _sql_before(fn: FunctionInfo, line: int) -> str | None:
    """The SQL literal closest above a call: ``sql = "UPDATE ..."; cur.execute(sql)``."""
    texts = [f for f in fn.facts if f.kind == FactKind.SQL_LITERAL and f.span.line <= line]
    return max(texts, key=lambda f: f.span.line).text if texts else None


def _post_process(traces: list[Found], fn: FunctionInfo) -> list[Found]:
    bumped = _bumped_receivers(fn)
    persisting = any(t.effect.kind in _PERSISTING for t in traces)
    return [_refine(t, bumped, persisting) for t in traces]


def _bumped_receivers(fn: FunctionInfo) -> dict[str, int]:
    """Receivers of ``obj.attr += n`` and the first line where that happens."""
    bumped: dict[str, int] = {}
    for fact in fn.facts:
        if fact.kind == FactKind.AUGASSIGN_ATTR:
            receiver, _ = augassign_parts(fact)
            bumped[receiver] = min(bumped.get(receiver, fact.span.line), fact.span.line)
    return bumped


def _refine(trace: Found, bumped: dict[str, int], persisting: bool) -> Found:
    effect = trace.effect
    if effect.kind == EffectKind.RANDOM_ID and persisting:
        return replace(
            trace, stored=True, effect=_with(effect, detail="random or time-based value stored")
        )
    if effect.kind == EffectKind.DB_OVERWRITE and effect.api.endswith(".save"):
        receiver = trace.receiver
        if bumped.get(receiver, effect.location.line + 1) <= effect.location.line:
            detail = f"{receiver} is incremented in memory (+=) then saved: a retry adds twice"
            return replace(trace, effect=_with(effect, kind=EffectKind.DB_INCREMENT, detail=detail))
    return trace


def _with(effect: Effect, **changes: object) -> Effect:
    return effect.model_copy(update=changes)
