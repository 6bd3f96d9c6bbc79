"""The scalar fast path of the payload codec gives exactly what the pydantic path gives."""

from __future__ import annotations

import json
import math
from datetime import date
from typing import Any, Optional

import pytest
from hypothesis import given
from hypothesis import strategies as st

from queue_runtime.errors import PayloadError, PayloadTooLarge
from queue_runtime.payload import EncodedArgs, PayloadCodec

LIMIT = 10_000


def scalars(i: int, t: float, name: str = "", flag: bool = False) -> None: ...


def unions(a: int | None, b: Optional[str], c: float | int, d: Any, e=None) -> None: ...  # type: ignore[no-untyped-def]  # noqa: UP045


def rich(day: date, n: int) -> None: ...


class Flavour(int):
    """An int subclass: pydantic turns it into a plain int, the fast path must not keep it."""


def checked(codec: PayloadCodec, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """What the pydantic path alone makes of the call: the payload and its JSON, or the error."""
    try:
        payload = codec._encode_checked(args, kwargs, LIMIT)
    except PayloadError as exc:
        return type(exc), str(exc)
    return dict(payload), payload.json


def fast(codec: PayloadCodec, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    try:
        payload = codec.encode(args, kwargs, LIMIT)
    except PayloadError as exc:
        return type(exc), str(exc)
    return dict(payload), payload.json


def test_plain_scalar_signatures_have_a_fast_path() -> None:
    assert PayloadCodec(scalars, "t.scalars")._fast_types is not None
    assert PayloadCodec(unions, "t.unions")._fast_types is not None
    assert PayloadCodec(rich, "t.rich")._fast_types is None  # date: pydantic converts it


CASES: list[tuple[tuple[Any, ...], dict[str, Any]]] = [
    ((1, 2.5), {}),
    ((), {"i": 1, "t": 2.5, "name": 'h\u00e9\n"x"', "flag": True}),
    ((True, 2.5), {}),  # bool for int: pydantic makes it 1
    ((Flavour(3), 2.5), {}),  # int subclass: pydantic makes it an int
    ((1, 3), {}),  # int for float: pydantic makes it 3.0
    ((1, math.nan), {}),  # NaN: not JSON
    ((1, math.inf), {}),
    (("1", 2.5), {}),  # lax str -> int
    (("one", 2.5), {}),  # refused
    ((1,), {}),  # t missing
    ((1, 2.5), {"i": 1}),  # i twice
    ((1, 2.5), {"zzz": 1}),  # unknown keyword
    ((1, 2.5, "n", True, "extra"), {}),  # too many
    ((2**80, -0.0), {}),
]


@pytest.mark.parametrize(("args", "kwargs"), CASES)
def test_fast_path_agrees_with_the_checked_path(
    args: tuple[Any, ...], kwargs: dict[str, Any]
) -> None:
    codec = PayloadCodec(scalars, "t.scalars")
    assert fast(codec, args, kwargs) == checked(codec, args, kwargs)


UNION_CASES: list[tuple[Any, ...]] = [
    (None, None, 1.5, None),
    (1, "x", 2, [1, (2, 3)]),
    (True, "x", True, {"k": 1}),
    (1.5, 1, 1.0, {1, 2}),
    (None, None, 1, math.nan),
]


@pytest.mark.parametrize("args", UNION_CASES)
def test_unions_any_and_unannotated_agree(args: tuple[Any, ...]) -> None:
    codec = PayloadCodec(unions, "t.unions")
    assert fast(codec, args, {}) == checked(codec, args, {})
    assert fast(codec, args, {"e": (1, "x")}) == checked(codec, args, {"e": (1, "x")})


scalar_values = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(), st.text(), st.just(Flavour(2))
)


@given(st.lists(scalar_values, min_size=0, max_size=5))
def test_any_scalar_call_agrees(values: list[Any]) -> None:
    for codec in (PayloadCodec(scalars, "t.scalars"), PayloadCodec(unions, "t.unions")):
        args = tuple(values)
        assert fast(codec, args, {}) == checked(codec, args, {})


def test_encode_many_is_encode_for_each_call() -> None:
    codec = PayloadCodec(scalars, "t.scalars")
    calls = [((i,), {"t": i / 3}) for i in range(50)] + [((True,), {"t": 1})]
    many = codec.encode_many(calls, LIMIT)
    one = [codec.encode(a, k, LIMIT) for a, k in calls]
    assert [dict(p) for p in many] == [dict(p) for p in one]
    assert [p.json for p in many] == [p.json for p in one]
    assert all(isinstance(p, EncodedArgs) for p in many)
    assert json.loads(many[-1].json) == {"i": 1, "t": 1.0}
    with pytest.raises(PayloadError, match=r"parameter 'i'"):
        codec.encode_many([((1,), {"t": 1.0}), (("x",), {"t": 1.0})], LIMIT)


def test_encode_many_takes_lists_and_tuples_of_args() -> None:
    codec = PayloadCodec(scalars, "t.scalars")
    assert [dict(p) for p in codec.encode_many([([1, 2.0], {}), ((1,), {"t": 2.0})], LIMIT)] == [
        {"i": 1, "t": 2.0}
    ] * 2


def test_size_limit_on_the_fast_path() -> None:
    codec = PayloadCodec(scalars, "t.scalars")
    codec.encode((1, 2.5), {"name": "x" * 40}, 70)
    with pytest.raises(PayloadTooLarge, match=r"t\.scalars: 7[0-9] bytes > max_payload_bytes=70"):
        codec.encode((1, 2.5), {"name": "x" * 50}, 70)
    with pytest.raises(PayloadTooLarge):
        codec.encode_many([((1, 2.5), {"name": "x" * 50})], 70)


def test_rich_annotations_still_convert() -> None:
    codec = PayloadCodec(rich, "t.rich")
    assert codec.encode_many([(("2030-01-02", 1), {})], LIMIT)[0] == {"day": "2030-01-02", "n": 1}
