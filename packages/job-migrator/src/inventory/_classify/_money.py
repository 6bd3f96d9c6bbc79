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
money columns, billing models), which a retry changes twice; and rows of money models
written through the ORM (``Payment.objects.create``, ``order.refunds.create``,
``Payment(...)`` then saved), the model's name being the evidence.

The model vocabulary is words of the class name (``GiftCardPayment``: gift, card,
payment), so ``SortOrder`` or ``PaymentMethod`` (a setting, not money) stay out:
a model whose last word names configuration or presentation is not money state.
"""

from __future__ import annotations

import re
from collections import deque
from functools import cache
from itertools import pairwise

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
# Words of a model's name that make its rows money, order or billing state.
_MONEY_WORDS = frozenset(
    {"billing", "invoice", "payment", "payout", "refund", "wallet", "ledger", "voucher"}
    | {"giftcard", "subscription", "credit", "debit", "balance", "budget", "charge", "order"}
    | {"purchase", "donation", "transaction", "withdrawal", "deposit"}
)
# A last word naming configuration, presentation or a helper: ``PaymentMethod``,
# ``OrderSerializer``, ``PaymentProvider`` hold no money themselves.
_NOT_STATE = frozenset(
    {"method", "type", "kind", "status", "setting", "settings", "config", "configuration"}
    | {"provider", "backend", "template", "category", "option", "choice", "log", "event"}
    | {"form", "field", "notification", "email", "message", "mixin", "admin", "view"}
    | {"serializer", "filter", "plan", "note", "comment", "attachment", "report", "export"}
    | {"page", "link", "token", "tag", "rule", "processor", "service", "client", "gateway"}
    | {"manager", "handler", "builder", "factory", "calculator", "error", "exception", "schema"}
)
_NOT_MONEY_FIRST = frozenset({"sort", "display", "menu", "position", "tab", "column", "page"})
_WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")
# ``Payment.objects.create``, ``models.Refund.objects.filter(...).update``.
_MANAGER = re.compile(r"(?:^|\.)([A-Za-z_]\w*)\.(?:objects|_default_manager|_base_manager)\b")
# A related manager or a Prisma model delegate: ``order.payments``, ``user.refund_set``,
# ``prisma.payment``: the receiver's last name, no call in it.
_RELATION = re.compile(r"^[\w.]*\.([a-z_]\w*?)(?:_set)?$")
_ROW_WRITES = frozenset(
    {"create", "acreate", "bulk_create", "abulk_create", "create_many", "update", "aupdate"}
    | {"update_many"}
)
_PERSISTS = frozenset({"save", "asave", "add", "add_all"})
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
        """A money column incremented by the database itself, or a row of a money model
        written (see :meth:`of_row_write`)."""
        return self._of_increment(call, fn, path) or self.of_row_write(call, fn, path)

    def of_row_write(self, call: CallInfo, fn: FunctionInfo, path: str) -> Found | None:
        """``Payment.objects.create(...)``, ``order.refunds.create(...)``, ``Payment(...)``
        then saved: a row of a model named for money or orders is written. Reads, and a
        call the catalogue knows as something else (an SDK's ``payments.create``), are not."""
        model, verb = _row_written(call, fn)
        word = money_model(model) if model is not None else None
        if word is None or self._other_api(call):
            return None
        method = call.target.rsplit(".", 1)[-1]
        api = _short(f"{call.receiver_source}.{method}" if model != method else f"{model}(...)")
        detail = (
            f"{verb} {model}, a model named for money or orders ({word}): "
            "a repeat may record or move it twice"
        )
        return Found(_account_state(path, call.span, api, fn, detail), exact=False)

    def _other_api(self, call: CallInfo) -> bool:
        found = self.catalogue.match_call(call, call.target)
        return found is not None and found.kind not in _DB_WRITES

    def _of_increment(self, call: CallInfo, fn: FunctionInfo, path: str) -> Found | None:
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
        if model is None or money_model(model.rsplit(".", 1)[-1]) is None:
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


@cache
def money_model(name: str) -> str | None:
    """The money word of a model's class name (``GiftCardPayment`` -> ``payment``), unless
    its last word names configuration or a helper (``PaymentMethod``) or its first word
    makes it presentation (``SortOrder``)."""
    words: list[str] = [w.lower() for w in _WORD.findall(name)]
    if not words or words[-1] in _NOT_STATE or words[0] in _NOT_MONEY_FIRST:
        return None
    joined = [a + b for a, b in pairwise(words)]
    for word in [*words, *joined]:
        singular = word[:-1] if word.endswith("s") and len(word) > 4 else word
        if singular in _MONEY_WORDS:
            return singular
    return None


def _row_written(call: CallInfo, fn: FunctionInfo) -> tuple[str | None, str]:
    """The model a call writes rows of, and how (``records``, ``changes``)."""
    method = call.target.rsplit(".", 1)[-1]
    receiver = call.receiver_source
    if method in _ROW_WRITES:
        verb = "changes rows of" if "update" in method else "records a row of"
        manager = _MANAGER.search(receiver)
        if manager is not None:
            return manager.group(1), verb
        relation = _RELATION.match(receiver)
        # ``self.balance.update({...})`` may be a dict: a relation only creates rows here.
        if relation is not None and "(" not in receiver and "create" in method:
            return _camel(relation.group(1)), verb
        return None, ""
    return _constructed_and_saved(call, fn), "creates and saves a"


def _constructed_and_saved(call: CallInfo, fn: FunctionInfo) -> str | None:
    """``Payment(order=o, amount=x)`` in a function that then saves or adds an instance."""
    name = call.target.rsplit(".", 1)[-1]
    if not name[:1].isupper() or call.receiver_source not in ("", *_module_prefixes(call)):
        return None
    if money_model(name) is None:
        return None
    line = call.span.line
    saved = any(
        c.span.line >= line and c.target.rsplit(".", 1)[-1] in _PERSISTS and c is not call
        for c in fn.calls
    )
    return name if saved else None


def _module_prefixes(call: CallInfo) -> tuple[str, ...]:
    """``models.Payment(...)``: a receiver that is the module the class is read from."""
    receiver = call.receiver_source
    return (receiver,) if receiver and receiver[:1].islower() and "(" not in receiver else ()


def _camel(name: str) -> str:
    """``refunds`` -> ``Refunds``: a relation name read as a model name."""
    return "".join(part.capitalize() for part in name.split("_"))


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
