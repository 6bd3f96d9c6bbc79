"""Tagged JSON for unannotated (or ``Any``) arguments: every codec round-trips, classes are
resolved safely, an app registers its own codec, a value nothing covers is Unencodable."""

from __future__ import annotations

import dataclasses
import datetime as dt
import enum
import json
import os
import sys
import uuid
from decimal import Decimal
from pathlib import Path
from typing import Any

import attrs
import pytest
from pydantic import BaseModel

from queue_runtime import codecs
from queue_runtime.codecs import decode_value, encode_value, register_codec
from queue_runtime.errors import ConfigError, PayloadError, Unencodable
from queue_runtime.payload import PayloadCodec


class Color(enum.Enum):
    RED = "red"


class Level(enum.IntEnum):
    HIGH = 3


class Kind(enum.StrEnum):
    MAIL = "mail"


@dataclasses.dataclass(frozen=True)
class Point:
    x: int
    at: dt.date
    tags: tuple[str, ...] = ()


class Invoice(BaseModel):
    total: Decimal
    due: dt.datetime


@attrs.define
class Box:
    size: Decimal
    inner: Point


VALUES: dict[str, Any] = {
    "datetime": dt.datetime(2030, 5, 17, 9, 30, 1, 5, tzinfo=dt.UTC),
    "naive datetime": dt.datetime(2030, 5, 17, 9, 30),
    "date": dt.date(2030, 5, 17),
    "time": dt.time(9, 30, 15, 7),
    "timedelta": dt.timedelta(days=-1, seconds=5, microseconds=3),
    "decimal": Decimal("1.10"),
    "uuid": uuid.UUID("12345678-1234-5678-1234-567812345678"),
    "tuple": (1, "a", (2, None)),
    "set": {1, 2, 3},
    "frozenset": frozenset({"x", "y"}),
    "enum": Color.RED,
    "int enum": Level.HIGH,
    "str enum": Kind.MAIL,
    "dataclass": Point(1, dt.date(2020, 1, 1), ("a",)),
    "pydantic": Invoice(total=Decimal("9.99"), due=dt.datetime(2030, 1, 1, tzinfo=dt.UTC)),
    "attrs": Box(Decimal("2"), Point(2, dt.date(2021, 2, 2))),
    "dict with the tag key": {"__qr__": "decimal", "v": "not a decimal"},
    "dict with int keys": {1: "a", (2, 3): dt.date(2020, 1, 1)},
    "nested": [{"when": dt.date(2020, 1, 1), "n": [Decimal("1"), {Color.RED}]}],
}


@pytest.mark.parametrize("value", VALUES.values(), ids=VALUES.keys())
def test_each_codec_round_trips_through_json_with_its_type(value: Any) -> None:
    back = decode_value(json.loads(json.dumps(encode_value(value))))
    assert back == value and type(back) is type(value)


def test_the_stored_shape_is_a_tagged_dict() -> None:
    assert encode_value(Decimal("1.10")) == {"__qr__": "decimal", "v": "1.10"}
    assert encode_value({"__qr__": 1}) == {"__qr__": "dict", "v": {"__qr__": 1}}
    assert encode_value(Color.RED) == {"__qr__": "enum", "cls": f"{__name__}:Color", "v": "red"}


def test_a_value_no_codec_covers_is_unencodable_with_its_type_and_reason() -> None:
    with pytest.raises(Unencodable) as caught:
        encode_value({"lock": [object()]})
    assert caught.value.type_name == "builtins.object"
    assert "no codec covers this type" in caught.value.reason


def test_a_forged_class_that_is_not_a_dataclass_is_refused_without_being_called(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: list[Any] = []
    monkeypatch.setattr(os, "system", lambda *a, **k: calls.append(a))
    forged = {"__qr__": "dataclass", "cls": "os:system", "v": {"command": "touch /tmp/pwned"}}
    with pytest.raises(PayloadError, match="'os:system' is not a dataclass class: refused"):
        decode_value(forged)
    assert calls == []
    enum_as_pydantic = {"__qr__": "pydantic", "cls": f"{__name__}:Color", "v": "red"}
    with pytest.raises(PayloadError, match="is not a pydantic class"):
        decode_value(enum_as_pydantic)


def test_a_module_not_imported_and_not_allowed_is_never_imported() -> None:
    assert "antigravity" not in sys.modules
    with pytest.raises(PayloadError, match="module 'antigravity' is not allowed"):
        decode_value({"__qr__": "enum", "cls": "antigravity:Anything", "v": 1})
    assert "antigravity" not in sys.modules


def test_an_unknown_tag_is_refused() -> None:
    with pytest.raises(PayloadError, match="unknown codec tag 'nope'"):
        decode_value({"__qr__": "nope", "v": 1})


class Money:
    def __init__(self, cents: int, currency: str) -> None:
        self.cents, self.currency = cents, currency

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Money) and (other.cents, other.currency) == (
            self.cents,
            self.currency,
        )

    __hash__ = None  # type: ignore[assignment]


