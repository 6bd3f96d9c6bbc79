"""Periodic schedules and the ticker, on the in-memory stores with a pinned clock.

The real-server behaviour (three workers, a SIGKILL) is in
``tests/integration/test_periodic.py``; here: when ticks fall, the catch-up
rule (the latest due tick once, older ones skipped), config beating code.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from pydantic import ValidationError

from queue_runtime import Mode, Settings, job
from queue_runtime.errors import ConfigError
from queue_runtime.periodic import Schedule, parse_every, tick_key
from queue_runtime.registry import Registry
from queue_runtime.testing import memory_runtime
from queue_runtime.worker._periodic import Ticker, next_runs

jobs = Registry()
T0 = datetime(2026, 3, 29, 0, 58, 30, tzinfo=UTC)


@job(name="tests.periodic.beat", pool="batch", registry=jobs, every=timedelta(minutes=5))
def beat() -> None: ...


@job(name="tests.periodic.plain", pool="batch", registry=jobs)
def plain() -> None: ...


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> datetime:
        return self.now


def test_every_ticks_at_multiples_of_the_interval_since_the_epoch() -> None:
    five = Schedule.of("5m", None)
    assert five.latest(T0) == datetime(2026, 3, 29, 0, 55, tzinfo=UTC)
    assert five.next_after(T0) == datetime(2026, 3, 29, 1, 0, tzinfo=UTC)
    assert parse_every("1h30m") == timedelta(minutes=90) and parse_every(90) == timedelta(
        90 / 86400
    )


def test_cron_runs_in_its_zone_across_a_dst_change() -> None:
    # Europe/Berlin springs forward on 2026-03-29 at 02:00 local (01:00 UTC).
    nightly = Schedule.of(None, "30 3 * * *", "Europe/Berlin")
    assert nightly.next_after(T0) == datetime(2026, 3, 29, 1, 30, tzinfo=UTC)  # 03:30 CEST
    assert nightly.latest(T0) == datetime(2026, 3, 28, 2, 30, tzinfo=UTC)  # 03:30 CET


@pytest.mark.parametrize(
    ("every", "cron", "zone"),
    [
        (None, None, None),
        ("5m", "* * * * *", None),
        ("5 minutes", None, None),
        ("0s", None, None),
        (None, "61 * * * *", None),
        (None, "* * * * *", "Mars/Olympus"),
    ],
)
def test_a_bad_declaration_is_refused(
    every: str | None, cron: str | None, zone: str | None
) -> None:
    with pytest.raises(ConfigError):
        Schedule.of(every, cron, zone)


def test_a_bad_config_declaration_fails_validation() -> None:
    with pytest.raises(ValidationError, match="exactly one of every= and cron="):
        Settings(periodic={"tests.periodic.plain": {}})


def test_the_ticker_enqueues_the_latest_due_tick_once_and_skips_older_missed_ones() -> None:
    runtime = memory_runtime(Settings(mode=Mode.QUEUE), registry=jobs)
    clock = Clock()
    ticker = Ticker(runtime, ["batch"], clock)
    assert ticker.tick() == 1  # 00:55, the latest due tick: caught up once
    assert ticker.tick() == 0
    clock.now = T0 + timedelta(hours=1)  # twelve ticks missed: only the latest is enqueued
    assert ticker.tick() == 1
    other = Ticker(runtime, ["batch"], clock)  # a second worker: same key, no new job
    assert other.tick() == 0
    keys = {c.idempotency_key for c in runtime.store.claim("batch", 10, "w")}
    assert keys == {
        tick_key("tests.periodic.beat", datetime(2026, 3, 29, 0, 55, tzinfo=UTC)),
        tick_key("tests.periodic.beat", datetime(2026, 3, 29, 1, 55, tzinfo=UTC)),
    }


def test_config_declares_and_beats_code_and_status_lists_the_next_runs() -> None:
    periodic = {"tests.periodic.plain": {"every": "30s"}, "tests.periodic.beat": {"every": "1h"}}
    settings = Settings(mode=Mode.QUEUE, periodic=periodic)
    runtime = memory_runtime(settings, registry=jobs)
    runs = {r.name: r.at for r in next_runs(runtime, T0)}
    assert runs == {
        "tests.periodic.beat": datetime(2026, 3, 29, 1, 0, tzinfo=UTC),
        "tests.periodic.plain": datetime(2026, 3, 29, 0, 59, tzinfo=UTC),
    }
    assert Ticker(runtime, ["transactional"]).jobs == []  # only the pools a worker serves


def test_a_job_switched_off_enqueues_no_tick_and_resumes_at_its_next_one() -> None:
    runtime = memory_runtime(Settings(mode=Mode.QUEUE), registry=jobs)
    clock = Clock()
    ticker = Ticker(runtime, ["batch"], clock)
    assert runtime.store.switch_periodic("tests.periodic.beat", False, "ann", "maintenance")
    assert not runtime.store.switch_periodic("tests.periodic.beat", False, "ann", "again")
    assert ticker.tick() == 0  # 00:55 is due, but the job is off
    clock.now = T0 + timedelta(minutes=5)
    assert ticker.tick() == 0  # 01:00: still off
    assert runtime.store.switch_periodic("tests.periodic.beat", True, "ann", "done")
    assert ticker.tick() == 0  # the tick that fell while off is not run late
    clock.now = T0 + timedelta(minutes=10)
    assert ticker.tick() == 1  # 01:05, its next tick
