"""Where a job's idempotency key comes from in the plan, and whether a declared one fits.

The suggestion never merges different work (``inventory._classify._suggest``):
``<job>:{*}``, a digest of every argument, unless the job has a single
parameter that holds a plain value (``<job>:{param}``; an object's text is no
key); never a key over a secret (``<job>:{+}``, a fresh id per call, instead); a ``Thread`` subclass's ``run`` is keyed over its
constructor's data (what it becomes a job of once moved, ``codemods._threadjob``);
a job without parameters gets none, and the plan says what to do instead of
offering a fieldless key. A declared key is checked against the job's signature
(``inventory.keys.key_problem``: fields are parameters, a key function exists in
the project and takes the job's parameters); a key that does not fit is shown
with the one line to fix.
"""

from __future__ import annotations

import re
import string
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from codemods.api import thread_job_parameters
from inventory.keys import CALL_FIELD, key_problem, object_parameters, secret_name, suggest_key
from inventory.models import CallSite, Job

_TEMPLATE = re.compile(r"""=\s*f?(["'])(?P<template>[^"']*\{[^"']*)\1""")
NO_INPUT = (
    "no key can be suggested: the job takes no input, so every call is the same call and any "
    "key would make it run once, ever; give it a parameter that names one unit of work"
)
SAME_ARGUMENTS = (
    "two calls with equal arguments are one unit of work under this key: if the app makes "
    "identical calls that are different work, pass the job what tells them apart (an order id)"
)


@dataclass(frozen=True)
class KeySource:
    """The key a job's plan items name (None: none can be suggested), and where it comes from."""

    template: str | None
    source: str
    problem: str | None = None  # why a declared key does not fit the job


def key_source(job: Job, declared: str | None = None) -> tuple[str | None, str]:
    """``(template, where it comes from)`` for the job's idempotency key.

    In order: the declared key; a key the job already passes to an effect,
    derived from its inputs (the evidence of a ``needs_key`` verdict); the
    scanner's suggestion; the suggestion rule for the job's parameters.
    """
    found = resolve_key(job, declared)
    return found.template, found.source


def resolve_key(
    job: Job,
    declared: str | None = None,
    root: Path | None = None,
    sites: Sequence[CallSite] = (),
) -> KeySource:
    """:func:`key_source`, with the declared key checked against the job (``root``: the project,
    ``sites``: the job's call sites, which tell what its arguments are)."""
    params = [p for p in job.parameters if p not in ("self", "cls")]
    made_of = thread_job_parameters(job, root) if root is not None and not params else None
    if made_of:  # a Thread subclass's run: once moved, its input is the constructor's data
        params = made_of
    if declared:
        problem = key_problem(job.qualname, declared, made_of or job.parameters, root)
        return KeySource(declared, "the declaration", problem)
    objects = frozenset() if made_of else object_parameters(job, sites, root)
    passed = _passed_key(job, params, objects)
    if passed is not None:
        return passed
    if job.suggested_key and CALL_FIELD in _fields(job.suggested_key):
        return KeySource(job.suggested_key, PER_CALL)
    if job.suggested_key:
        return KeySource(job.suggested_key, "the scanner's suggestion (one run per input)")
    return _suggested(job.qualname, params, objects)


def _passed_key(job: Job, params: list[str], objects: frozenset[str]) -> KeySource | None:
    """A key the job already passes to an effect, made of its inputs: never over a secret or
    an object's text (the rule of ``inventory._classify._suggest``)."""
    for effect in job.effects:
        match = _TEMPLATE.search(effect.detail) if effect.keyed else None
        fields = _fields(match["template"]) if match else []
        if not match or not set(f.split(".")[0] for f in fields) <= set(params):
            continue
        if any(secret_name(f) or f in objects for f in fields):
            continue
        where = f"{effect.location.path}:{effect.location.line}"
        return KeySource(match["template"], f"the key it already passes ({effect.detail}, {where})")
    return None


def _suggested(job: str, params: list[str], objects: frozenset[str]) -> KeySource:
    template = suggest_key(job, params, objects)
    if template is None:
        return KeySource(None, NO_INPUT)
    secrets = [p for p in params if secret_name(p)]
    if secrets:
        return KeySource(template, SECRET.format(params=", ".join(secrets)))
    if len(params) == 1 and params[0] not in objects:
        what = "its only input"
    elif len(params) == 1:
        what = f"a digest of the argument as the job stores it ({{{params[0]}}} would be its text)"
    else:
        what = "a digest of every argument"
    return KeySource(template, f"{what} ({', '.join(params)}): it never merges different work")


SECRET = (
    "a fresh id made at each call ({{+}}), stored with the job: {params} holds a secret, and a "
    "key is kept in job_keys and shown by the tooling, so no key names it or digests it; a "
    "redelivery or retry of that call still never runs twice, and two calls are never merged"
)


PER_CALL = (
    "a fresh id made at each call ({+}), stored with the job: a redelivery or retry of that "
    "call never sends twice, and two requests are never merged (a notification: a repeated "
    "request is new work); declare a business key only where repeats must be dropped"
)


def _fields(template: str) -> list[str]:
    try:
        return [name for _, name, _, _ in string.Formatter().parse(template) if name]
    except ValueError:
        return ["?"]
