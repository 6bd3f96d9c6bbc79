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
  with the same inputs is refused by the database (it covers that insert only);
  likewise ``bulk_create([M(...)], ignore_conflicts=True)`` whose instances give every
  field of such a key: the database skips the rows a first run already inserted.

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
_BULK_INSERTS = frozenset({"bulk_create", "abulk_create"})
_MINTING_CALL = re.compile(r"uuid|random|secrets\.token|time\.time$|\.now$|utcnow$|\.today$")
_DOTTED = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*")


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
    if method not in ("create", "bulk_create", "abulk_create") or not head.endswith(_MANAGER):
        return None
    return head[: -len(_MANAGER)]


def _unique_insert(call: CallInfo, fn: FunctionInfo, index: SymbolIndex) -> Guard | None:
    """``UserSettings.objects.create(user=instance)`` with ``user`` a OneToOneField."""
    method = call.target.rsplit(".", 1)[-1]
    if method in _BULK_INSERTS:
        return _unique_bulk_insert(call, fn, index)
    if method != "create":
        return None
    model = inserted_model(call) or _managed_model(call, fn, index)
    if model is None:
        return None
    key = _covered_key(index, index.resolve(model).name, _given(call, fn))
    if key is None:
        return None
    what = f"the unique {key[1]} of {key[0]} refuses a second row"
    return Guard(call.span.line, what, model, only_line=call.span.line)


def _managed_model(call: CallInfo, fn: FunctionInfo, index: SymbolIndex) -> str | None:
    """``self.create(...)`` in a method of ``ErrorManager``: the one project model with a
    unique key whose class body says ``objects = ErrorManager()``."""
    if call.receiver_source != "self" or fn.class_name is None:
        return None
    manager = fn.qualname.rsplit(".", 1)[0]
    models = {
        qualname
        for qualname, info in index.classes.items()
        if info.unique_keys
        and any(index.resolve(ctor).name == manager for ctor in info.attributes.values())
    }
    return models.pop() if len(models) == 1 else None


def _given(call: CallInfo, fn: FunctionInfo, *, locals_too: bool = False) -> set[str]:
    """The fields a call gives the same value on a repeat (``user_id`` counts as ``user``);
    ``locals_too``: a plain local (``unit`` of a loop over the inputs) counts as well,
    unless the body mints values (uuid, random, the time) it could hold."""
    plain = locals_too and not any(_MINTING_CALL.search(c.target) for c in fn.calls)
    return {
        name.removesuffix("_id")
        for name in {*call.kwargs, *call.kwarg_sources}
        if _from_inputs(call, name, fn) or (plain and _plain_local(call, name))
    }


def _plain_local(call: CallInfo, name: str) -> bool:
    source = call.kwarg_sources.get(name, "")
    return bool(_DOTTED.fullmatch(source)) and not _MINTED.search(source)


def _covered_key(index: SymbolIndex, model: str, given: set[str]) -> tuple[str, str] | None:
    """(model's short name, "a, b") of the first unique key of ``model`` within ``given``."""
    for owner in index.mro(model):
        info = index.classes.get(owner)
        for key in info.unique_keys if info else []:
            if set(key.split("+")) <= given:
                return owner.rsplit(".", 1)[-1], key.replace("+", ", ")
    return None


def _unique_bulk_insert(call: CallInfo, fn: FunctionInfo, index: SymbolIndex) -> Guard | None:
    """``Metric.objects.bulk_create([Metric(day=day, scope=scope)], ignore_conflicts=True)``
    (or ``self.bulk_create`` in the model's manager): the database skips a row whose
    unique key is taken, so a repeat inserts nothing when every instance built in the
    body (up to the call) gives every field of one unique key of its model. Without
    ``ignore_conflicts`` the repeat fails on the constraint instead: not a guard."""
    if call.kwargs.get("ignore_conflicts") is not True:
        return None
    written = inserted_model(call)
    model = index.resolve(written).name if written else None
    end = call.span.end_line or call.span.line
    built = [
        (name, c)
        for c in fn.calls
        if c.span.line <= end
        and (name := _model_class(index, c.target)) is not None
        and (model is None or name == model)
    ]
    keys = {_covered_key(index, name, _given(c, fn, locals_too=True)) for name, c in built}
    if not built or None in keys or len(keys) != 1:
        return None
    key = keys.pop()
    assert key is not None
    what = f"the unique {key[1]} of {key[0]} makes bulk_create(ignore_conflicts=True) skip a repeat"
    return Guard(call.span.line, what, written, only_line=call.span.line)


def _model_class(index: SymbolIndex, target: str) -> str | None:
    """The project class a call constructs, when it declares (or inherits) a unique key."""
    if target.startswith("?") or not target[:1].isalpha():
        return None
    found = index.resolve(target)
    if found.name not in index.classes:
        return None
    has_keys = any(
        (info := index.classes.get(o)) and info.unique_keys for o in index.mro(found.name)
    )
    return found.name if has_keys else None


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
