"""Arguments <-> JSON against the signature: what is stored, what comes back."""

from __future__ import annotations

import json
import uuid
from datetime import date
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel

from queue_runtime.errors import PayloadError, PayloadTooLarge, Unencodable
from queue_runtime.payload import PayloadCodec

LIMIT = 10_000


class Point(BaseModel):
    x: int
    y: int


def shapes(a: int, /, b: str, *rest: float, flag: bool = False, **extra: int) -> None: ...


def typed(when: date, amount: Decimal, ref: uuid.UUID, where: Point) -> Point:
    return where


def roundtrip(codec: PayloadCodec, *args: Any, **kwargs: Any) -> tuple[list[Any], dict[str, Any]]:
    stored = codec.encode(args, kwargs, LIMIT)
    return codec.decode(json.loads(json.dumps(stored)))


def test_every_parameter_kind_round_trips() -> None:
    codec = PayloadCodec(shapes, "t.shapes")
    stored = codec.encode((1, "b", 2.5, 3.0), {"flag": True, "z": 9}, LIMIT)
    assert stored == {"a": 1, "b": "b", "rest": [2.5, 3.0], "flag": True, "extra": {"z": 9}}
    args, kwargs = codec.decode(stored)
    assert args == [1, "b", 2.5, 3.0] and kwargs == {"flag": True, "z": 9}


def test_only_passed_arguments_are_stored_defaults_apply_at_run_time() -> None:
    codec = PayloadCodec(shapes, "t.shapes")
    assert codec.encode((1, "b"), {}, LIMIT) == {"a": 1, "b": "b"}


def test_annotated_rich_types_come_back_as_themselves() -> None:
    codec = PayloadCodec(typed, "t.typed")
    ref = uuid.uuid4()
    args, kwargs = roundtrip(codec, date(2030, 1, 2), Decimal("1.10"), ref, Point(x=1, y=2))
    assert args == [date(2030, 1, 2), Decimal("1.10"), ref, Point(x=1, y=2)] and kwargs == {}
    assert codec.encode_result(Point(x=3, y=4)) == {"x": 3, "y": 4}


def test_lax_conversion_at_enqueue_is_validated() -> None:
    codec = PayloadCodec(typed, "t.typed")
    stored = codec.encode(("2030-01-02", "3", str(uuid.UUID(int=1)), {"x": "1", "y": 2}), {}, LIMIT)
    assert stored["where"] == {"x": 1, "y": 2} and stored["amount"] == "3"
    with pytest.raises(PayloadError, match=r"parameter 'where'.*x"):
        codec.encode(("2030-01-02", "3", str(uuid.UUID(int=1)), {"x": "one", "y": 2}), {}, LIMIT)


def test_size_limit_counts_the_stored_json() -> None:
    codec = PayloadCodec(shapes, "t.shapes")
    codec.encode((1, "x" * 50), {}, 70)
    with pytest.raises(PayloadTooLarge, match=r"t\.shapes: 7[0-9] bytes > max_payload_bytes=70"):
        codec.encode((1, "x" * 60), {}, 70)


class Session:
    """A live object (a connection, an ORM session): no JSON form."""


def test_live_objects_cannot_be_parameters() -> None:
    def needs_session(s: Session) -> None: ...

    codec = PayloadCodec(needs_session, "t.needs_session")
    with pytest.raises(PayloadError, match=r"cannot be stored as JSON.*pass an id instead"):
        codec.encode((Session(),), {}, LIMIT)


def test_stored_payload_that_no_longer_fits_is_a_payload_error() -> None:
    codec = PayloadCodec(shapes, "t.shapes")
    with pytest.raises(PayloadError, match="'gone' is not a parameter any more"):
        codec.decode({"a": 1, "b": "x", "gone": 3})
    with pytest.raises(PayloadError, match="missing a required argument"):
        codec.decode({"a": 1})
    with pytest.raises(PayloadError, match="parameter 'a'"):
        codec.decode({"a": "one", "b": "x"})


def test_unannotated_results_must_be_plain_json() -> None:
    def untyped():  # type: ignore[no-untyped-def]
        return None

    codec = PayloadCodec(untyped, "t.untyped")
    assert codec.encode_result({"a": [1, 2]}) == {"a": [1, 2]}
    with pytest.raises(PayloadError, match="return value: set is not plain JSON"):
        codec.encode_result({1, 2})


def plain(a: int, b: int = 2, *, c: int = 3, d: int) -> None: ...


