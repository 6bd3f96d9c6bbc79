"""Money: payment words on project functions, and money state read from the code's shape.

``MoneyWords``: ``gateway.capture(...)`` where the gateway is ours.

The catalogue's [[keyword]] rule (charge / capture / refund ... on a
payment-ish receiver) applies to library calls directly. For a *project*
function the body is usually better evidence, except when the body only shows
plumbing (an HTTP POST to the payment provider): then the name is what tells
us money moves. So the rule applies to a project callee only when nothing it
reaches is a catalogued payment; otherwise the wrapper would be reported twice,
once unkeyed by name and once keyed by its real API.

``MoneyState``: amounts that change without any payment API (spend accumulators,
money columns, billing models), which a retry changes twice.
"""

from __future__ import annotations

import re
from collections import deque

from inventory._catalogue import CallMatch, Catalogue
from inventory._classify._graph import CallGraph
from inventory._classify._target import CallTarget
from inventory._classify._trace import Found, location
from inventory.models import Effect, EffectKind
from inventory.summary import CallInfo, Fact, FactKind, FunctionInfo, Span


class MoneyWords:
    def __init__(self, graph: CallGraph, catalogue: Catalogue) -> None:
        self.graph = graph
        self.catalogue = catalogue
        self._pays: dict[str, bool] = {}

    def match(self, target: CallTarget) -> CallMatch | None:
        """A keyword payment for a call to a project function, if the rule applies."""
        if target.function is None:
            return None
        found = self.catalogue.match_keyword(target.call, target.name)
        if found is None or self._reaches_payment(target.function):
            return None
        return found

    def _reaches_payment(self, start: str) -> bool:
        seen = {start}
        todo = deque([start])
        while todo:
            current = todo.popleft()
            if self._pays_itself(current):
                return True
            for callee in self.graph.callees(current):
                if callee not in seen:
                    seen.add(callee)
                    todo.append(callee)
        return False

    def _pays_itself(self, qualname: str) -> bool:
        if qualname not in self._pays:
            self._pays[qualname] = any(self._is_payment(t) for t in self.graph.targets(qualname))
        return self._pays[qualname]

    def _is_payment(self, target: CallTarget) -> bool:
        if target.function is not None:
            return False
        found = self.catalogue.match_call(target.call, target.name)
        return found is not None and found.kind == EffectKind.PAYMENT


# ``update(total_spent=F("total_spent") + x)`` (Django) and
# ``update(data={"spend": {"increment": x}})`` (Prisma): a stored amount grows in place.
_F_INCREMENT = re.compile(r"\bF\(\s*['\"]")
_NESTED_INCREMENT = re.compile(
    r"['\"](\w+)['\"]\s*:\s*\{\s*['\"](increment|decrement|multiply|divide)['\"]"
)
_NAME = re.compile(r"[A-Za-z_]\w*")
# Models whose rows are money or billing state: a write to one is business-critical.
_MONEY_MODEL = re.compile(
    r"(?i)(billing|invoice|payment|payout|refund|wallet|ledger|voucher|gift_?card|"
    r"subscription|credit|balance|budget)"
)
_DB_WRITES = frozenset(
    {EffectKind.DB_INSERT, EffectKind.DB_UPSERT, EffectKind.DB_OVERWRITE, EffectKind.DB_INCREMENT}
)
# What a model method calls on itself (or a related manager) to persist a change.
_SELF_WRITES = frozenset({"save", "create", "bulk_create", "update", "update_or_create"})
_ACCUMULATORS = frozenset(
    {FactKind.AUGASSIGN_SUBSCRIPT, FactKind.AUGASSIGN_GLOBAL, FactKind.STATE_ASSIGN}
)


