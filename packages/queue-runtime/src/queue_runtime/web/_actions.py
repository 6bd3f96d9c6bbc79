"""The jobs list's and the pools' actions: cancel (delete), retry now, pause, resume.

Each goes through the same call as the CLI, with the operator's name as who
asked: ``JobStore.cancel_job(id, by)`` (``queue-runtime cancel``: a job not
started yet leaves the queue as ``cancelled``, its error says "cancelled by
NAME"; a running one gets a cancel request naming NAME), ``JobStore.pause(pool,
by)`` / ``resume(pool)`` (``queue-runtime pause|resume``: ``paused_by`` is NAME).
"Retry now" has no CLI twin: :meth:`PgDashboard.retry_now` makes a waiting job
(a retry's backoff, a scheduled one) due at once and records NAME in the job
audit. Every action also logs one line with who. The checks every POST passes
(token, Origin, CSRF, read-only) are the app's (``_app.Dashboard``).
"""

from __future__ import annotations

import logging
from http import HTTPStatus

from queue_runtime.store import Cancellation
from queue_runtime.web._app import Handler, HttpError, View, job_ids
from queue_runtime.web._http import Response, whole_number

log = logging.getLogger("queue_runtime.web")
KEPT = ("state", "job", "q")  # the jobs list's filters, kept across an action


def cancel_jobs(view: View) -> Response:
    """Queued, scheduled, retrying: cancelled (they never run); running: asked to stop."""
    answers = [view.app.runtime.store.cancel_job(i, view.who) for i in _ids(view)]
    done = sum(a is Cancellation.CANCELLED for a in answers)
    asked = sum(a is Cancellation.REQUESTED for a in answers)
    log.info("dashboard: %s cancelled %d job(s), asked %d to stop", view.who, done, asked)
    return _back(view, "cancelled", done, asked=str(asked))


def retry_jobs(view: View) -> Response:
    ids = _ids(view)
    due = view.app.queries.retry_now(ids, view.who)
    log.info("dashboard: %s made %d waiting job(s) due now: %s", view.who, len(due), due)
    return _back(view, "retried", len(due))


def pause_pool(view: View) -> Response:
    pool = _pool(view)
    changed = view.app.runtime.store.pause(pool, view.who)
    log.info("dashboard: %s paused pool %s", view.who, pool)
    return view.go("/", flash="paused" if changed else "was-paused", pool=pool)


def resume_pool(view: View) -> Response:
    pool = _pool(view)
    changed = view.app.runtime.store.resume(pool)
    log.info("dashboard: %s resumed pool %s", view.who, pool)
    return view.go("/", flash="resumed" if changed else "not-paused", pool=pool)


def flashes(view: View) -> list[str]:
    """The line after one of these actions ([] for any other ``flash``)."""
    args = view.request.arg
    kind, pool = args("flash"), args("pool")
    number = whole_number(args("n")) or 0
    lines = {
        "cancelled": f"{number} job(s) cancelled (kept in the history as cancelled)",
        "retried": f"{number} waiting job(s) made due now",
        "paused": f"pool {pool} paused: workers stop claiming from it within 1 s",
        "was-paused": f"pool {pool} was already paused",
        "resumed": f"pool {pool} resumed: workers claim from it again within 1 s",
        "not-paused": f"pool {pool} was not paused",
    }
    found = [lines[kind]] if kind in lines else []
    asked = args("asked")
    if kind == "cancelled" and whole_number(asked):
        found.append(f"{asked} running job(s) asked to stop (they stop if they check)")
    return found


def _ids(view: View) -> list[int]:
    texts = view.request.form.get("ids", [])
    if not texts:
        raise HttpError(HTTPStatus.BAD_REQUEST, "select at least one job")
    return job_ids(texts)


def _pool(view: View) -> str:
    pool = view.request.field("pool")
    configured = view.app.runtime.settings.pools
    paused = {s.pool for s in view.app.runtime.store.stats() if s.paused}
    if pool not in configured and pool not in paused:
        known = ", ".join(sorted(configured))
        raise HttpError(HTTPStatus.BAD_REQUEST, f"unknown pool {pool!r}; configured: {known}")
    return pool


def _back(view: View, flash: str, count: int, **extra: str) -> Response:
    kept = {k: view.request.field(k) for k in KEPT if view.request.field(k)}
    return view.go("/jobs", **kept, flash=flash, n=str(count), **extra)


ROUTES: dict[tuple[str, str], Handler] = {
    ("POST", "/jobs/cancel"): cancel_jobs,
    ("POST", "/jobs/retry"): retry_jobs,
    ("POST", "/pools/pause"): pause_pool,
    ("POST", "/pools/resume"): resume_pool,
}
