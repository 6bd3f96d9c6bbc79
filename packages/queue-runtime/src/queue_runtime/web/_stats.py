"""How jobs fared: per job name (failure rate, durations) and per periodic job (its last run).

``/stats``: the jobs that finished in the last hour (or ``?hours=``, up to a
day), per name: finished, dead, cancelled, retried, the failure rate (dead
among finished) and the median and p95 run time, as a table and two charts.
It reads at most ``CAP`` history rows (through the BRIN on ``finished_at``),
in 60 equal slices of the window of ``CAP / 60`` rows each: past that the
page says its figures are of a sample spread evenly over the window.

``/periodic``: each periodic job's schedule, next run, and its last run: the
job of its latest tick, found by the tick's idempotency key
(``periodic:<job>:<tick>``, one index lookup; no scan of the history), with
that job's state, when it finished and its error. A form switches a job off
or on (``JobStore.switch_periodic``, with who and why: the newest switches are
listed below, the audit); workers skip the ticks of a job switched off.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta
from http import HTTPStatus
from typing import Any

from queue_runtime.periodic import Schedule, tick_key
from queue_runtime.store import JobSummary
from queue_runtime.web import _charts
from queue_runtime.web._app import HttpError, View
from queue_runtime.web._http import Response, whole_number

log = logging.getLogger("queue_runtime.web")

CAP = 12_000  # history rows read per page, spread over the window
TICKS_BACK = 3  # the latest ticks looked up: a tick just due may not be enqueued yet


def by_name(view: View) -> Response:
    hours = _hours(view.request.arg("hours"))
    until = datetime.now(UTC)
    found = view.app.queries.by_name(until - timedelta(hours=hours), until, CAP)
    rows = found.rows
    worst = sorted(rows, key=lambda r: (-r.failure_rate, r.name))[:15]
    slowest = sorted(rows, key=lambda r: (-(r.run_p95 or r.total_p95), r.name))[:15]
    return view.render(
        "stats.html",
        "By job",
        rows=rows,
        hours=hours,
        capped=found.capped,
        cap=CAP,
        seconds=_charts.seconds,
        percent=_charts.percent,
        failure_chart=_charts.hbar_chart(
            "chart-failure-rate",
            f"Failure rate by job, last {_span(hours)} (dead / finished)",
            [(r.name, r.failure_rate) for r in worst],
            _charts.percent,
        ),
        duration_chart=_charts.hbar_chart(
            "chart-duration",
            f"p95 run time by job, last {_span(hours)}",
            [(r.name, r.run_p95 if r.run_p95 is not None else r.total_p95) for r in slowest],
            _charts.seconds,
        ),
    )


def _hours(text: str) -> int:
    if not text:
        return 1
    hours = whole_number(text)
    if hours is None or not 1 <= hours <= 24:
        raise HttpError(HTTPStatus.BAD_REQUEST, f"hours {text!r}: a whole number from 1 to 24")
    return hours


def _span(hours: int) -> str:
    return "hour" if hours == 1 else f"{hours} hours"


def periodic(view: View) -> Response:
    from queue_runtime.worker._periodic import next_runs

    runtime = view.app.runtime
    now = datetime.now(UTC)
    declared = next_runs(runtime, now)
    ticks = {r.name: _latest_ticks(r.schedule, now) for r in declared}
    keys = [tick_key(name, t) for name, found in ticks.items() for t in found]
    jobs = view.app.queries.by_keys(keys) if keys else {}
    runs = [
        {
            "name": r.name,
            "pool": _pool(view, r.name),
            "schedule": r.schedule.describe(),
            "at": r.at,
            **_last_run(r.name, ticks[r.name], jobs),
        }
        for r in declared
    ]
    disabled = runtime.store.disabled_periodic()
    for run in runs:
        run["enabled"] = run["name"] not in disabled
    return view.render(
        "periodic.html",
        "Periodic jobs",
        runs=runs,
        has_app=True,
        switches=view.app.queries.periodic_switches(),
        flashes=flashes(view),
    )


def switch_periodic(view: View) -> Response:
    """Switch a declared periodic job off or on, with who and why (the audit)."""
    from queue_runtime.worker._periodic import next_runs

    job, state, why = (view.request.field(f) for f in ("job", "enabled", "why"))
    if state not in ("0", "1"):
        raise HttpError(HTTPStatus.BAD_REQUEST, "enabled: 0 (switch off) or 1 (switch on)")
    if not why:
        raise HttpError(HTTPStatus.BAD_REQUEST, "say why the periodic job is switched (recorded)")
    if job not in {r.name for r in next_runs(view.app.runtime)}:
        raise HttpError(HTTPStatus.BAD_REQUEST, f"{job!r} is not a declared periodic job")
    enabled = state == "1"
    changed = view.app.runtime.store.switch_periodic(job, enabled, view.who, why)
    word = "on" if enabled else "off"
    log.info("dashboard: %s switched periodic %s %s: %s", view.who, job, word, why)
    return view.go("/periodic", flash=f"periodic-{word}" if changed else "periodic-same", job=job)


def _latest_ticks(schedule: Schedule, now: datetime) -> list[datetime]:
    found: list[datetime] = []
    at = now
    for _ in range(TICKS_BACK):
        tick = schedule.latest(at)
        found.append(tick)
        at = tick - timedelta(microseconds=1)
    return found


def _last_run(name: str, ticks: list[datetime], jobs: dict[str, JobSummary]) -> dict[str, Any]:
    for tick in ticks:
        job = jobs.get(tick_key(name, tick))
        if job is not None:
            return {"tick": tick, "last": job, "outcome": _outcome(job)}
    return {"tick": None, "last": None, "outcome": "no run found"}


def _outcome(job: JobSummary) -> str:
    if job.error and job.status.value in ("dead", "retrying", "cancelled"):
        return f"{job.status.value}: {job.error.strip().splitlines()[0][:120]}"
    return job.status.value


def _pool(view: View, name: str) -> str:
    runtime = view.app.runtime
    if name in runtime.registry.names():
        return runtime.spec(runtime.registry.definition(name)).pool
    configured = runtime.settings.jobs.get(name)
    return (configured.pool if configured else None) or runtime.settings.default_pool


def flashes(view: View) -> list[str]:
    kind, job = view.request.arg("flash"), view.request.arg("job")
    lines = {
        "periodic-off": f"{job} switched off: no worker enqueues its ticks (within 1 s)",
        "periodic-on": f"{job} switched on: it runs from its next tick",
        "periodic-same": f"{job} already was so: nothing changed",
    }
    return [lines[kind]] if kind in lines else []
