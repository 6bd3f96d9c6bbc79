"""Argument codecs: what an unannotated (or ``Any``) parameter may hold, as tagged JSON.

Plain JSON is stored as it is. Other values become a dict tagged ``"__qr__"``:
``{"__qr__": "decimal", "v": "1.10"}``. Covered: ``datetime``, ``date``, ``time``,
``timedelta``, ``Decimal``, ``UUID``, tuples, sets, frozensets, dicts with
non-str keys, ``Enum`` members, dataclasses, pydantic models, attrs classes,
Django lazy strings (forced with ``str()`` at enqueue, in the active language),
Django safe strings (a rendered template, ``format_html``) and markupsafe's ``Markup``
(Flask, Jinja): marked safe again in the worker, so a template there does not escape
them twice,
and model instances BY REFERENCE (Django, SQLAlchemy: model + primary key, read
again in the worker; a model class by its label; any other class of an allowed package,
a classmethod job's ``cls`` among them, by its import path). A Django instance marked with
:func:`snapshot` (a row being deleted) travels BY VALUE instead: its label and
field values, rebuilt in the worker as an unsaved instance, no relation carried. A plain dict that has the
tag key is escaped (``{"__qr__": "dict", "v": {...}}``), so it round-trips.

Classes named in a payload are resolved safely: from a module already imported,
or imported only when its top package is allowed (each job's own package is,
see :func:`allow_modules`); the object found must be a class of the kind the
tag says (dataclass, pydantic model, attrs class, Enum, mapped model) before
anything is called. Never pickle. A value nothing covers raises
:class:`~queue_runtime.errors.Unencodable`.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import importlib
import math
import sys
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from enum import Enum, StrEnum
from typing import Any

from queue_runtime import _refs
from queue_runtime._refs import snapshot, sqlalchemy_session
from queue_runtime.errors import ConfigError, PayloadError, Unencodable

TAG = "__qr__"
VALUE = "v"
__all__ = ["TAG", "Tag", "allow_modules", "decode_value", "encode_value", "register_codec"]
__all__ += ["has_references", "snapshot", "sqlalchemy_session"]


class Tag(StrEnum):
    DICT = "dict"  # a plain dict whose keys include TAG (escaped)
    MAP = "map"  # a dict with keys other than str: [[key, value], ...]
    DATETIME = "datetime"
    DATE = "date"
    TIME = "time"
    TIMEDELTA = "timedelta"  # [days, seconds, microseconds]
    DECIMAL = "decimal"
    UUID = "uuid"
    TUPLE = "tuple"
    SET = "set"
    FROZENSET = "frozenset"
    ENUM = "enum"  # "cls": module:Qualname, "v": the member's value
    DATACLASS = "dataclass"  # "cls", "v": {init field: value}
    PYDANTIC = "pydantic"  # "cls", "v": model_dump(mode="json")
    ATTRS = "attrs"  # "cls", "v": {init attribute: value}
    DJANGO_MODEL = "django.model"  # "model": app_label.ModelName, "pk"
    DJANGO_CLASS = "django.class"  # "model": app_label.ModelName
    DJANGO_SNAPSHOT = "django.snapshot"  # "model", "db", "v": {attname: value} (by value)
    DJANGO_SAFE = "django.safe"  # "v": the text of a SafeString (mark_safe again on decode)
    MARKUP = "markup"  # "v": the text of a markupsafe.Markup (Flask, Jinja): Markup again
    SQLALCHEMY = "sqlalchemy.model"  # "cls", "pk": [identity]
    CLASS = "class"  # "cls": module:Qualname, a class itself (a classmethod job's ``cls``)


REFERENCES = frozenset({Tag.DJANGO_MODEL.value, Tag.SQLALCHEMY.value})


@dataclass(frozen=True, slots=True)
class _Custom:
    kind: type
    tag: str
    encode: Callable[[Any], Any]
    decode: Callable[[Any], Any]


_custom_types: dict[type, _Custom] = {}
_custom_tags: dict[str, _Custom] = {}
_allowed: set[str] = set()  # top packages whose modules a payload may import


def register_codec(
    kind: type, tag: str, encode: Callable[[Any], Any], decode: Callable[[Any], Any]
) -> None:
    """Store values of ``kind`` (and subclasses) as ``{"__qr__": tag, "v": encode(value)}``.

    ``encode`` returns anything this module can store (it is encoded again);
    ``decode`` gets that back and returns the value. Registered codecs win over
    the built-in ones. Register at import time in the app and in its workers.
    """
    if tag in Tag.__members__.values() or (
        tag in _custom_tags and _custom_tags[tag].kind is not kind
    ):
        raise ConfigError(f"codec tag {tag!r} is taken")
    codec = _Custom(kind, tag, encode, decode)
    _custom_types[kind], _custom_tags[tag] = codec, codec


def allow_modules(*names: str) -> None:
    """Let payloads import classes from these top packages when not imported yet (jobs' own are)."""
    _allowed.update(name.partition(".")[0] for name in names)


# -- enqueue side ---------------------------------------------------------------


def encode_value(value: Any) -> Any:
    """``value`` as JSON (tagged where needed); raises Unencodable when nothing covers it."""
    kind = type(value)
    if kind is str or kind is int or kind is bool or value is None:
        return value
    if kind is float:
        if math.isfinite(value):
            return value
        raise _unencodable(value, f"{value!r} is not valid JSON")
    if kind is list:
        return [encode_value(item) for item in value]
    if kind is dict:
        return _encode_dict(value)
    simple = _SIMPLE.get(kind)
    if simple is not None:
        return {TAG: simple[0], VALUE: simple[1](value)}
    return _encode_other(value)


def _encode_dict(value: dict[Any, Any]) -> Any:
    if all(type(key) is str for key in value):
        encoded = {key: encode_value(item) for key, item in value.items()}
        return {TAG: Tag.DICT, VALUE: encoded} if TAG in value else encoded
    return {TAG: Tag.MAP, VALUE: [[encode_value(k), encode_value(v)] for k, v in value.items()]}


def _tagged(tag: str, value: Any) -> dict[str, Any]:
    return {TAG: tag, VALUE: value}


_SIMPLE: dict[type, tuple[Tag, Callable[[Any], Any]]] = {
    dt.datetime: (Tag.DATETIME, dt.datetime.isoformat),
    dt.date: (Tag.DATE, dt.date.isoformat),
    dt.time: (Tag.TIME, dt.time.isoformat),
    dt.timedelta: (Tag.TIMEDELTA, lambda v: [v.days, v.seconds, v.microseconds]),
    Decimal: (Tag.DECIMAL, str),
    uuid.UUID: (Tag.UUID, str),
    tuple: (Tag.TUPLE, lambda v: [encode_value(i) for i in v]),
    set: (Tag.SET, lambda v: [encode_value(i) for i in v]),
    frozenset: (Tag.FROZENSET, lambda v: [encode_value(i) for i in v]),
}


def _encode_other(value: Any) -> Any:
    """Subclasses, registered codecs, framework values, structured classes (slower checks)."""
    for cls in type(value).__mro__:
        custom = _custom_types.get(cls)
        if custom is not None:
            return _tagged(custom.tag, encode_value(custom.encode(value)))
    forced = _refs.lazy_text(value)
    if forced is not None:
        return forced
    for encoder in _ENCODERS:
        found = encoder(value)
        if found is not None:
            return found
    raise _unencodable(value, "no codec covers this type (register one with register_codec)")


def _unencodable(value: Any, reason: str) -> Unencodable:
    name = _refs.type_name(value)
    return Unencodable(f"{name}: {reason}", name, reason)


def _path(cls: type) -> str:
    return f"{cls.__module__}:{cls.__qualname__}"


def _enum(value: Any) -> Any:
    if isinstance(value, Enum):
        return {TAG: Tag.ENUM, "cls": _path(type(value)), VALUE: encode_value(value.value)}
    return None


def _structured(value: Any) -> Any:
    cls = type(value)
    if dataclasses.is_dataclass(cls):
        fields = {
            f.name: encode_value(getattr(value, f.name)) for f in dataclasses.fields(cls) if f.init
        }
        return {TAG: Tag.DATACLASS, "cls": _path(cls), VALUE: fields}
    pydantic = sys.modules.get("pydantic")
    if pydantic is not None and isinstance(value, pydantic.BaseModel):
        return {TAG: Tag.PYDANTIC, "cls": _path(cls), VALUE: value.model_dump(mode="json")}
    attrs = sys.modules.get("attrs")
    if attrs is not None and attrs.has(cls):
        names = [a.name for a in attrs.fields(cls) if a.init]
        fields = {name: encode_value(getattr(value, name)) for name in names}
        return {TAG: Tag.ATTRS, "cls": _path(cls), VALUE: fields}
    return None


def _model(value: Any) -> Any:
    copied = _refs.django_snapshot(value)
    if copied is not None:
        model, db, values = copied
        return {TAG: Tag.DJANGO_SNAPSHOT, "model": model, "db": db, VALUE: encode_value(values)}
    django = _refs.django_instance(value)
    if django is not None:
        return {TAG: Tag.DJANGO_MODEL, "model": django[0], "pk": encode_value(django[1])}
    label = _refs.django_class(value)
    if label is not None:
        return {TAG: Tag.DJANGO_CLASS, "model": label}
    mapped = _refs.sqlalchemy_instance(value)
    if mapped is not None:
        pk = [encode_value(part) for part in mapped[1]]
        return {TAG: Tag.SQLALCHEMY, "cls": _path(mapped[0]), "pk": pk}
    return None


def _safe(value: Any) -> Any:
    text = _refs.safe_text(value)
    if text is not None:
        return {TAG: Tag.DJANGO_SAFE, VALUE: text}
    text = _refs.markup_text(value)
    return None if text is None else {TAG: Tag.MARKUP, VALUE: text}


# The plain value of a subclass, from the base's own method: ``str(value)`` would call the
# subclass's ``__str__``, which may return the value itself (Django's SafeString does).
_PLAIN: tuple[tuple[type, Callable[[Any], Any]], ...] = (
    (str, str.__str__),
    (int, int.__int__),
    (float, float.__float__),
)


def _builtin_subclass(value: Any) -> Any:
    """A str / int / float subclass stored as its plain value."""
    for base, plain in _PLAIN:
        if isinstance(value, base):
            return encode_value(plain(value))
    return None


def _class_ref(value: Any) -> Any:
    """A class (not a Django model's: ``_model`` stores those by label) by its import path,
    when a worker finds this very class there and its package is one payloads may import
    from (a job's own, or ``allow_modules``): what the worker checks on the way back."""
    if not isinstance(value, type):
        return None
    path = _path(value)
    module = sys.modules.get(value.__module__)
    if "<locals>" in value.__qualname__ or _walk(module, value.__qualname__) is not value:
        raise _unencodable(value, f"the class {path} cannot be imported by that name")
    if value.__module__.partition(".")[0] not in _allowed:
        raise _unencodable(
            value,
            f"the class {path} is of a package no job is in (allow_modules({value.__module__!r}) "
            "lets payloads name its classes)",
        )
    return {TAG: Tag.CLASS, "cls": path}


def _walk(found: Any, qualname: str) -> Any:
    """``Outer.Inner`` from a module, attribute by attribute (``__dict__`` only: no getattr)."""
    for part in qualname.split("."):
        found = found.__dict__.get(part) if hasattr(found, "__dict__") else None
    return found


# Enum before the subclass check: a StrEnum member is a str, but comes back as the member;
# so does a safe string, marked safe again. A class last: a model class is _model's.
_ENCODERS: tuple[Callable[[Any], Any], ...] = (
    _enum,
    _model,
    _structured,
    _safe,
    _builtin_subclass,
    _class_ref,
)


# -- worker side ------------------------------------------------------------------


def decode_value(obj: Any) -> Any:
    """A stored value back as the Python value; PayloadError for a tag it does not trust."""
    kind = type(obj)
    if kind is list:
        return [decode_value(item) for item in obj]
    if kind is dict:
        tag = obj.get(TAG)
        if tag is None:
            return {key: decode_value(item) for key, item in obj.items()}
        return _decode_tagged(tag, obj)
    return obj


def has_references(obj: Any) -> bool:
    """Whether a stored value holds a model reference (reading it back reads the database)."""
    kind = type(obj)
    if kind is list:
        return any(has_references(item) for item in obj)
    if kind is dict:
        if obj.get(TAG) in REFERENCES:
            return True
        return any(has_references(item) for item in obj.values())
    return False


def _decode_tagged(tag: Any, obj: dict[str, Any]) -> Any:
    decoder = _DECODERS.get(tag)
    if decoder is not None:
        try:
            return decoder(obj)
        except (KeyError, TypeError, ValueError, ArithmeticError) as exc:
            raise PayloadError(f"stored {tag!r} value is malformed: {exc!r}") from exc
    custom = _custom_tags.get(tag)
    if custom is None:
        raise PayloadError(f"stored value has an unknown codec tag {tag!r} (not registered here)")
    return custom.decode(decode_value(obj[VALUE]))


def _items(obj: dict[str, Any]) -> list[Any]:
    return [decode_value(item) for item in obj[VALUE]]


def _fields(obj: dict[str, Any]) -> dict[str, Any]:
    return {str(k): decode_value(v) for k, v in obj[VALUE].items()}


_DECODERS: dict[str, Callable[[dict[str, Any]], Any]] = {
    Tag.DICT: _fields,
    Tag.MAP: lambda o: {decode_value(k): decode_value(v) for k, v in o[VALUE]},
    Tag.DATETIME: lambda o: dt.datetime.fromisoformat(o[VALUE]),
    Tag.DATE: lambda o: dt.date.fromisoformat(o[VALUE]),
    Tag.TIME: lambda o: dt.time.fromisoformat(o[VALUE]),
    Tag.TIMEDELTA: lambda o: dt.timedelta(*o[VALUE]),
    Tag.DECIMAL: lambda o: Decimal(o[VALUE]),
    Tag.UUID: lambda o: uuid.UUID(o[VALUE]),
    Tag.TUPLE: lambda o: tuple(_items(o)),
    Tag.SET: lambda o: set(_items(o)),
    Tag.FROZENSET: lambda o: frozenset(_items(o)),
    Tag.ENUM: lambda o: _class(o["cls"], Tag.ENUM)(decode_value(o[VALUE])),
    Tag.DATACLASS: lambda o: _class(o["cls"], Tag.DATACLASS)(**_fields(o)),
    Tag.PYDANTIC: lambda o: _class(o["cls"], Tag.PYDANTIC).model_validate(o[VALUE]),
    Tag.ATTRS: lambda o: _class(o["cls"], Tag.ATTRS)(**_fields(o)),
    Tag.DJANGO_MODEL: lambda o: _refs.load_django_instance(o["model"], decode_value(o["pk"])),
    Tag.DJANGO_CLASS: lambda o: _refs.load_django_class(o["model"]),
    Tag.DJANGO_SNAPSHOT: lambda o: _refs.load_django_snapshot(o["model"], o["db"], _fields(o)),
    Tag.DJANGO_SAFE: lambda o: _refs.load_safe_text(str(o[VALUE])),
    Tag.MARKUP: lambda o: _refs.load_markup(str(o[VALUE])),
    Tag.SQLALCHEMY: lambda o: _refs.load_sqlalchemy_instance(
        _class(o["cls"], Tag.SQLALCHEMY), _items({VALUE: o["pk"]})
    ),
    Tag.CLASS: lambda o: _class(o["cls"], Tag.CLASS),
}


def _is_kind(cls: Any, tag: Tag) -> bool:
    """Whether ``cls`` is a class of the kind ``tag`` names (checked before it is called)."""
    if not isinstance(cls, type):
        return False
    if tag is Tag.ENUM:
        return issubclass(cls, Enum)
    if tag is Tag.DATACLASS:
        return dataclasses.is_dataclass(cls)
    if tag is Tag.PYDANTIC:
        pydantic = sys.modules.get("pydantic")
        return pydantic is not None and issubclass(cls, pydantic.BaseModel)
    if tag is Tag.ATTRS:
        attrs = sys.modules.get("attrs")
        return attrs is not None and bool(attrs.has(cls))
    if tag is Tag.CLASS:  # nothing is called; only a class of an allowed package comes back
        return cls.__module__.partition(".")[0] in _allowed
    return "sqlalchemy.orm" in sys.modules and _refs.is_mapped_class(cls)


def _class(path: Any, tag: Tag) -> Any:
    """The class a payload names, only if it is of the tag's kind (nothing else is called)."""
    module_name, _, qualname = str(path).partition(":")
    module = sys.modules.get(module_name)
    if module is None and module_name.partition(".")[0] in _allowed:
        try:
            module = importlib.import_module(module_name)
        except ImportError as exc:
            raise PayloadError(f"{tag} class {path!r}: cannot import {module_name}") from exc
    if module is None:
        raise PayloadError(f"{tag} class {path!r}: module {module_name!r} is not allowed")
    found = _walk(module, qualname)
    if not _is_kind(found, tag):
        kind = "a class of a package payloads may name" if tag is Tag.CLASS else f"a {tag} class"
        raise PayloadError(f"{path!r} is not {kind}: refused")
    return found