class MoneyState:
    """Money and quota state no catalogue entry names, from the shape of the code.

    The vocabulary is the catalogue's [[augassign]] ``attr`` rule (users extend it):
    an in-memory accumulator of an amount (``spend[k] = spend.get(k, 0) + cost``), a
    money field set on an object (``key.spend = 0.0``), a money column incremented by
    the database (``F("balance") + x``, ``{"spend": {"increment": x}}``), and any
    database write made by a method of a billing or payment model.
    """

    def __init__(self, catalogue: Catalogue) -> None:
        self.catalogue = catalogue

    def money_name(self, text: str) -> str | None:
        """The first identifier of ``text`` the vocabulary calls money or quota."""
        return next((n for n in _NAME.findall(text) if self._is_money(n)), None)

    def _is_money(self, name: str) -> bool:
        return self.catalogue.match_augassign(name) == EffectKind.ACCOUNT_STATE

    def of_fact(self, fact: Fact, fn: FunctionInfo, path: str, on_model: bool) -> Found | None:
        """An accumulator or a money field: ACCOUNT_STATE."""
        if fact.kind not in _ACCUMULATORS:
            return None
        if fact.kind == FactKind.STATE_ASSIGN:
            receiver, _, attr = fact.target.rpartition(".")
            if not self._is_money(attr) or (receiver in ("self", "cls") and not on_model):
                return None  # ``self.cost = 0`` in a plain object: its own bookkeeping
            detail = f"sets {attr}, a money or quota field: a repeat moves that state again"
        else:
            name = self.money_name(fact.text)
            if name is None:
                return None
            detail = (
                f"adds to an amount ({name}) kept in memory, flushed later: a retry counts it twice"
            )
        return Found(_account_state(path, fact.span, _short(fact.text), fn, detail), exact=False)

    def of_call(self, call: CallInfo, fn: FunctionInfo, path: str) -> Found | None:
        """A money column incremented by the database itself."""
        for name, source in call.kwarg_sources.items():
            column = self._incremented(name, source)
            if column is not None:
                api = _short(f"{call.receiver_source}.{call.target.rsplit('.', 1)[-1]}")
                detail = f"increments the money column {column} in the database: a retry adds twice"
                return Found(_account_state(path, call.span, api, fn, detail), exact=False)
        return None

    def _incremented(self, name: str, source: str) -> str | None:
        if _F_INCREMENT.search(source) and self._is_money(name):
            return name
        nested = _NESTED_INCREMENT.search(source)
        if nested and self._is_money(nested.group(1)):
            return nested.group(1)
        return None

    def of_model(
        self, traces: list[Found], fn: FunctionInfo, model: str | None, path: str
    ) -> Found | None:
        """A method of a billing/payment model that writes rows: business state. The write
        may be its own (``self.save()``, ``self.log_set.create()``) through a project
        override whose effects show up in the callee only."""
        if model is None or not _MONEY_MODEL.search(model.rsplit(".", 1)[-1]):
            return None
        name = model.rsplit(".", 1)[-1]
        detail = (
            f"writes the state of {name}, a billing or payment model: a repeat may move it again"
        )
        write = next((t.effect for t in traces if t.effect.kind in _DB_WRITES), None)
        if write is not None:
            effect = write.model_copy(
                update={"kind": EffectKind.ACCOUNT_STATE, "detail": detail, "keyed": False}
            )
            return Found(effect, exact=False)
        own = next((c for c in fn.calls if _writes_self(c)), None)
        if own is None:
            return None
        api = _short(f"{own.receiver_source}.{own.target.rsplit('.', 1)[-1]}")
        return Found(_account_state(path, own.span, api, fn, detail), exact=False)


def _writes_self(call: CallInfo) -> bool:
    """``self.save()``, ``self.billinglog_set.create(...)``: the model persists itself."""
    head = call.receiver_source.split(".", 1)[0]
    return head == "self" and call.target.rsplit(".", 1)[-1] in _SELF_WRITES


def _account_state(path: str, span: Span, api: str, fn: FunctionInfo, detail: str) -> Effect:
    return Effect(
        kind=EffectKind.ACCOUNT_STATE,
        location=location(path, span),
        api=api,
        chain=[fn.qualname],
        detail=detail,
    )


def _short(text: str, limit: int = 80) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."
