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


def containers(  # type: ignore[no-untyped-def]
    ids: list[int],
    scores: dict[str, float],
    tags: list[str] | None = None,
    raw: list = None,  # type: ignore[assignment]  # noqa: RUF013
    anything: Any = None,
    untyped=None,
) -> None: ...


def test_lists_and_dicts_of_scalars_have_a_fast_path() -> None:
    assert PayloadCodec(containers, "t.containers")._fast_types is not None

    def nested(rows: list[list[int]]) -> None: ...

    def two_lists(v: list[int] | list[str]) -> None: ...

    def int_keys(v: dict[int, str]) -> None: ...

    for fn in (nested, two_lists, int_keys):
        assert PayloadCodec(fn, "t.fn")._fast_types is None, fn


def test_containers_are_copied_not_shared() -> None:
    ids, scores = [1, 2], {"a": 1.5}
    payload = PayloadCodec(containers, "t.containers").encode((ids, scores), {}, LIMIT)
    assert payload == {"ids": [1, 2], "scores": {"a": 1.5}}
    assert payload["ids"] is not ids and payload["scores"] is not scores


CONTAINER_CASES: list[tuple[Any, ...]] = [
    ([1, 2], {"a": 1.5}),
    ([1, True], {"a": 1.5}),  # bool in list[int]
    ([1, 2], {"a": 1}),  # int in dict[str, float]
    ((1, 2), {"a": 1.5}),  # tuple for a list
    ([1, "2"], {"a": 1.5}),  # lax str in list[int]
    ([1, "x"], {"a": 1.5}),  # refused
    ([1], {1: 1.5}),  # int key
    ([1], {"a": math.nan}),
    ([], {}, ["x"], [1, "a", None, 2.5], [1, {"k": [2]}], {"k": (1, 2)}),
    ([], {}, None, [[1]], {"a": 1}, [{1, 2}]),
    ([], {}, ["x", 1], None, [True], {"k": math.inf}),
]


@pytest.mark.parametrize("args", CONTAINER_CASES)
def test_container_calls_agree(args: tuple[Any, ...]) -> None:
    codec = PayloadCodec(containers, "t.containers")
    assert fast(codec, args, {}) == checked(codec, args, {})


flat_lists = st.lists(scalar_values, max_size=4)
flat_dicts = st.dictionaries(
    st.one_of(st.text(max_size=3), st.integers()), scalar_values, max_size=3
)
container_values = st.one_of(scalar_values, flat_lists, flat_dicts, st.tuples(st.integers()))


@given(st.lists(container_values, min_size=2, max_size=6))
def test_any_container_call_agrees(values: list[Any]) -> None:
    codec = PayloadCodec(containers, "t.containers")
    args = tuple(values)
    assert fast(codec, args, {}) == checked(codec, args, {})
