"""Rollout modes on the real PostgreSQL: percent split, cross-process refresh, instant rollback."""

from __future__ import annotations

import time
from collections.abc import Iterator

import psycopg
import pytest
from psycopg import sql

from queue_runtime import Settings, configure, job
from queue_runtime.config import RolloutMode
from queue_runtime.gate import Rollout, gate_decision, get_rollout, rollouts, set_rollout
from queue_runtime.handle import InlineHandle
from queue_runtime.registry import Registry
from queue_runtime.runtime import Runtime
from tests.support import wait_until

pytestmark = [pytest.mark.pg]

jobs = Registry()


@job(name="tests.rollout.resize", idempotent=True, registry=jobs)
def resize(image: int) -> int:
    return image


REFRESH = 0.5


@pytest.fixture
def rt(settings: Settings) -> Iterator[Runtime]:
    runtime = configure(settings, rollout_refresh=REFRESH)
    try:
        yield runtime
    finally:
        runtime.close()


def test_default_mode_is_async_and_configurable(rt: Runtime, settings: Settings) -> None:
    assert get_rollout(rt, resize.name) == Rollout(resize.name, RolloutMode.ASYNC, 100)
    assert not isinstance(resize.enqueue(1), InlineHandle)
    inline_default = configure(settings, default_rollout=RolloutMode.INLINE)
    try:
        assert isinstance(resize.enqueue(1), InlineHandle)
    finally:
        inline_default.close()


def test_percent_splits_enqueues_roughly(rt: Runtime) -> None:
    stored = set_rollout(rt, resize.name, "25%", who="alice")
    assert (stored.mode, stored.percent, stored.updated_by, stored.label) == (
        RolloutMode.PERCENT,
        25,
        "alice",
        "25%",
    )
    handles = [resize.enqueue(n) for n in range(400)]
    went_async = sum(not isinstance(h, InlineHandle) for h in handles)
    assert 60 <= went_async <= 140, went_async  # 25% of 400 = 100, sd ~8.7
    assert all(h.result() == n for n, h in enumerate(handles) if isinstance(h, InlineHandle))


def test_percent_is_deterministic_per_idempotency_key(rt: Runtime) -> None:
    set_rollout(rt, resize.name, RolloutMode.PERCENT, percent=25, who="alice")
    first = [gate_decision(rt, resize, f"image-{n}").run_async for n in range(400)]
    again = [gate_decision(rt, resize, f"image-{n}").run_async for n in range(400)]
    assert first == again
    assert 60 <= sum(first) <= 140, sum(first)


def _set_elsewhere(settings: Settings, job: str, mode: str, percent: int) -> None:
    """Another process's change: a plain connection of its own, no Runtime."""
    query = sql.SQL(
        "INSERT INTO {}.rollouts (job, mode, percent, updated_by) VALUES (%s, %s, %s, 'ops')"
        " ON CONFLICT (job) DO UPDATE SET mode = EXCLUDED.mode, percent = EXCLUDED.percent,"
        " updated_at = now()"
    ).format(sql.Identifier(settings.schema_name))
    with psycopg.connect(settings.database_url or "", autocommit=True) as conn:
        conn.execute(query, (job, mode, percent))


def test_a_change_from_another_connection_is_seen_within_the_refresh(rt: Runtime) -> None:
    assert gate_decision(rt, resize).run_async  # cached: async (the default)
    _set_elsewhere(rt.settings, resize.name, "inline", 0)
    changed = time.monotonic()
    wait_until(
        lambda: not gate_decision(rt, resize).run_async,
        timeout=REFRESH + 5,
        message="the rollback to be seen",
    )
    assert time.monotonic() - changed <= REFRESH + 1.0
    assert isinstance(resize.enqueue(1), InlineHandle)
    _set_elsewhere(rt.settings, resize.name, "async", 100)
    wait_until(lambda: gate_decision(rt, resize).run_async, timeout=REFRESH + 5, message="async")
    assert [r.updated_by for r in rollouts(rt)] == ["ops"]


def test_inline_is_an_instant_rollback(rt: Runtime) -> None:
    set_rollout(rt, resize.name, "async", who="alice")
    assert not isinstance(resize.enqueue(1), InlineHandle)
    set_rollout(rt, resize.name, "inline", who="alice")
    assert isinstance(resize.enqueue(2), InlineHandle)  # the next enqueue: no waiting
    assert get_rollout(rt, resize.name).mode is RolloutMode.INLINE


def test_invalid_rollouts_are_refused(rt: Runtime) -> None:
    from queue_runtime.errors import ConfigError

    for bad in ("150%", "sometimes", "-5%"):
        with pytest.raises(ConfigError):
            set_rollout(rt, resize.name, bad)
