"""``@job`` stacked on another decorator keeps that decorator's own API.

A function apply moves may already be wrapped: ``functools.lru_cache`` (``cache_clear``),
a retry library's wrapper (``retry_with``), a task object with its own enqueue. Code that
apply did not touch still calls those attributes on the name; with the job in front of
them they must still answer, while the job's own API (``enqueue``, ``options``, ``retry``,
``name``...) stays the job's.
"""

from __future__ import annotations

import functools
from typing import Any

import pytest

from queue_runtime import job
from queue_runtime.registry import Registry

jobs = Registry()
calls: list[int] = []


@job(name="tests.wrapped.square", pool="batch", registry=jobs, idempotent=True)
@functools.lru_cache(maxsize=16)
def square(n: int) -> int:
    calls.append(n)
    return n * n


class Task:
    """A task object of another queue, with an enqueue and a ``retry`` of its own."""

    def __init__(self, fn: Any) -> None:
        functools.update_wrapper(self, fn)
        self.fn = fn
        self.sent: list[tuple[Any, ...]] = []

    def __call__(self, *args: Any) -> Any:
        return self.fn(*args)

    def delay(self, *args: Any) -> str:
        self.sent.append(args)
        return "queued"

    def retry(self) -> str:
        return "the task's retry"


@job(name="tests.wrapped.sync_profile", pool="batch", registry=jobs, idempotent=True)
@Task
def sync_profile(user_id: int) -> int:
    return user_id


def test_the_wrapped_decorators_api_still_answers() -> None:
    calls.clear()
    assert square(3) == 9 and square(3) == 9
    assert calls == [3]
    assert square.cache_info().hits == 1
    square.cache_clear()
    assert square(3) == 9 and calls == [3, 3]
    assert sync_profile.delay(7) == "queued"


def test_the_jobs_own_api_stays_the_jobs() -> None:
    assert sync_profile.name == "tests.wrapped.sync_profile"
    assert sync_profile.retry is None  # the job's policy, not the task's method
    assert callable(sync_profile.enqueue) and callable(sync_profile.options)


def test_a_name_neither_has_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no_such_thing"):
        _ = square.no_such_thing  # type: ignore[attr-defined]
    with pytest.raises(AttributeError):
        _ = square._private  # type: ignore[attr-defined]
