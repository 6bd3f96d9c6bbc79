"""Job arguments <-> JSON, checked against the job's signature. Never pickle.

Enqueue binds the call to the signature, validates each argument with a
pydantic ``TypeAdapter`` of its annotation (built once per job, on first use,
so forward references resolve) and dumps it in JSON mode: a ``datetime``,
``Decimal``, ``UUID`` or pydantic model parameter is stored as its JSON form
and comes back as the annotated type in the worker. An UNannotated (or ``Any``)
parameter goes through :mod:`queue_runtime.codecs`: plain JSON as it is, dates,
decimals, enums, dataclasses, model instances (by reference) and the rest as
tagged JSON; a value no codec covers raises :class:`Unencodable` (a
``PayloadError``: enqueue then runs the call as the site did, see ``_enqueue``).
Only the arguments the caller passed are stored; defaults apply at run time.

Fast path: when a parameter is annotated with a plain JSON scalar type
(``int``, ``str``, ``float``, ``bool``, ``None``, a union of those, ``Any``) or
not annotated, a value of exactly that type is what pydantic would give back
unchanged, so it is checked with ``type(value) in ...`` and stored as is. Any
other value (a subclass, an int for a float, NaN, ...) takes the pydantic path,
which converts it or raises the usual error: the stored JSON and the errors are
the same either way, only faster for the common case.

Whatever the path, a value the store would refuse is a :class:`PayloadError`
naming the parameter, raised before anything is stored or run: NaN and
infinity (never stored as ``null``: pydantic's default for ``Any`` inside an
annotation is turned off), a string with NUL or a lone surrogate (checked on
the JSON text, :mod:`queue_runtime._limits`), a value pydantic cannot dump
(``bytes`` that are not UTF-8, an object, a list that contains itself).
"""

from __future__ import annotations

import inspect
import json
import math
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from pydantic import ConfigDict, TypeAdapter, ValidationError
from pydantic.errors import PydanticSchemaGenerationError, PydanticUserError

from queue_runtime._limits import json_text_suspect, value_problem
from queue_runtime.codecs import TAG, decode_value, encode_value
from queue_runtime.errors import PayloadError, PayloadTooLarge, Unencodable

_JSON_SCALARS: tuple[type, ...] = (str, int, float, bool, type(None))
# Annotation -> the exact value types pydantic returns unchanged in JSON mode.
_SCALAR_HINTS: dict[Any, frozenset[type]] = {
    int: frozenset({int}),
    str: frozenset({str}),
    float: frozenset({float}),
    bool: frozenset({bool}),
    type(None): frozenset({type(None)}),
    None: frozenset({type(None)}),
    Any: frozenset({*_JSON_SCALARS, list, dict}),
}
# Unannotated: what _plain_json keeps (finite floats); a list or dict of them is copied.
_UNANNOTATED: frozenset[type] = frozenset({*_JSON_SCALARS, list, dict})
_ANY_ITEMS: dict[type, frozenset[type]] = {
    list: frozenset(_JSON_SCALARS),
    dict: frozenset(_JSON_SCALARS),
}
_SIMPLE_KINDS = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
# NaN and infinity stay floats in JSON mode (pydantic's default makes an ``Any`` one null):
# json.dumps(allow_nan=False) then refuses them.
_ARGUMENTS = ConfigDict(ser_json_inf_nan="constants")


def _refuse(value: Any) -> Any:
    raise TypeError(f"{type(value).__name__} is not JSON")


def _flat_encoder() -> Callable[[dict[str, Any]], str]:
    """``dumps()`` below for a flat dict of scalars, without building an encoder per call."""
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:  # no C accelerator: the pure-Python encoder, same text
        return json.JSONEncoder(separators=(",", ":"), allow_nan=False).encode
    # No circular-reference markers: the fast path only ever encodes a flat dict of scalars.
    chunks = make(
        None, _refuse, json.encoder.encode_basestring_ascii, None, ":", ",", False, False, False
    )
    return lambda payload: "".join(chunks(payload, 0))


_encode_flat = _flat_encoder()


class EncodedArgs(dict[str, Any]):
    """Validated arguments plus their JSON text: serialised once, for the size check and the store."""

    __slots__ = ("json",)
    json: str