def test_an_app_registers_its_own_codec() -> None:
    register_codec(
        Money, "tests.money", lambda m: [m.cents, m.currency], lambda v: Money(v[0], v[1])
    )
    stored = encode_value({"price": Money(250, "EUR")})
    assert stored == {"price": {"__qr__": "tests.money", "v": [250, "EUR"]}}
    assert decode_value(json.loads(json.dumps(stored))) == {"price": Money(250, "EUR")}
    with pytest.raises(ConfigError, match="codec tag 'decimal' is taken"):
        register_codec(Money, "decimal", str, str)


def untyped(when, *, amount: Any = None):  # type: ignore[no-untyped-def]
    return when, amount


def typed(amount: Decimal) -> Decimal:
    return amount


def test_unannotated_and_any_parameters_use_the_codecs_annotated_ones_pydantic() -> None:
    codec = PayloadCodec(untyped, "tests.untyped")
    payload = codec.encode((dt.date(2020, 1, 2),), {"amount": Decimal("3.5")}, 10_000)
    assert json.loads(payload.json) == {
        "when": {"__qr__": "date", "v": "2020-01-02"},
        "amount": {"__qr__": "decimal", "v": "3.5"},
    }
    args, kwargs = codec.decode(json.loads(payload.json))
    assert (args, kwargs) == ([dt.date(2020, 1, 2)], {"amount": Decimal("3.5")})
    with pytest.raises(PayloadError) as refused:  # a validation failure is not a fallback
        PayloadCodec(typed, "tests.typed").encode(("not a number",), {}, 10_000)
    assert not isinstance(refused.value, Unencodable)


def test_a_plain_dict_with_the_tag_key_leaves_the_fast_path_escaped() -> None:
    codec = PayloadCodec(untyped, "tests.untyped")
    payload = codec.encode(({"__qr__": "x"},), {}, 10_000)
    assert codec.decode(json.loads(payload.json)) == ([{"__qr__": "x"}], {})


def test_an_allowed_package_is_imported_to_find_a_class(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = tmp_path / "qr_allowed_pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "kinds.py").write_text("import enum\nclass Tier(enum.Enum):\n    GOLD = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    stored = {"__qr__": "enum", "cls": "qr_allowed_pkg.kinds:Tier", "v": 1}
    with pytest.raises(PayloadError, match="not allowed"):
        decode_value(stored)
    codecs.allow_modules("qr_allowed_pkg.jobs")  # what @job does for a job's own package
    try:
        assert decode_value(stored).name == "GOLD"
    finally:
        for name in ("qr_allowed_pkg.kinds", "qr_allowed_pkg"):
            sys.modules.pop(name, None)


class _SelfText(str):
    """A str subclass whose ``__str__`` returns itself, as Django's SafeString does."""

    def __str__(self) -> str:
        return self


class _SelfNumber(int):
    def __int__(self) -> int:
        return self


def test_a_str_or_int_subclass_is_stored_as_its_plain_value_even_if_str_returns_itself() -> None:
    # str(value) would hand back the subclass and recurse without end (a SafeString body
    # of a Django mail was "unencodable: it contains itself" until this)
    for value, plain in ((_SelfText("hi"), "hi"), (_SelfNumber(7), 7)):
        stored = json.loads(json.dumps(encode_value({"x": value})))
        assert stored == {"x": plain} and type(stored["x"]) is type(plain)
        codec = PayloadCodec(untyped, "tests.untyped")
        payload = json.loads(codec.encode((value,), {}, 10_000).json)
        assert payload == {"when": plain}
        (back,), _ = codec.decode(payload)
        assert back == plain and type(back) is type(plain)


def test_a_markup_string_comes_back_as_markup_so_jinja_does_not_escape_it_twice() -> None:
    from markupsafe import Markup, escape

    stored = json.loads(json.dumps(encode_value([Markup("<b>%s</b>") % "a&b"])))
    assert stored == [{"__qr__": "markup", "v": "<b>a&amp;b</b>"}]
    (back,) = decode_value(stored)
    assert type(back) is Markup and escape(back) == "<b>a&amp;b</b>"
