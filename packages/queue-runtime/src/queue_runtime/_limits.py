"""What PostgreSQL can store, checked at enqueue: keys, tenants, strings in arguments, run_at,
priority.

Each bad value is one :class:`~queue_runtime.errors.PayloadError` saying what
to pass instead, raised at the call in every mode (queue, inline, the inline
fallback), so a call refused in production is refused in tests, and nothing
reaches the database. The limits are PostgreSQL's: ``text`` and ``jsonb``
hold no NUL and only valid UTF-8 (no lone surrogate); a key sits under a
unique btree index (2,704 bytes at most: 512 characters of up to 4 UTF-8
bytes each stay below it); ``priority`` is a ``smallint``; ``run_at`` a
``timestamptz`` (Python stops at the year 9999 first).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from queue_runtime.errors import PayloadError

MAX_KEY_CHARS = 512
MAX_TENANT_CHARS = 512  # a tenant also names Redis keys (its cap's counter): kept short
PRIORITY_RANGE = range(-32768, 32768)  # smallint


def checked_key(key: Any, where: str) -> str:
    """``key`` when it can name a call; PayloadError (what to fix) otherwise."""
    if type(key) is not str:
        raise PayloadError(
            f"{where}: idempotency_key must be a str, got {type(key).__name__} ({key!r:.60})"
        )
    problem = _key_problem(key)
    if problem:
        raise PayloadError(f"{where}: idempotency_key {key!r:.60} {problem}")
    return key


def checked_tenant(tenant: Any, where: str) -> str | None:
    """``tenant`` when it can name a tenant (None: no tenant); PayloadError otherwise."""
    if tenant is None:
        return None
    if type(tenant) is not str:
        raise PayloadError(
            f"{where}: tenant must be a str, got {type(tenant).__name__} ({tenant!r:.60})"
        )
    if not tenant.strip():
        problem: str | None = "is empty: pass None for a job of no tenant"
    elif len(tenant) > MAX_TENANT_CHARS:
        problem = f"is {len(tenant)} characters long; the limit is {MAX_TENANT_CHARS}"
    else:
        problem = text_problem(tenant)
    if problem:
        raise PayloadError(f"{where}: tenant {tenant!r:.60} {problem}")
    return tenant


def _key_problem(key: str) -> str | None:
    if not key.strip():
        return "is empty: every call would share it; give each call or business key its own"
    if len(key) > MAX_KEY_CHARS:
        return f"is {len(key)} characters long; the limit is {MAX_KEY_CHARS} (hash a long key)"
    return text_problem(key)


def text_problem(text: str) -> str | None:
    """Why PostgreSQL cannot store ``text`` (NUL, a lone surrogate), or None."""
    if "\x00" in text:
        return "contains NUL (\\x00), which PostgreSQL cannot store"
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            return "contains a lone surrogate (not valid UTF-8), which PostgreSQL cannot store"
    return None


def json_text_suspect(text: str) -> bool:
    """Whether JSON text (``ensure_ascii``) may hold a NUL or a lone surrogate: a cheap scan
    of the whole text; :func:`value_problem` then says for sure (an emoji is a surrogate pair)."""
    return "\\u" in text and ("\\u0000" in text or "\\ud" in text)  # ASCII text: one scan


def value_problem(value: Any) -> str | None:
    """Why PostgreSQL cannot store a JSON-ready value: the first string (or key) it refuses."""
    kind = type(value)
    if kind is str:
        return text_problem(value)
    if kind is list:
        for item in value:
            problem = value_problem(item)
            if problem:
                return problem
    elif kind is dict:
        for key, item in value.items():
            problem = value_problem(key) or value_problem(item)
            if problem:
                return problem
    return None


def absolute_run_at(run_at: Any, where: str) -> datetime | None:
    """``run_at`` as an aware datetime (a ``timedelta`` counts from now); PayloadError otherwise."""
    if run_at is None:
        return None
    if isinstance(run_at, timedelta):
        try:
            return datetime.now(UTC) + run_at
        except OverflowError:
            raise PayloadError(
                f"{where}: run_at={run_at!r} from now is past the year 9999"
            ) from None
    if not isinstance(run_at, datetime):
        raise PayloadError(
            f"{where}: run_at must be an aware datetime or a timedelta,"
            f" got {type(run_at).__name__} ({run_at!r:.60})"
        )
    if run_at.utcoffset() is None:
        raise PayloadError(
            f"{where}: run_at={run_at.isoformat()} has no timezone; pass an aware datetime"
        )
    return run_at


def checked_priority(priority: Any, where: str) -> int | None:
    """``priority`` when it fits the column; PayloadError otherwise."""
    if priority is None:
        return None
    if type(priority) is not int or priority not in PRIORITY_RANGE:
        raise PayloadError(
            f"{where}: priority must be an int from {PRIORITY_RANGE.start} to"
            f" {PRIORITY_RANGE.stop - 1}, got {priority!r:.60}"
        )
    return priority
