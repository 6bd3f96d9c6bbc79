"""The pages: each reads through the runtime's stores (or the dashboard's queries) and renders.

Actions (replay, purge, rollout) go through the same calls as the CLI:
``JobStore.replay`` / ``purge_dead`` (audited in ``job_audit``, and one log
line here with who) and :func:`queue_runtime.gate.set_rollout` (audited in
``rollout_changes`` with who and why, what ``migrator rollout history`` shows).
"""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime
from enum import StrEnum
from http import HTTPStatus
from typing import Any
from urllib.parse import urlencode

from queue_runtime.config import RolloutMode
from queue_runtime.errors import ConfigError, QueueError
from queue_runtime.gate import get_rollout, parse_rollout, set_rollout
from queue_runtime.shadow_model import current_evidence, evidence_note, promotion_refusal
from queue_runtime.store import KEPT_ATTEMPTS, AttemptError, JobDetail, JobPage, ListState
from queue_runtime.web import _actions, _charts, _stats
from queue_runtime.web._app import Handler, HttpError, View, job_ids, when
from queue_runtime.web._http import Response, whole_number
from queue_runtime.web._migration import (
    ROLLOUT_CHOICES,
    deciding_figures,
    figures_text,
    known_jobs,
    migration_rows,
    read_inventory,
)

log = logging.getLogger("queue_runtime.web")
PAGE_SIZE = 50


# -- overview -------------------------------------------------------------------


def overview(view: View) -> Response:
    return view.render("overview.html", "Overview", **_live(view), flashes=_flashes(view))


def overview_fragment(view: View) -> Response:
    csrf = view.app.guard.csrf(view.session)
    return view.fragment(
        "_overview_live.html", **_live(view), csrf=csrf, read_only=view.app.options.read_only
    )


def _live(view: View) -> dict[str, Any]:
    stats = view.app.runtime.store.stats()
    series = view.app.series.series(view.app.queries)
    note = " (reading the last hour…)" if series.filling else ""
    return {
        "stats": stats,
        "throughput_chart": _charts.bar_chart(
            "chart-throughput",
            f"Throughput, last hour (succeeded per minute){note}",
            series.succeeded,
            _charts.jobs_per_minute,
            series.capped,
        ),
        "lag_chart": _charts.bar_chart(
            "chart-lag",
            f"Lag, last hour (enqueue to finish, max per minute){note}",
            series.lag,
            _charts.seconds,
            series.capped,
        ),
        "now": datetime.now(UTC).strftime("%H:%M:%S"),
    }


# -- jobs -----------------------------------------------------------------------


def jobs(view: View) -> Response:
    state = _state(view.request.arg("state"))
    name, search = view.request.arg("job"), view.request.arg("q")
    page = view.app.queries.jobs(state, name or None, _after(view), PAGE_SIZE, search or None)
    query = {"state": state.value if state else "", "job": name, "q": search}
    short = page.next_after is not None and len(page.jobs) < PAGE_SIZE
    return view.render(
        "jobs.html",
        "Jobs",
        page=page,
        states=[s.value for s in ListState],
        state=query["state"],
        job=name,
        q=search,
        waiting=state in (ListState.RETRYING, ListState.SCHEDULED),
        next_href=_next(view, "/jobs", query, page),
        searched_to=page.next_after if short else None,
        flashes=_flashes(view),
    )


def _state(text: str) -> ListState | None:
    if not text:
        return None
    try:
        return ListState(text)
    except ValueError:
        choices = ", ".join(s.value for s in ListState)
        raise HttpError(HTTPStatus.BAD_REQUEST, f"state {text!r}: one of {choices}") from None


def _after(view: View) -> int | None:
    text = view.request.arg("after")
    if not text:
        return None
    after = whole_number(text)
    if after is None:
        raise HttpError(HTTPStatus.BAD_REQUEST, f"after {text!r}: a job id")
    return after


def _next(view: View, path: str, query: dict[str, str], page: JobPage) -> str | None:
    if page.next_after is None:
        return None
    kept = {k: v for k, v in query.items() if v}
    return f"{view.root}{path}?{urlencode({**kept, 'after': page.next_after})}"


