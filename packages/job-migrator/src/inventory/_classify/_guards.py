"""Dedup guards: what makes a repeat of an insert, a send or an enqueue skip itself.

A guard is read from one function body and covers what the body does after it:

* a **claim**: ``cache.add(key, ...)``, ``redis.set(key, v, nx=True)``, ``setnx``,
  ``get_or_create`` (its ``created`` flag), ``select_for_update`` (a status checked
  under a row lock), whose result the body uses;
* a **check-then-create**: ``M.objects.filter(...).exists()`` / ``.get()`` / ``.first()``
  whose result is used, then ``M.objects.create`` of the same model;
* a function **named as deduplicating** (``enqueue_once``, ``send_unique``,
  ``create_if_missing``) that reads before it acts;
* a **unique constraint**: ``M.objects.create(user=user)`` where ``M.user`` is a
  OneToOneField, a ``unique=True`` field or covers a ``unique_together`` /
  ``UniqueConstraint``, every field given from the function's parameters: a repeat
  with the same inputs is refused by the database (it covers that insert only).

A guard is not a key: it can expire (a cache entry), race (two runs check at once)
or be absent on another path, so a guarded repeat gives ``needs_key``, never
``idempotent``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from inventory.summary import CallInfo, FunctionInfo

if TYPE_CHECKING:
    from inventory._classify._index import SymbolIndex

_CACHE = re.compile(r"(?i)cache|redis|^r$|conn")
_CLAIMS = frozenset({"get_or_create", "aget_or_create", "select_for_update", "setnx"})
_READS = frozenset({"exists", "aexists", "get", "aget", "first", "afirst", "count", "last"})
_DEDUP_NAME = re.compile(r"(^|_)(once|unique|deduplicated?)$|_if_(not_)?(exists|missing|absent)$")
_MANAGER = ".objects"
_MINTED = re.compile(r"uuid|random|token_|time\(|now\(")


@dataclass(frozen=True)
class Guard:
    line: int  # the guard covers what the body does on later lines
    what: str  # for the evidence: "cache.add claim", "checks for an existing StockAlert"
    model: str | None = None  # a check-then-create covers inserts of this model only
    only_line: int | None = None  # a unique constraint covers the insert on this line only


def guards_of(fn: FunctionInfo, index: SymbolIndex | None = None) -> list[Guard]:
    """The dedup guards in one body, in line order (``index``: where models are looked up
    for their unique keys)."""
    found = [g for call in fn.calls if (g := _claim(call)) is not None]
    if index is not None:
        found += [g for call in fn.calls if (g := _unique_insert(call, fn, index)) is not None]
    reads = [call for call in fn.calls if _is_read(call) and _model(call)]
    found += [Guard(r.span.line, f"checks {_model_name(r)} first", _model(r)) for r in reads]
    looked = [call.span.line for call in fn.calls if _is_read(call)]
    if _DEDUP_NAME.search(fn.name) and looked:
        first = min(looked)
        found.append(Guard(first, f"{fn.name} looks for an existing one first"))
    return sorted(found, key=lambda g: g.line)


def covering(guards: list[Guard], line: int, model: str | None) -> Guard | None:
    """The first guard that covers an effect on ``line`` (of ``model``, for an insert)."""
    for guard in guards:
        if guard.only_line is not None:
            if guard.only_line == line:
                return guard
        elif guard.line < line and (guard.model is None or guard.model == model):
            return guard
    return None


def inserted_model(call: CallInfo) -> str | None:
    """``shop.models.Alert.objects.create`` -> ``shop.models.Alert``."""
    head, _, method = _written(call).rpartition(".")
    if method not in ("create", "bulk_create") or not head.endswith(_MANAGER):
        return None
    return head[: -len(_MANAGER)]


def _unique_insert(call: CallInfo, fn: FunctionInfo, index: SymbolIndex) -> Guard | None:
    """``UserSettings.objects.create(user=instance)`` with ``user`` a OneToOneField."""
    model = inserted_model(call)
    if model is None or call.target.rsplit(".", 1)[-1] != "create":
        return None
    given = {
        name.removesuffix("_id")
        for name in {*call.kwargs, *call.kwarg_sources}
        if _from_inputs(call, name, fn)
    }
    for owner in index.mro(index.resolve(model).name):
        info = index.classes.get(owner)
        for key in info.unique_keys if info else []:
            if set(key.split("+")) <= given:
                fields = key.replace("+", ", ")
                what = f"the unique {fields} of {owner.rsplit('.', 1)[-1]} refuses a second row"
                return Guard(call.span.line, what, model, only_line=call.span.line)
    return None


def _from_inputs(call: CallInfo, name: str, fn: FunctionInfo) -> bool:
    """A keyword's value is the same on a repeat: a literal, or taken from the parameters
    (and not minted: ``f"{user}-{uuid4()}"`` differs every run)."""
    if call.kwargs.get(name, "<expr>") != "<expr>":
        return True
    source = call.kwarg_sources.get(name, "")
    if _MINTED.search(source):
        return False
    return any(re.search(rf"\b{re.escape(p)}\b", source) for p in fn.params)


def _written(call: CallInfo) -> str:
    """The call's dotted name; as written (``Alert.objects.get``) when the receiver's type
    is unknown (a model bound by ``Alert = get_model(...)``)."""
    if not call.target.startswith("?") or not call.receiver_source:
        return call.target
    return f"{call.receiver_source}.{call.target.rsplit('.', 1)[-1]}"


def _claim(call: CallInfo) -> Guard | None:
    if not call.result_used:
        return None
    method = call.target.rsplit(".", 1)[-1]
    receiver = call.receiver_source or call.target.rsplit(".", 1)[0]
    if method == "add" and _CACHE.search(receiver.rsplit(".", 1)[-1]):
        return Guard(call.span.line, f"{_short(receiver)}.add claim")
    if method == "set" and call.kwargs.get("nx") is True:
        return Guard(call.span.line, f"{_short(receiver)}.set(nx=True) claim")
    if method in _CLAIMS:
        return Guard(call.span.line, f"{method} on {_short(receiver)}")
    return None


def _is_read(call: CallInfo) -> bool:
    """``M.objects.filter(...).exists()``, ``self.get_jobs().first()``: the body uses the answer."""
    return call.result_used and call.target.rsplit(".", 1)[-1] in _READS


def _model(call: CallInfo) -> str | None:
    head = _written(call).rsplit(".", 1)[0]
    if _MANAGER not in head or head.startswith("?"):
        return None
    return head.partition(_MANAGER)[0]


def _model_name(call: CallInfo) -> str:
    return f"for an existing {(_model(call) or '').rsplit('.', 1)[-1]}"


def _short(text: str) -> str:
    return text if len(text) <= 40 else text[:37] + "..."
