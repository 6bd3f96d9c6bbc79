"""Idempotency keys built from a job's arguments: the digest key, templates, key functions.

A key names one unit of work: two calls that do different work must never
share one, or the execution guard answers the second with the first's result
and the second never runs. Three forms, the same the tooling writes
(``[tool.migrator.jobs."<job>"] key = ...``, ``migrator apply``):

- ``{*}`` in a template: :func:`digest_key`, a SHA-256 over the job's name and
  every argument as the job stores it (canonical JSON of the arguments bound
  to the job's signature: positional or keyword makes no difference). The
  default suggestion, ``<job>:{*}``, is written ``f"<job>:{digest_key(job, a, b)}"``.
- ``{+}`` in a template: a fresh id made for each call (``uuid4().hex``, written
  ``f"<job>:{uuid4().hex}"`` at the enqueue site). It is stored with the job, so a
  redelivery or retry of that call keeps it (the guard stops a second run), and two
  calls never share it. The default for notifications: a repeated request is
  different work, and a key over its arguments would drop the second mail.
- ``{field}`` / ``{field.attr}``: the value of a parameter (or an attribute
  path of one), formatted with ``str()``.
- ``package.module:function``: a key function called with the job's own
  arguments; it must accept every parameter of the job.

Two calls with *equal* arguments are one unit of work under the digest: a job
whose identical calls are distinct work (two orders of the same product and
quantity) needs a parameter that tells them apart (the order id).

:func:`check_key` validates a key against the job for real (the key
function is imported: the tooling checks the same rules statically, in
``inventory.keys``, which may not import this package); :func:`render_key` computes the key of one call.
"""

from __future__ import annotations

import hashlib
import importlib
import inspect
import json
import re
import string
import sys
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from queue_runtime.definition import Defined
from queue_runtime.errors import ConfigError

DIGEST_FIELD = "*"  # ``{*}``: the digest of every argument
CALL_FIELD = "+"  # ``{+}``: a fresh id for each call (uuid4), kept by that call's retries
_OWN_FIELDS = frozenset({DIGEST_FIELD, CALL_FIELD})
_DIGEST_HEX = 32  # 128 bits: collisions are out of reach, keys stay short
_KEY_FUNCTION = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*:[A-Za-z_]\w*$")
_PATH = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$")


class KeyMismatch(ConfigError):
    """The idempotency key does not fit the job."""


@dataclass(frozen=True, slots=True)
class KeyFunction:
    module: str
    name: str


def key_function(key: str) -> KeyFunction | None:
    """The key function ``key`` names (``package.module:function``), or None for a template."""
    if "{" in key or not _KEY_FUNCTION.match(key):
        return None
    module, _, name = key.partition(":")
    return KeyFunction(module, name)


def template_fields(key: str) -> list[str]:
    """The ``{fields}`` of a template, in order; raises KeyMismatch when malformed."""
    try:
        parsed = list(string.Formatter().parse(key))
    except ValueError as exc:
        raise KeyMismatch(f"key {key!r} is not a valid template ({exc})") from None
    if any(spec or conversion for _, name, spec, conversion in parsed if name is not None):
        raise KeyMismatch(
            f"key {key!r}: write plain fields like {{order_id}} (no format spec or conversion)"
        )
    return [name for _, name, _, _ in parsed if name is not None]


def digest_key(job: Defined, /, *args: Any, **kwargs: Any) -> str:
    """A digest over ``job``'s name and every argument of this call (see the module docstring)."""
    definition = job.definition
    payload = definition.codec.encode(args, kwargs, sys.maxsize)  # enqueue checks the size
    canonical = json.dumps(
        {"job": definition.name, "args": payload},
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
    )
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:_DIGEST_HEX]