@pytest.mark.parametrize(
    ("args", "kwargs"),
    [
        ((1,), {"d": 4}),
        ((1, 5), {"c": 6, "d": 4}),
        ((), {"a": 1, "d": 4}),
        ((1, 2, 3), {"d": 4}),  # too many positional
        ((1,), {"a": 1, "d": 4}),  # a given twice
        ((1,), {"e": 5, "d": 4}),  # unknown keyword
        ((1,), {}),  # d missing
        ((), {"d": 4}),  # a missing
    ],
)
def test_fast_binding_agrees_with_signature_bind(
    args: tuple[Any, ...], kwargs: dict[str, Any]
) -> None:
    import inspect

    codec = PayloadCodec(plain, "t.plain")
    try:
        expected: Any = dict(inspect.signature(plain).bind(*args, **kwargs).arguments)
    except TypeError as exc:
        expected = str(exc)
    try:
        got: Any = dict(codec.encode(args, kwargs, LIMIT))
    except PayloadError as exc:
        got = str(exc).split("t.plain: ", 1)[1]
    assert got == expected


def test_encoded_arguments_carry_their_json_text() -> None:
    stored = PayloadCodec(plain, "t.plain").encode((1,), {"d": 4}, LIMIT)
    assert json.loads(stored.json) == stored == {"a": 1, "d": 4}


def anything(value, *, label: str = "") -> None:  # type: ignore[no-untyped-def]
    ...


# What PostgreSQL stores: no NUL, no lone surrogate (an emoji, a surrogate pair, is fine).
storable_text = st.text(st.characters(exclude_categories=["Cs"], exclude_characters="\x00"))
json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | storable_text,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(storable_text, inner, max_size=4),
    max_leaves=20,
)


@given(value=json_values, label=storable_text)
def test_plain_json_round_trips_unchanged(value: Any, label: str) -> None:
    codec = PayloadCodec(anything, "t.anything")
    stored = codec.encode((value,), {"label": label}, 10**7)
    args, kwargs = codec.decode(json.loads(stored.json))
    assert args == [value] and kwargs == {"label": label}


@given(value=json_values, bad=st.sampled_from(["\x00", "\ud800", "\udfff"]), data=st.data())
def test_a_string_postgresql_cannot_store_is_refused_wherever_it_is(
    value: Any, bad: str, data: st.DataObject
) -> None:
    """NUL or a lone surrogate, in a value, a nested one or a dict key: one PayloadError."""
    where = data.draw(st.sampled_from(["value", "in list", "as key", "label"]))
    text = data.draw(storable_text) + bad
    arg = {"value": text, "in list": [value, text], "as key": {text: value}}.get(where, value)
    label = text if where == "label" else "ok"
    with pytest.raises(PayloadError, match="PostgreSQL cannot store") as refused:
        PayloadCodec(anything, "t.anything").encode((arg,), {"label": label}, 10**7)
    assert not isinstance(refused.value, Unencodable)  # refused, never run as the site did
    param = "label" if where == "label" else "value"
    assert f"parameter {param!r}" in str(refused.value)


def mixed(a: int, b: str = "b", *, c: int = 0, d: int) -> None:
    pass


@pytest.mark.parametrize(
    "stored",
    [
        {"a": 1, "d": 4},
        {"a": 1, "b": "x", "d": 4},
        {"a": 1, "b": "x", "c": 3, "d": 4},
        {"d": 4, "a": 1, "c": 3},
        {"b": "x", "a": 1, "d": 4},
    ],
)
def test_decode_of_a_plain_signature_splits_as_signature_bind_does(stored: dict[str, Any]) -> None:
    """The fast path (no Signature.bind per job) gives exactly what BoundArguments gives."""
    import inspect

    codec = PayloadCodec(mixed, "t.mixed")
    ordered = {n: stored[n] for n in inspect.signature(mixed).parameters if n in stored}
    expected = inspect.BoundArguments(inspect.signature(mixed), ordered)  # type: ignore[arg-type]
    args, kwargs = codec.decode(dict(stored))
    assert args == list(expected.args) and kwargs == dict(expected.kwargs)


def test_decode_of_a_plain_signature_still_refuses_a_missing_required_argument() -> None:
    codec = PayloadCodec(mixed, "t.mixed")
    with pytest.raises(PayloadError, match="missing a required argument: 'd'"):
        codec.decode({"a": 1})
