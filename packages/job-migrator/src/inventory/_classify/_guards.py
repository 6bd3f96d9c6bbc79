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
  ``UniqueConstraint``, every field given a value a repeat gives again (a literal, the
  function's parameters, a plain local such as a loop variable: whatever its origin,
  unless the body mints random values it could hold): a repeat is refused by the
  database (it covers that insert only); likewise ``bulk_create([M(...)],
  ignore_conflicts=True)`` whose instances give every field of such a key: the
  database skips the rows a first run already inserted. A value minted random per run
  (``uuid4()``) in the key never collides: no guard.
* a **time value in a unique key**: ``today = timezone.now().date()`` given to such an
  insert (and to nothing else) is stored again only when the key does not collide, so
  the stored time value is covered by the insert's guard (a retry on a later day does
  not collide: the evidence says so).

A guard is not a key: it can expire (a cache entry), race (two runs check at once)
or be absent on another path, so a guarded repeat gives ``needs_key``, never
``idempotent``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from inventory._classify._index import MANAGER
from inventory.summary import CallInfo, FunctionInfo

if TYPE_CHECKING:
    from inventory._classify._index import SymbolIndex

_CACHE = re.compile(r"(?i)cache|redis|^r$|conn")
_CLAIMS = frozenset({"get_or_create", "aget_or_create", "select_for_update", "setnx"})
_READS = frozenset({"exists", "aexists", "get", "aget", "first", "afirst", "count", "last"})
_DEDUP_NAME = re.compile(r"(^|_)(once|unique|deduplicated?)$|_if_(not_)?(exists|missing|absent)$")
_MINTED = re.compile(r"uuid|random|token_|time\(|now\(")
_RANDOM_SOURCE = re.compile(r"uuid|random|token_")
_TIME_SOURCE = re.compile(r"\b(time|now|utcnow|today)\(")
_RANDOM_CALL = re.compile(r"uuid|random|secrets\.token")
_TIME_CALL = re.compile(r"time\.time$|\.now$|utcnow$|\.today$")
_BULK_INSERTS = frozenset({"bulk_create", "abulk_create"})
# A plain local, its attributes, and items of it under literal keys (``row["sku"]`` of a
# loop over rows): a value read from the data, never one the body makes.
_DOTTED = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*|\[(\"[^\"]*\"|'[^']*'|\d+)\])*")


@dataclass(frozen=True)
class Guard:
    line: int  # the guard covers what the body does on later lines
    what: str  # for the evidence: "cache.add claim", "checks for an existing StockAlert"
    model: str | None = None  # a check-then-create covers inserts of this model only
    only_line: int | None = None  # a unique constraint covers the insert on this line only
    # ...and the time values made on these lines, stored only by that insert
    also_lines: frozenset[int] = frozenset()


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
            if guard.only_line == line or line in guard.also_lines:
                return guard
        elif guard.line < line and (guard.model is None or guard.model == model):
            return guard
    return None


def inserted_model(call: CallInfo) -> str | None:
    """``shop.models.Alert.objects.create`` -> ``shop.models.Alert``."""
    head, _, method = _written(call).rpartition(".")
    if method not in ("create", "bulk_create", "abulk_create") or not head.endswith(MANAGER):
        return None
    return head[: -len(MANAGER)]


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
    given = _given(call, fn)
    key = _covered_key(index, index.resolve(model).name, given.fields)
    if key is None:
        return None
    what = f"the unique {key[1]} of {key[0]} refuses a second row" + _later(key, given)
    also = _time_lines(fn, call, [given])
    return Guard(call.span.line, what, model, only_line=call.span.line, also_lines=also)


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


@dataclass(frozen=True)
class _Given:
    fields: frozenset[str]  # the fields a repeat gives again (``user_id`` counts as ``user``)
    timed: frozenset[str]  # of those, the ones that hold (or may hold) a time value
    carriers: frozenset[str]  # the plain locals that may hold the time value


# Calls that may mint a fresh value a plain local then holds: a value of theirs in a
# unique field differs on every run, so the key never collides.
_MINTING_NAME = re.compile(
    r"(?i)(^|_)(generate|gen|make|new|mint|rand|random)(_|$)|token|nonce|secret|salt|uuid|passw"
)


def _given(call: CallInfo, fn: FunctionInfo) -> _Given:
    """The fields a call gives the same value on a repeat: a literal, a value taken from
    the parameters, or a plain local, its attributes or items under literal keys
    (``check_id`` of a loop over a literal set, ``row["sku"]`` of a loop over rows,
    whatever their origin) unless the body mints random values it could hold. A time value
    (``day=today`` next to ``today = timezone.now().date()``) is given too, marked: it is
    the same only until the clock moves on."""
    names = sorted({*call.kwargs, *call.kwarg_sources})
    random = any(_RANDOM_CALL.search(c.target) or _mints(c) for c in fn.calls)
    clock = any(_TIME_CALL.search(c.target) for c in fn.calls)
    fields: set[str] = set()
    timed: set[str] = set()
    carriers: set[str] = set()
    for name in names:
        field = name.removesuffix("_id")
        if call.kwargs.get(name, "<expr>") != "<expr>":
            fields.add(field)
            continue
        source = call.kwarg_sources.get(name, "")
        if _RANDOM_SOURCE.search(source):
            continue
        if _TIME_SOURCE.search(source):
            fields.add(field)
            timed.add(field)
        elif _mentions_param(source, fn):
            fields.add(field)
        elif _plain_local(source) and not random:
            fields.add(field)
            if clock:  # the local may hold the time value the body makes
                timed.add(field)
                carriers.add(source.split(".", 1)[0])
    return _Given(frozenset(fields), frozenset(timed), frozenset(carriers))


def _mints(call: CallInfo) -> bool:
    return call.result_used and bool(_MINTING_NAME.search(call.target.rsplit(".", 1)[-1]))


def _plain_local(source: str) -> bool:
    return bool(_DOTTED.fullmatch(source)) and not _MINTED.search(source)


def _mentions_param(source: str, fn: FunctionInfo) -> bool:
    return any(re.search(rf"\b{re.escape(p)}\b", source) for p in fn.params if p != "self")


def _later(key: tuple[str, str], *given: _Given) -> str:
    """The caveat of a key that holds a time value."""
    timed = sorted({f for g in given for f in g.timed} & set(key[1].split(", ")))
    if not timed:
        return ""
    return (
        f"; {', '.join(timed)} holds a time value: the key collides only until the clock "
        "moves on, a retry on a later day inserts again"
    )


def _time_lines(fn: FunctionInfo, call: CallInfo, given: list[_Given]) -> frozenset[int]:
    """The lines where the body makes the time values it stores only through ``call``
    (a guarded insert): each such line makes a time value and nothing else (``today =
    timezone.now().date()``), or lies inside the insert; the locals that may hold the
    value are passed to no other call. Empty when a random value is minted (a retry never
    collides on it) or the time value may reach anything else."""
    if not any(g.timed for g in given) or any(_RANDOM_CALL.search(c.target) for c in fn.calls):
        return frozenset()
    first, last = call.span.line, call.span.end_line or call.span.line
    inside = set(range(first, last + 1))
    clocks = [c for c in fn.calls if _is_time_call(c)]
    lines = {c.span.line for c in clocks}
    if any(not _is_time_call(c) for c in fn.calls if c.span.line in lines - inside):
        return frozenset()
    carriers = {name for g in given for name in g.carriers}
    for other in fn.calls:
        if other.span.line in inside or other.span.line in lines:
            continue
        sources = [*other.arg_sources, *other.kwarg_sources.values(), other.receiver_source]
        if any(re.search(rf"\b{re.escape(n)}\b", s) for n in carriers for s in sources):
            return frozenset()
    return frozenset(lines)


def _is_time_call(call: CallInfo) -> bool:
    """``timezone.now()``, and what is called on its result (``timezone.now().date()``)."""
    head = call.target.split("()", 1)[0]
    return bool(_TIME_CALL.search(head))


def _covered_key(index: SymbolIndex, model: str, given: frozenset[str]) -> tuple[str, str] | None:
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
        (name, c, _given(c, fn))
        for c in fn.calls
        if c.span.line <= end
        and (name := _model_class(index, c.target)) is not None
        and (model is None or name == model)
    ]
    keys = {_covered_key(index, name, given.fields) for name, _, given in built}
    if not built or None in keys or len(keys) != 1:
        return None
    key = keys.pop()
    assert key is not None
    givens = [given for _, _, given in built]
    what = (
        f"the unique {key[1]} of {key[0]} makes bulk_create(ignore_conflicts=True) skip a repeat"
        + _later(key, *givens)
    )
    inside = all(_within(c, call) for _, c, _ in built)
    also = _time_lines(fn, call, givens) if inside else frozenset()
    return Guard(call.span.line, what, written, only_line=call.span.line, also_lines=also)


def _within(inner: CallInfo, outer: CallInfo) -> bool:
    last = outer.span.end_line or outer.span.line
    return outer.span.line <= inner.span.line <= last


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
    if MANAGER not in head or head.startswith("?"):
        return None
    return head.partition(MANAGER)[0]


def _model_name(call: CallInfo) -> str:
    return f"for an existing {(_model(call) or '').rsplit('.', 1)[-1]}"


def _short(text: str) -> str:
    return text if len(text) <= 40 else text[:37] + "..."