def check_key(job: Defined, key: str) -> None:
    """Raise KeyMismatch (one line: what to fix) unless ``key`` can be built for ``job``."""
    definition = job.definition
    params = definition.codec.signature.parameters
    function = key_function(key)
    if function is not None:
        _check_accepts(definition.name, key, _import(key, function), params)
        return
    fields = template_fields(key)
    if not fields:
        raise KeyMismatch(
            f"key {key!r} of {definition.name} has no field: every call would share it, so the"
            " job would run once, ever; add {*} (a digest of every argument) or its parameters"
        )
    for field in fields:
        if field not in _OWN_FIELDS and (
            not _PATH.match(field) or field.split(".")[0] not in params
        ):
            raise KeyMismatch(
                f"key {key!r}: {{{field}}} is not a parameter of {definition.name} (its"
                f" parameters: {', '.join(params) or 'none'}); use one of them, or {{*}}"
            )


def render_key(job: Defined, key: str, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> str:
    """The key of the call ``job(*args, **kwargs)`` under ``key`` (checked first)."""
    check_key(job, key)
    function = key_function(key)
    if function is not None:
        return str(_import(key, function)(*args, **kwargs))
    bound = job.definition.codec.signature.bind(*args, **kwargs)
    bound.apply_defaults()
    values = dict(bound.arguments)

    def value(field: str) -> str:
        if field == DIGEST_FIELD:
            return digest_key(job, *args, **kwargs)
        if field == CALL_FIELD:
            return uuid.uuid4().hex
        head, *path = field.split(".")
        found = values[head]
        for attr in path:
            found = getattr(found, attr)  # an attribute path the template names, not a lookup
        return str(found)

    return "".join(
        literal + (value(name) if name is not None else "")
        for literal, name, _, _ in string.Formatter().parse(key)
    )


def _import(key: str, function: KeyFunction) -> Callable[..., Any]:
    try:
        module = importlib.import_module(function.module)
    except ImportError as exc:
        raise KeyMismatch(f"key function {key!r}: cannot import {function.module} ({exc})") from exc
    found = vars(module).get(function.name)
    if not callable(found):
        raise KeyMismatch(
            f"key function {key!r}: {function.module} defines no function {function.name}"
        )
    return found  # type: ignore[no-any-return]  # a module attribute: Any, checked callable


def _check_accepts(
    job: str, key: str, function: Callable[..., Any], params: Mapping[str, inspect.Parameter]
) -> None:
    """The key function accepts every call the job accepts: the job's parameters, same names."""
    try:
        accepted = inspect.signature(function).parameters
    except (TypeError, ValueError):
        return  # a builtin without a signature: nothing to check against
    problem = signature_problem(
        [(p.name, p.kind.name) for p in params.values()],
        [(p.name, p.kind.name, p.default is not p.empty) for p in accepted.values()],
    )
    if problem:
        raise KeyMismatch(f"key function {key!r} for {job}: {problem}")


def signature_problem(
    job: list[tuple[str, str]], function: list[tuple[str, str, bool]]
) -> str | None:
    """Why a function of ``function``'s parameters (name, kind, has default) cannot take every
    call of a job of ``job``'s (name, kind), or None. Kinds are ``inspect`` kind names."""
    kinds = {name: kind for name, kind, _ in function}
    var_pos = "VAR_POSITIONAL" in kinds.values()
    var_kw = "VAR_KEYWORD" in kinds.values()
    positional = [n for n, k, _ in function if k in ("POSITIONAL_ONLY", "POSITIONAL_OR_KEYWORD")]
    for index, (name, kind) in enumerate(job):
        if kind in ("VAR_POSITIONAL", "VAR_KEYWORD"):
            if kind not in kinds.values():
                return (
                    f"the job takes {'*' if kind == 'VAR_POSITIONAL' else '**'}{name}; so must it"
                )
            continue
        by_position = kind != "KEYWORD_ONLY"
        if by_position and index < len(positional) and positional[index] != name:
            return f"parameter {index + 1} is {positional[index]}, the job's is {name}"
        if name not in kinds and not (var_kw and (var_pos or not by_position)):
            return f"it takes no parameter {name} (the job's: {', '.join(n for n, _ in job)})"
    names = {n for n, _ in job}
    required = [n for n, k, d in function if not d and k not in ("VAR_POSITIONAL", "VAR_KEYWORD")]
    extra = [n for n in required if n not in names]
    return f"it requires {', '.join(extra)}, which the job does not take" if extra else None
