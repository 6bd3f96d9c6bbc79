"""Periodic schedules: when a periodic job's ticks fall (``every=`` or ``cron=``, in a zone).

A job declares one with ``@job(every=timedelta(minutes=5))`` or
``@job(cron="*/5 * * * *")``, or in ``[tool.queue_runtime.periodic."app.jobs.x"]``
(``every = "5m"`` / ``cron = "..."``, ``timezone = "Europe/Berlin"``). Workers
tick them (:mod:`queue_runtime.worker._periodic`); this module only says when.

* ``every``: ticks at whole multiples of the interval since the Unix epoch
  (UTC), so every worker computes the same ticks without talking to the others.
* ``cron``: five fields, evaluated in the schedule's zone (default UTC) with
  :mod:`zoneinfo`; DST gaps and repeats are cronsim's (a tick in a skipped hour
  runs at the next valid time, a repeated hour once).

Cron parsing is cronsim's (small, typed, no dependencies, maintained): a
runtime that apps install alone should not hand-roll cron or pull in
python-dateutil for it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from cronsim import CronSim, CronSimError

from queue_runtime.errors import ConfigError

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
CRON_FIELDS = 5  # minute hour day-of-month month day-of-week
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86_400}
_EVERY = re.compile(r"(\d+(?:\.\d+)?)([smhd])")


@dataclass(frozen=True, slots=True)
class Schedule:
    """When a job ticks: exactly one of ``every`` and ``cron``; ``cron`` in ``timezone``."""

    every: timedelta | None = None
    cron: str | None = None
    timezone: str = "UTC"

    @classmethod
    def of(
        cls, every: timedelta | str | float | None, cron: str | None, timezone: str | None = None
    ) -> Schedule:
        """A checked schedule (ConfigError: neither or both given, a bad interval, cron or zone)."""
        if (every is None) == (cron is None):
            raise ConfigError("a periodic job takes exactly one of every= and cron=")
        if cron is not None:
            check_fields(cron)
        schedule = cls(parse_every(every) if every is not None else None, cron, timezone or "UTC")
        schedule.next_after(datetime.now(UTC))  # a bad cron or zone fails at declaration
        return schedule

    @property
    def zone(self) -> ZoneInfo:
        try:
            return ZoneInfo(self.timezone)
        except (ZoneInfoNotFoundError, ValueError):
            raise ConfigError(f"unknown timezone {self.timezone!r}") from None

    def describe(self) -> str:
        if self.every is not None:
            return f"every {self.every}"
        return f"cron {self.cron!r} ({self.timezone})"

    def latest(self, now: datetime) -> datetime:
        """The last tick at or before ``now`` (UTC)."""
        if self.every is not None:
            return EPOCH + self.every * ((now - EPOCH) // self.every)
        return self._cron(now + timedelta(seconds=1), reverse=True)

    def next_after(self, now: datetime) -> datetime:
        """The first tick after ``now`` (UTC): what ``queue-runtime status`` shows."""
        if self.every is not None:
            return self.latest(now) + self.every
        return self._cron(now, reverse=False)

    def _cron(self, start: datetime, reverse: bool) -> datetime:
        local = start.astimezone(self.zone).replace(microsecond=0)
        try:
            found = next(iter(CronSim(self.cron or "", local, reverse=reverse)))
        except CronSimError as exc:
            raise ConfigError(f"cron {self.cron!r}: {exc}") from None
        return found.astimezone(UTC)


def check_fields(cron: str) -> None:
    """Five fields, as documented: cronsim also reads a sixth (seconds), which ticks every second."""
    fields = cron.split()
    if len(fields) != CRON_FIELDS:
        raise ConfigError(
            f"cron {cron!r}: {len(fields)} field(s), expected five"
            " (minute hour day-of-month month day-of-week); for seconds use every="
        )


def parse_every(value: timedelta | str | float) -> timedelta:
    """``timedelta``, seconds, or ``"90s"``, ``"5m"``, ``"1h30m"``, ``"1d"``; at least a second."""
    if isinstance(value, timedelta):
        every = value
    elif isinstance(value, int | float):
        every = timedelta(seconds=value)
    else:
        every = _parse_text(value)
    if every < timedelta(seconds=1):
        raise ConfigError(f"every={value!r}: a periodic interval is at least one second")
    return every


def _parse_text(text: str) -> timedelta:
    compact = text.replace(" ", "").lower()
    parts = _EVERY.findall(compact)
    if not parts or "".join(n + u for n, u in parts) != compact:
        raise ConfigError(f"every={text!r}: expected e.g. '30s', '5m', '1h30m', '1d'")
    return timedelta(seconds=sum(float(n) * _UNITS[u] for n, u in parts))


def tick_key(name: str, tick: datetime) -> str:
    """The idempotency key of one tick of one job: the same in every worker."""
    return f"periodic:{name}:{tick.astimezone(UTC).isoformat()}"
