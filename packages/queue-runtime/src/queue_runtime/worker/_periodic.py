"""The periodic ticker: every worker enqueues each due tick, the jobs table keeps one.

Each round (every second), for each periodic job of the pools this worker
serves, the latest tick at or before now is enqueued with the idempotency key
``periodic:<job>:<tick>`` (:func:`queue_runtime.periodic.tick_key`). However
many workers tick, the key's unique row makes the tick one job; a worker that
is killed leaves the others ticking, and no lease or leader is needed.

The documented catch-up rule: only the latest due tick is ever enqueued. When
no worker ran for a while (a deploy, an outage), the most recent missed tick
runs once as soon as a worker is back, and the ticks before it are skipped:
a periodic job never runs a burst to catch up. Keys are remembered for
``key_retention_days``, so an interval longer than that may run its latest
tick again after a restart.

A tick goes straight to the store: the worker that ticks has no request to
run a job inline in, so the gate's inline fallback does not apply.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

from queue_runtime.definition import JobDefinition
from queue_runtime.errors import QueueError
from queue_runtime.periodic import Schedule, tick_key
from queue_runtime.runtime import Runtime
from queue_runtime.store import NewJob
from queue_runtime.worker._backoff import STORE_ERRORS, TRANSIENT

log = logging.getLogger("queue_runtime.worker")
_ROUND_ERRORS: tuple[type[BaseException], ...] = (*STORE_ERRORS, QueueError)


@dataclass(frozen=True, slots=True)
class PeriodicJob:
    job: JobDefinition
    schedule: Schedule

    @property
    def name(self) -> str:
        return self.job.name


def periodic_jobs(runtime: Runtime) -> list[PeriodicJob]:
    """Registered jobs with a schedule, from code or config (config beats code)."""
    configured = runtime.settings.periodic
    found: list[PeriodicJob] = []
    for name in runtime.registry.names():
        job = runtime.registry.definition(name)
        cfg = configured.get(name)
        schedule = cfg.schedule() if cfg is not None else job.schedule
        if schedule is not None:
            found.append(PeriodicJob(job, schedule))
    return found


def unregistered(runtime: Runtime) -> list[str]:
    """Configured periodic jobs this process has not registered (a worker cannot tick them)."""
    return sorted(set(runtime.settings.periodic) - set(runtime.registry.names()))


class Ticker:
    """One worker's ticker of the periodic jobs in ``pools``."""

    interval = 1.0  # the longest wait between rounds (a switch is read at least this often)
    margin = 0.005  # seconds after a tick falls: the round that wakes for it sees it due

    def __init__(
        self,
        runtime: Runtime,
        pools: list[str],
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self._runtime, self._clock = runtime, clock
        served = set(pools)
        for name in unregistered(runtime):
            log.warning("periodic job %s is configured but not registered: not ticked", name)
        self.jobs = [p for p in periodic_jobs(runtime) if runtime.spec(p.job).pool in served]
        self._done: dict[str, datetime] = {}  # the last tick this worker saw stored, per job

    def run(self, stop: threading.Event) -> None:
        if not self.jobs:
            return
        while True:
            try:
                self.tick()
            except TRANSIENT as exc:
                log.warning("periodic round skipped (%s: %s)", type(exc).__name__, exc)
            except _ROUND_ERRORS:
                log.exception("periodic round failed")  # keep ticking: the next round may work
            if stop.wait(self.pause(self._clock())):
                return

    def pause(self, now: datetime) -> float:
        """Seconds to the next round: just after the earliest next tick, at most ``interval``.

        Waking on the tick, not every ``interval`` after the last round, keeps a
        one-second schedule from drifting past a tick (a round's own time added to
        each wait would, now and then, step over one) and enqueues a tick as it falls."""
        soonest = min(p.schedule.next_after(now) for p in self.jobs)
        return min(self.interval, max((soonest - now).total_seconds(), 0.0) + self.margin)

    def tick(self) -> int:
        """Enqueue each job's latest due tick not yet seen here; the number this call created.

        A job switched off (``JobStore.disabled_periodic``: the dashboard's /periodic)
        enqueues nothing, and the ticks that come due meanwhile count as seen: switched
        on again, it runs from its next tick (a worker started meanwhile may run the
        latest one, as after any restart)."""
        now = self._clock()
        disabled = self._runtime.store.disabled_periodic()
        created = 0
        for periodic in self.jobs:
            due = periodic.schedule.latest(now)
            seen = self._done.get(periodic.name)
            if seen != due:
                if periodic.name not in disabled:
                    if seen is not None:
                        _report_skipped(periodic, seen, due)
                    created += self._enqueue(periodic.job, due)
                self._done[periodic.name] = due
        return created

    def _enqueue(self, job: JobDefinition, tick: datetime) -> int:
        runtime = self._runtime
        spec = runtime.spec(job)
        payload = job.codec.encode((), {}, runtime.settings.max_payload_bytes)
        new = NewJob(
            name=job.name,
            pool=spec.pool,
            args=payload,
            priority=spec.priority,
            idempotency_key=tick_key(job.name, tick),
            max_attempts=spec.retry.max_attempts,
        )
        _, created = runtime.store.enqueue_returning(new)
        if created:
            log.info("periodic %s: enqueued the tick of %s", job.name, tick.isoformat())
        return int(created)


def skipped_ticks(schedule: Schedule, seen: datetime, due: datetime, limit: int = 1000) -> int:
    """How many ticks fell strictly between ``seen`` and ``due`` (at most ``limit``)."""
    count, at = 0, schedule.next_after(seen)
    while at < due and count < limit:
        count, at = count + 1, schedule.next_after(at)
    return count


def _report_skipped(periodic: PeriodicJob, seen: datetime, due: datetime) -> None:
    """One warning when ticks came due that this worker never saw: its ticker did not run
    for a while (the process stalled, a round waited on the database). The catch-up rule
    enqueues the latest only; the others are skipped, and an operator reads it here."""
    limit = 1000
    missed = skipped_ticks(periodic.schedule, seen, due, limit)
    if missed:
        log.warning(
            "periodic %s: %s tick(s) after %s skipped: this worker's ticker did not run while"
            " they fell (the catch-up rule runs the latest only);"
            " the latest, %s, is enqueued",
            periodic.name,
            f"{missed}" if missed < limit else f"{limit} or more",
            seen.isoformat(),
            due.isoformat(),
        )


@dataclass(frozen=True, slots=True)
class NextRun:
    name: str
    schedule: Schedule
    at: datetime


def next_runs(runtime: Runtime, now: datetime | None = None) -> list[NextRun]:
    """Each declared periodic job (registered or only configured) with its next tick."""
    at = now or datetime.now(UTC)
    declared = {p.name: p.schedule for p in periodic_jobs(runtime)}
    for name, cfg in runtime.settings.periodic.items():
        declared.setdefault(name, cfg.schedule())
    return [NextRun(n, s, s.next_after(at)) for n, s in sorted(declared.items())]