def job_page(view: View, job_id: int) -> Response:
    job = view.app.queries.job(job_id)
    if job is None:
        raise HttpError(HTTPStatus.NOT_FOUND, f"no job {job_id}")
    finished = job.finished_at
    return view.render(
        "job.html",
        f"Job {job_id}",
        job=job,
        args_json=_json(job.args),
        result_json=_json(job.result) if job.result is not None else None,
        attempts=[_attempt(a) for a in job.errors],
        attempts_cut=_attempts_cut(job),
        run_seconds=_run_seconds(job),
        duration=f"{(finished - job.enqueued_at).total_seconds():.3f}s" if finished else "",
        shadow=_shadow(view, job.name),
    )


def _shadow(view: View, name: str) -> dict[str, Any]:
    """The job's shadow evidence (its newest seen code) and what the promotion rule says."""
    runtime = view.app.runtime
    found = current_evidence(runtime.gate_store.shadow_evidence(name), name)
    note = evidence_note(found, name, runtime.settings.shadow_min_calls)
    return {"evidence": found, "note": note}


def _json(value: Any) -> str:
    return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False, default=str)


def _attempt(entry: AttemptError) -> dict[str, str]:
    return {
        "attempt": str(entry.attempt or ""),
        "at": when(entry.at),
        "started": when(entry.started_at),
        "worker": entry.worker or "",
        "error": entry.error,
        "traceback": entry.traceback or "",
        "ran": _ran(entry.started_at, entry.at),
    }


def _ran(started: datetime | None, failed: datetime | None) -> str:
    """How long a failed attempt ran ("" when a time is missing)."""
    if started is None or failed is None:
        return ""
    return f"{max(0.0, (failed - started).total_seconds()):.3f}s"


def _run_seconds(job: JobDetail) -> float | None:
    """How long the attempt that finished the job ran (None: not finished, or no start)."""
    if job.finished_at is None or job.started_at is None:
        return None
    return max(0.0, (job.finished_at - job.started_at).total_seconds())


def _attempts_cut(job: JobDetail) -> str:
    """A note when earlier failed attempts were dropped from the history ("" otherwise)."""
    first = job.errors[0].attempt if job.errors else None
    if len(job.errors) < KEPT_ATTEMPTS or first is None or first <= 1:
        return ""
    return f"Only the last {KEPT_ATTEMPTS} failed attempts are kept."


# -- dead letters ---------------------------------------------------------------


def dead(view: View) -> Response:
    name = view.request.arg("job")
    page = view.app.queries.jobs(ListState.DEAD, name or None, _after(view), PAGE_SIZE)
    return view.render(
        "dead.html",
        "Dead letters",
        page=page,
        job=name,
        next_href=_next(view, "/dead", {"job": name}, page),
        flashes=_flashes(view),
    )


class DeadAction(StrEnum):
    REPLAY = "replay"
    PURGE = "purge"


QUESTIONS = {
    DeadAction.REPLAY: "Put these dead jobs back in the queue, as new jobs with the same arguments?",
    DeadAction.PURGE: "Delete these dead jobs for good (their idempotency keys are freed)?",
}


def replay(view: View) -> Response:
    ids = _ids(view)
    if view.request.field("confirm") != "1":
        return _confirm(view, DeadAction.REPLAY, ids)
    new_ids = view.app.runtime.store.replay(ids)
    log.info("dashboard: %s replayed %d dead job(s) %s as %s", view.who, len(new_ids), ids, new_ids)
    return view.go("/dead", flash="replayed", n=str(len(new_ids)))


def purge(view: View) -> Response:
    ids = _ids(view)
    if view.request.field("confirm") != "1":
        return _confirm(view, DeadAction.PURGE, ids)
    purged = view.app.runtime.store.purge_dead(ids)  # never None: that purges the whole DLQ
    log.info("dashboard: %s purged %d dead job(s) %s", view.who, purged, ids)
    return view.go("/dead", flash="purged", n=str(purged))


def _ids(view: View) -> list[int]:
    texts = view.request.form.get("ids", [])
    if not texts:
        raise HttpError(HTTPStatus.BAD_REQUEST, "select at least one dead job")
    return job_ids(texts)


