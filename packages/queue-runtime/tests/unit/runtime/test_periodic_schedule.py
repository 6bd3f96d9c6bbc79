"""Periodic schedules and the ticker, on the in-memory stores with a pinned clock.

The real-server behaviour (three workers, a SIGKILL) is in
``tests/integration/test_periodic.py``; here: when ticks fall, the catch-up
rule (the latest due tick once, older ones skipped), config beating code.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta

import pytest
from pydantic import ValidationError

from queue_runtime import Mode, Settings, job
from queue_runtime.errors import ConfigError
from queue_runtime.periodic import Schedule, parse_every, tick_key
from queue_runtime.registry import Registry
from queue_runtime.testing import memory_runtime
from queue_runtime.worker._periodic import Ticker, next_runs, skipped_ticks

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


def test_skipped_ticks_are_reported_once_with_their_count(
    caplog: pytest.LogCaptureFixture,
) -> None:
    runtime = memory_runtime(Settings(mode=Mode.QUEUE), registry=jobs)
    clock = Clock()
    ticker = Ticker(runtime, ["batch"], clock)
    with caplog.at_level(logging.WARNING, logger="queue_runtime.worker"):
        ticker.tick()  # a worker's first round: nothing was seen before, nothing is "skipped"
        clock.now = T0 + timedelta(minutes=5)
        ticker.tick()  # 01:00, the next tick: none skipped
        assert caplog.messages == []
        clock.now = T0 + timedelta(hours=1, minutes=5)  # 01:05 .. 01:55 fell unseen
        ticker.tick()
        ticker.tick()
    (warning,) = caplog.messages
    assert "11 tick(s) after 2026-03-29T01:00:00+00:00 skipped" in warning
    assert "2026-03-29T02:00:00+00:00" in warning  # the latest, enqueued
    assert (
        skipped_ticks(Schedule.of(None, "*/5 * * * *"), T0, T0 + timedelta(hours=1)) == 12
    )  # 01:00 .. 01:55


def test_the_ticker_wakes_just_after_the_next_tick_not_a_fixed_interval_later() -> None:
    fast = Registry()

    @job(name="tests.periodic.second", pool="batch", registry=fast, every=timedelta(seconds=1))
    def second() -> None: ...

    runtime = memory_runtime(Settings(mode=Mode.QUEUE), registry=fast)
    ticker = Ticker(runtime, ["batch"], Clock())
    # A round that ends 0.3 s into a second waits 0.7 s (and a hair), not a full second:
    # with a fixed wait the rounds drift, and one in a few hundred steps over a tick.
    assert ticker.pause(T0 + timedelta(seconds=0.3)) == pytest.approx(0.7 + ticker.margin)
    assert ticker.pause(T0) == pytest.approx(1.0)  # on the tick: the next one, capped
    # A slow schedule still rounds every interval (a switch is read at least that often).
    assert Ticker(memory_runtime(Settings(mode=Mode.QUEUE), registry=jobs), ["batch"]).pause(
        T0
    ) == pytest.approx(Ticker.interval)


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