@dataclass(frozen=True)
class _Param:
    name: str
    kind: inspect._ParameterKind
    adapter: TypeAdapter[Any] | None  # None: unannotated, plain JSON only


class PayloadCodec:
    """The argument codec of one job function."""

    def __init__(self, fn: Callable[..., Any], job_name: str) -> None:
        self._fn = fn
        self._job_name = job_name
        self.signature = inspect.signature(fn)
        # A classmethod's job (``JobFunction.__set_name__``): its first argument must be this
        # class or a subclass, checked when it comes back (a payload naming another is refused).
        self.lead_class: type | None = None

    @cached_property
    def _params(self) -> dict[str, _Param]:
        hints = _type_hints(self._fn, self._job_name)
        return {
            name: _Param(name, p.kind, self._adapter(name, p, hints))
            for name, p in self.signature.parameters.items()
        }

    @cached_property
    def _result_adapter(self) -> TypeAdapter[Any] | None:
        hint = _type_hints(self._fn, self._job_name).get("return")
        return None if hint is None else _build_adapter(hint, self._job_name, "return value")

    def _adapter(
        self, name: str, p: inspect.Parameter, hints: dict[str, Any]
    ) -> TypeAdapter[Any] | None:
        hint = hints.get(name)
        if hint is None or hint is Any:
            return None  # the codecs of queue_runtime.codecs
        if p.kind is inspect.Parameter.VAR_POSITIONAL:
            hint = tuple[hint, ...]  # type: ignore[valid-type]
        elif p.kind is inspect.Parameter.VAR_KEYWORD:
            hint = dict[str, hint]  # type: ignore[valid-type]
        return _build_adapter(hint, self._job_name, f"parameter {name!r}", _ARGUMENTS)

    @cached_property
    def _fast_types(self) -> dict[str, frozenset[type]] | None:
        """Parameter name -> value types stored as they are; None: no fast path for this job.

        ``list`` / ``dict`` in a set: a list (a dict with str keys) whose items are
        of the types ``_fast_items[name][list]`` (``[dict]``) is stored as a copy.
        """
        if self._simple is None:
            return None
        hints = _type_hints(self._fn, self._job_name)
        found: dict[str, frozenset[type]] = {}
        for name in self.signature.parameters:
            if name not in hints:
                found[name], self._fast_items[name] = _UNANNOTATED, _ANY_ITEMS
                continue
            items: dict[type, frozenset[type]] = {}
            exact = _scalar_types(hints[name], items)
            if exact is None:
                return None
            found[name], self._fast_items[name] = exact, items
        return found

    @cached_property
    def _fast_items(self) -> dict[str, dict[type, frozenset[type]]]:
        return {}  # filled by _fast_types

    @cached_property
    def _order(self) -> tuple[str, ...]:
        """Parameter names in signature order."""
        return tuple(self.signature.parameters)

    @cached_property
    def _simple(self) -> tuple[list[str], frozenset[str], frozenset[str]] | None:
        """Positional names, all names, required names; None when *args/**kw/positional-only."""
        params = self.signature.parameters.values()
        if any(p.kind not in _SIMPLE_KINDS for p in params):
            return None
        positional = [p.name for p in params if p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD]
        required = frozenset(p.name for p in params if p.default is inspect.Parameter.empty)
        return positional, frozenset(self.signature.parameters), required

    # -- enqueue side -------------------------------------------------------

    def encode(self, args: tuple[Any, ...], kwargs: dict[str, Any], max_bytes: int) -> EncodedArgs:
        """Validated, JSON-ready arguments (name -> value); raises PayloadError / PayloadTooLarge."""
        fast = self._fast_types
        if fast is not None:
            payload = self._encode_fast(fast, args, kwargs, max_bytes)
            if payload is not None:
                return payload
        return self._encode_checked(args, kwargs, max_bytes)

    def encode_many(self, calls: list[tuple[Any, Any]], max_bytes: int) -> list[EncodedArgs]:
        """``encode`` for each ``(args, kwargs)`` of a batch (the same result and errors, in order)."""
        fast = self._fast_types
        if fast is None:
            return [self._encode_checked(tuple(a), dict(k), max_bytes) for a, k in calls]
        out: list[EncodedArgs] = []
        append, encode_fast = out.append, self._encode_fast
        for args, kwargs in calls:
            payload = encode_fast(fast, args, kwargs, max_bytes)
            if payload is None:
                payload = self._encode_checked(tuple(args), dict(kwargs), max_bytes)
            append(payload)
        return out

    def _encode_fast(
        self, fast: dict[str, frozenset[type]], args: Any, kwargs: Any, max_bytes: int
    ) -> EncodedArgs | None:
        """The payload when every value is of a type stored unchanged; None: take the checked path."""
        positional, names, required = self._simple  # type: ignore[misc]  # set when fast is
        if args:
            if type(args) is not tuple or type(kwargs) is not dict or len(args) > len(positional):
                return None
            payload = EncodedArgs(zip(positional, args, strict=False))
            if kwargs:
                if kwargs.keys() & payload.keys():
                    return None
                payload.update(kwargs)
        elif type(kwargs) is dict:
            payload = EncodedArgs(kwargs)
        else:
            return None
        keys = payload.keys()
        if not (required <= keys and keys <= names):
            return None
        for name, value in payload.items():
            kind = type(value)
            if kind not in fast[name]:
                return None
            if kind is list or kind is dict:
                copied = _copy_flat(value, self._fast_items[name][kind])
                if copied is None:
                    return None
                payload[name] = copied  # same keys: safe while iterating
        try:
            text = _encode_flat(payload)
        except (ValueError, TypeError):  # NaN, infinity: the checked path says what they become
            return None
        if len(text) > max_bytes or ("\\u" in text and json_text_suspect(text)):
            return None  # the checked path raises PayloadTooLarge, or finds a NUL, for sure
        payload.json = text
        return payload

    def _encode_checked(
        self, args: tuple[Any, ...], kwargs: dict[str, Any], max_bytes: int
    ) -> EncodedArgs:
        params = self._params
        bound = self._bind(args, kwargs)
        payload = EncodedArgs({name: self._dump(params[name], v) for name, v in bound.items()})
        payload.json = self._dumps(payload)
        if len(payload.json) > max_bytes:  # ensure_ascii: characters are bytes
            size = len(payload.json)
            raise PayloadTooLarge(f"{self._job_name}: {size} bytes > max_payload_bytes={max_bytes}")
        return payload

    def _dumps(self, payload: dict[str, Any]) -> str:
        """The JSON text; PayloadError naming the parameter PostgreSQL would refuse."""
        try:
            text = json.dumps(payload, separators=(",", ":"), allow_nan=False)
        except (TypeError, ValueError) as exc:
            self._refuse(payload)
            raise PayloadError(f"{self._job_name}: not JSON: {exc}") from exc
        if json_text_suspect(text):
            self._refuse(payload)
        return text

    def _refuse(self, payload: dict[str, Any]) -> None:
        """PayloadError for the first parameter whose value cannot be stored (if one cannot)."""
        for name, value in payload.items():
            problem = _json_problem(value) or value_problem(value)
            if problem:
                raise PayloadError(f"{self._job_name}: parameter {name!r}: {problem}")

    def _bind(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
        """The passed arguments by name. A fast path for plain signatures (the bulk-enqueue
        hot loop); anything unusual goes through ``Signature.bind`` for its exact error."""
        simple = self._simple
        if simple is not None:
            positional, names, required = simple
            if len(args) <= len(positional):
                bound = dict(zip(positional, args, strict=False))
                if kwargs.keys() <= names and not (kwargs.keys() & bound.keys()):
                    bound.update(kwargs)
                    if required <= bound.keys():
                        return bound
        try:
            return dict(self.signature.bind(*args, **kwargs).arguments)
        except TypeError as exc:
            raise PayloadError(f"{self._job_name}: {exc}") from exc

    def _dump(self, param: _Param, value: Any) -> Any:
        if param.adapter is None:
            return self._encode_value(param.name, value)
        try:
            valid = param.adapter.validate_python(value)
        except ValidationError as exc:
            raise PayloadError(
                f"{self._job_name}: parameter {param.name!r}: {_first(exc)}"
            ) from exc
        try:
            return param.adapter.dump_python(valid, mode="json")
        except (
            ValueError,
            TypeError,
            RecursionError,
        ) as exc:  # bytes not UTF-8, an object, a cycle
            raise PayloadError(
                f"{self._job_name}: parameter {param.name!r}: cannot be stored as JSON"
                f" ({type(exc).__name__}: {str(exc).splitlines()[0][:120]})"
            ) from exc

    def _encode_value(self, name: str, value: Any) -> Any:
        try:
            return encode_value(value)
        except RecursionError:  # a structure that contains itself
            kind, why = f"builtins.{type(value).__name__}", "it contains itself: not JSON"
            raise self._unencodable(name, Unencodable(f"{kind}: {why}", kind, why)) from None
        except Unencodable as exc:
            raise self._unencodable(name, exc) from exc

    def _unencodable(self, name: str, exc: Unencodable) -> Unencodable:
        error = Unencodable(
            f"{self._job_name}: parameter {name!r}: {exc.detail}", exc.type_name, exc.reason
        )
        error.param = name
        return error

    # -- worker side --------------------------------------------------------

    def decode(self, payload: dict[str, Any]) -> tuple[list[Any], dict[str, Any]]:
        """Call arguments back from stored JSON; PayloadError if they no longer fit the signature."""
        values: dict[str, Any] = {}
        for name, value in payload.items():
            param = self._params.get(name)
            if param is None:
                raise PayloadError(
                    f"{self._job_name}: stored argument {name!r} is not a parameter any more"
                )
            values[name] = self._load(param, value)
        if self.lead_class is not None:
            self._check_lead(values)
        simple = self._simple
        if simple is not None and simple[2] <= values.keys():
            # No *args, **kwargs or positional-only, every required name stored: split as
            # BoundArguments does (the leading run of positional names, then the rest by
            # name) without Signature.bind, which was a fifth of a worker's calls per job.
            positional = []
            for name in simple[0]:
                if name not in values:
                    break
                positional.append(values[name])
            taken = simple[0][: len(positional)]
            return positional, {n: values[n] for n in self._order if n in values and n not in taken}
        # BoundArguments splits positional / keyword correctly (positional-only, *args).
        ordered = {name: values[name] for name in self.signature.parameters if name in values}
        bound = inspect.BoundArguments(self.signature, ordered)
        try:
            self.signature.bind(*bound.args, **bound.kwargs)
        except TypeError as exc:
            raise PayloadError(f"{self._job_name}: {exc}") from exc
        return list(bound.args), dict(bound.kwargs)

    def _load(self, param: _Param, value: Any) -> Any:
        if param.adapter is None:
            if type(value) is dict or type(value) is list:
                return self._decode_value(param.name, value)
            return value
        try:
            return param.adapter.validate_python(value)
        except ValidationError as exc:
            raise PayloadError(
                f"{self._job_name}: parameter {param.name!r}: {_first(exc)}"
            ) from exc

    def _decode_value(self, name: str, value: Any) -> Any:
        try:
            return decode_value(value)
        except PayloadError as exc:
            raise PayloadError(f"{self._job_name}: parameter {name!r}: {exc.detail}") from exc

    def _check_lead(self, values: dict[str, Any]) -> None:
        lead = next(iter(self.signature.parameters), None)
        found = values.get(lead) if lead is not None else None
        owner = self.lead_class
        if not (isinstance(found, type) and owner is not None and issubclass(found, owner)):
            what = found.__qualname__ if isinstance(found, type) else type(found).__name__
            raise PayloadError(
                f"{self._job_name}: stored class {what!r} is not {owner!r} or a subclass: refused"
            )

    def decode_result(self, stored: Any) -> Any:
        """A stored JSON result back as the value the function returned (typed when annotated)."""
        if self._result_adapter is None:
            return stored
        return self._result_adapter.validate_json(json.dumps(stored))

    def encode_result(self, value: Any) -> Any:
        """The job's return value as JSON (what ``JobHandle.result()`` gives back)."""
        where = f"{self._job_name}: return value"
        if self._result_adapter is None:
            return _plain_json(value, where)
        try:
            return self._result_adapter.dump_python(value, mode="json")
        except (ValidationError, TypeError, ValueError) as exc:
            raise PayloadError(f"{where}: {exc}") from exc


def dumps(payload: Any, job_name: str = "job") -> str:
    try:
        return json.dumps(payload, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise PayloadError(f"{job_name}: not JSON: {exc}") from exc


def _json_problem(value: Any) -> str | None:
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError) as exc:  # NaN, infinity ("Out of range float values ...")
        return f"not JSON: {exc}"
    return None


def _scalar_types(hint: Any, items: dict[type, frozenset[type]]) -> frozenset[type] | None:
    """The exact types a JSON-scalar annotation (or a list / dict of scalars, or a union of
    them) keeps unchanged, their item types added to ``items``; None: not such an annotation."""
    try:
        found = _SCALAR_HINTS.get(hint)
    except TypeError:  # an unhashable annotation
        return None
    if found is not None:
        if hint is Any:
            if items.keys() & _ANY_ITEMS.keys():
                return None  # list[int] | Any: pydantic picks per value, no single check
            items.update(_ANY_ITEMS)
        return found
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if hint in (list, dict) or origin in (list, dict):
        container = hint if origin is None else origin
        if container in items:
            return None  # list[int] | list[str]: pydantic picks per value, no single check
        item_hint = Any
        if container is list and args:
            item_hint = args[0]
        elif container is dict and args:
            if args[0] not in (str, Any):
                return None
            item_hint = args[1]
        inner: dict[type, frozenset[type]] = {}
        item_types = _scalar_types(item_hint, inner)
        if item_types is None or (inner and item_hint is not Any):
            return None  # list[list[int]] and such: pydantic
        items[container] = item_types - {list, dict}  # flat: nested containers go to pydantic
        return frozenset({container})
    if origin in (typing.Union, types.UnionType):
        parts = [_scalar_types(arg, items) for arg in args]
        if all(part is not None for part in parts):
            return frozenset().union(*parts)  # type: ignore[arg-type]
    return None


def _copy_flat(value: Any, item_types: frozenset[type]) -> Any:
    """A copy of a list, or of a dict with str keys, whose items are all of ``item_types``."""
    if type(value) is list:
        for item in value:
            if type(item) not in item_types:
                return None
        return list(value)
    if TAG in value:
        return None  # the tag key: the codecs escape the dict
    for key, item in value.items():
        if type(key) is not str or type(item) not in item_types:
            return None
    return dict(value)


def _plain_json(value: Any, where: str) -> Any:
    """``value`` when it is plain JSON (it round-trips unchanged); PayloadError otherwise."""
    if isinstance(value, float) and not math.isfinite(value):
        raise PayloadError(f"{where}: {value!r} is not valid JSON")
    if isinstance(value, _JSON_SCALARS):
        return value
    if isinstance(value, list | tuple):
        return [_plain_json(item, where) for item in value]
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        return {k: _plain_json(v, where) for k, v in value.items()}
    raise PayloadError(
        f"{where}: {type(value).__name__} is not plain JSON; annotate the parameter with its type "
        f"(e.g. `: {type(value).__name__}`) so it is converted and comes back as that type"
    )


def _type_hints(fn: Callable[..., Any], job_name: str) -> dict[str, Any]:
    try:
        return typing.get_type_hints(fn)
    except (NameError, TypeError) as exc:
        raise PayloadError(f"{job_name}: cannot resolve the annotations: {exc}") from exc


def _build_adapter(
    hint: Any, job_name: str, what: str, config: ConfigDict | None = None
) -> TypeAdapter[Any]:
    try:
        try:
            return TypeAdapter(hint, config=config)
        except PydanticUserError:  # a model, dataclass or TypedDict: its own config rules
            return TypeAdapter(hint)
    except PydanticSchemaGenerationError as exc:
        raise PayloadError(
            f"{job_name}: {what} of type {hint!r} cannot be stored as JSON (live objects such as "
            "connections or sessions cannot travel to a worker: pass an id instead)"
        ) from exc


def _first(exc: ValidationError) -> str:
    err = exc.errors()[0]
    where = ".".join(str(p) for p in err["loc"])
    return f"{where + ': ' if where else ''}{err['msg']} (got {err.get('input')!r})"