def _confirm(view: View, action: DeadAction, ids: list[int]) -> Response:
    rows = view.app.queries.dead(ids)
    missing = sorted(set(ids) - {r.id for r in rows})
    verb = action.value.capitalize()
    return view.render(
        "confirm.html",
        f"{verb} dead jobs",
        heading=f"{verb} {len(rows)} dead job(s)?",
        question=QUESTIONS[action],
        rows=rows,
        missing=missing,
        verb=verb,
        action=f"/dead/{action.value}",
    )


# -- migration ------------------------------------------------------------------


def migration(view: View) -> Response:
    path = view.app.options.inventory or view.app.runtime.settings.inventory_path
    rows = migration_rows(view.app.runtime, read_inventory(path))
    note = f"inventory: {path}" if path else "no inventory (pass --inventory FILE)"
    return view.render(
        "migration.html",
        "Migration",
        rows=rows,
        choices=ROLLOUT_CHOICES,
        figures=figures_text,
        deciding=deciding_figures,
        inventory_note=note,
        flashes=_flashes(view),
    )


def rollout(view: View) -> Response:
    job, mode, why = (view.request.field(f) for f in ("job", "mode", "why"))
    if not why:
        raise HttpError(HTTPStatus.BAD_REQUEST, "say why the rollout changes (recorded)")
    try:
        parse_rollout(mode)
    except ConfigError as exc:
        raise HttpError(HTTPStatus.BAD_REQUEST, str(exc)) from None
    runtime = view.app.runtime
    path = view.app.options.inventory or runtime.settings.inventory_path
    if job not in known_jobs(runtime, read_inventory(path)):
        raise HttpError(HTTPStatus.BAD_REQUEST, f"{job!r} is not a job of the inventory or app")
    why = _promotion(view, job, mode, why)
    stored = set_rollout(runtime, job, mode, who=view.who, reason=why)
    log.info("dashboard: %s set the rollout of %s to %s: %s", view.who, job, stored.label, why)
    return view.go("/migration", flash="rollout", job=job)


# -- workers --------------------------------------------------------------------


def _promotion(view: View, job: str, mode: str, why: str) -> str:
    """The promotion rule, as ``migrator rollout set`` applies it: async or a percentage needs
    clean shadow evidence; ``force`` passes, and the recorded reason says what it overrode."""
    runtime = view.app.runtime
    if parse_rollout(mode)[0] is RolloutMode.INLINE:
        return why
    found = current_evidence(runtime.gate_store.shadow_evidence(job), job)
    needed = runtime.settings.shadow_min_calls
    refusal = promotion_refusal(found, job, needed)
    if refusal is None:
        return why
    if view.request.field("force") != "1":
        raise HttpError(HTTPStatus.CONFLICT, refusal)
    figures = found.summary() if found else "no shadow evidence"
    return f"forced past the shadow evidence ({figures}, {needed} needed); reason: {why}"


def workers(view: View) -> Response:
    try:
        live, problem = view.app.runtime.inspector.workers(), ""
    except QueueError as exc:  # Redis down or not configured: the claims still show
        live, problem = [], f"live workers unavailable: {exc}"
    return view.render(
        "workers.html", "Workers", workers=live, problem=problem, claims=view.app.queries.claims()
    )


# -- flash messages after an action -----------------------------------------------


def _flashes(view: View) -> list[str]:
    kind, count = view.request.arg("flash"), view.request.arg("n")
    number = whole_number(count) or 0
    if kind == "replayed":
        return [f"{number} dead job(s) replayed"]
    if kind == "purged":
        return [f"{number} dead job(s) purged"]
    if kind == "rollout":
        job = view.request.arg("job")
        label = get_rollout(view.app.runtime, job).label
        return [f"rollout of {job} is now {label}"]
    return _actions.flashes(view) or _stats.flashes(view)


ROUTES: dict[tuple[str, str], Handler] = {
    ("GET", "/"): overview,
    ("GET", "/fragments/overview"): overview_fragment,
    ("GET", "/jobs"): jobs,
    ("GET", "/dead"): dead,
    ("POST", "/dead/replay"): replay,
    ("POST", "/dead/purge"): purge,
    ("GET", "/migration"): migration,
    ("POST", "/migration/rollout"): rollout,
    ("GET", "/workers"): workers,
    ("GET", "/periodic"): _stats.periodic,
    ("POST", "/periodic/switch"): _stats.switch_periodic,
    ("GET", "/stats"): _stats.by_name,
    **_actions.ROUTES,
}
