"""Idempotency keys: does a call carry a key derived from the job's inputs?

A key counts only when a retry would send the same one: derived from the
function's parameters. A key minted inside the job (uuid4, random, time)
changes on every run, so the provider cannot recognise the retry; that is
recorded as evidence rather than silently treated as "no key".
"""

from __future__ import annotations

import re

from inventory._catalogue import CallMatch
from inventory.summary import CallInfo, FunctionInfo

# Key expressions that mint a fresh value on every run: a retry gets a new key.
_MINTED = re.compile(r"uuid|random|token_|time\(|now\(")
_MINTING_CALL = re.compile(r"uuid|random|secrets\.token|time\.time$|\.now$|utcnow$")


def key_status(call: CallInfo, found: CallMatch, fn: FunctionInfo) -> tuple[bool, bool]:
    """(keyed, minted): a key counts only when derived from the function's inputs."""
    keyed_by = found.keyed_by
    if keyed_by is None or keyed_by not in {*call.kwargs, *call.kwarg_sources}:
        return False, False
    source = call.kwarg_sources.get(keyed_by, str(call.kwargs.get(keyed_by, "")))
    if found.key_matches is not None and not re.search(found.key_matches, source):
        return False, False
    if _MINTED.search(source):
        return False, True
    if any(re.search(rf"\b{re.escape(p)}\b", source) for p in fn.params):
        return True, False
    if _mints_ids(fn):
        # A local variable in a function that mints ids: assume the key is one of them.
        return False, True
    return bool(call.uses_param), False


def _mints_ids(fn: FunctionInfo) -> bool:
    return any(_MINTING_CALL.search(c.target) for c in fn.calls)


def key_detail(call: CallInfo, keyed_by: str | None, keyed: bool, minted: bool) -> str:
    if keyed_by is None:
        return ""
    source = call.kwarg_sources.get(keyed_by, "")
    if minted:
        return f"{keyed_by}={source} is minted inside the job: a retry sends a new key"
    if keyed:
        return f"{keyed_by}={source} is derived from the job's inputs"
    return f"no {keyed_by} derived from the job's inputs"


# Columns that name one logical event, not foreign keys: ``user_id=user_id`` on a
# notification row is a parent, many rows share it, so it is not a natural key.
_NATURAL = re.compile(
    r"^(key|uuid|reference|external_id|dedup\w*|idempotency\w*|\w+_(key|uuid|ref))$"
)


def natural_key(call: CallInfo, fn: FunctionInfo) -> str | None:
    """A key-like column taken from the inputs: ``create(event_key=event_key, ...)``.

    A row inserted with such a column can be deduplicated (unique constraint,
    get_or_create): the risk of a retry is a duplicate, not a wrong state.
    """
    for name, source in sorted(call.kwarg_sources.items()):
        if _NATURAL.match(name) and any(
            re.search(rf"\b{re.escape(p)}\b", source) for p in fn.params
        ):
            return name
    return None
