"""Job listings and details from the memory store's rows (as ``PgInspector`` answers them)."""

from __future__ import annotations

from queue_runtime.store import (
    JobDetail,
    JobPage,
    JobQuery,
    JobSummary,
    attempt_errors,
)
from queue_runtime.testing._rows import FinishedJob, HotJob, json_copy

REPLAY_HOPS = 5


def list_jobs(hot: list[HotJob], finished: list[FinishedJob], query: JobQuery) -> JobPage:
    """Newest first; ``query.after`` keeps ids below it; one page of ``query.limit``."""
    rows = [hot_summary(j) for j in hot] + [finished_summary(f) for f in finished]
    chosen = sorted((r for r in rows if _matches(r, query)), key=lambda r: -r.id)
    page = tuple(chosen[: query.limit])
    return JobPage(page, page[-1].id if len(chosen) > query.limit and page else None)


def _matches(row: JobSummary, query: JobQuery) -> bool:
    return (
        (query.after is None or row.id < query.after)
        and (query.job is None or row.name == query.job)
        and (query.pool is None or row.pool == query.pool)
        and (query.state is None or row.status is query.state)
    )


def _last_error(errors: list[dict[str, object]] | None) -> str | None:
    return str(errors[-1].get("error")) if errors else None


def hot_summary(j: HotJob) -> JobSummary:
    return JobSummary(
        j.id,
        j.name,
        j.pool,
        j.status(),
        j.attempt,
        j.max_attempts,
        j.enqueued_at,
        run_at=j.run_at,
        started_at=j.claimed_at if j.running else None,
        error=_last_error(j.errors),
    )


def finished_summary(f: FinishedJob) -> JobSummary:
    return JobSummary(
        f.id,
        f.name,
        f.pool,
        f.status,
        f.attempt,
        f.max_attempts,
        f.enqueued_at,
        started_at=f.started_at,
        finished_at=f.finished_at,
        error=f.error or _last_error(f.errors),
    )


def job_detail(
    hot: list[HotJob], finished: list[FinishedJob], replayed_as: dict[int, int], job_id: int
) -> JobDetail | None:
    """The job, wherever it is; a replayed dead job answers as its replay."""
    hot_by = {j.id: j for j in hot}
    finished_by = {f.id: f for f in finished}
    wanted: int | None = job_id
    for _ in range(REPLAY_HOPS + 1):
        if wanted is None:
            return None
        if wanted in hot_by:
            return _hot_detail(hot_by[wanted])
        if wanted in finished_by:
            return _finished_detail(finished_by[wanted])
        wanted = replayed_as.get(wanted)
    return None


def _hot_detail(j: HotJob) -> JobDetail:
    return JobDetail(
        id=j.id,
        name=j.name,
        pool=j.pool,
        status=j.status(),
        args=json_copy(j.args),
        attempt=j.attempt,
        max_attempts=j.max_attempts,
        priority=j.priority,
        enqueued_at=j.enqueued_at,
        run_at=j.run_at,
        started_at=j.claimed_at if j.running else None,
        worker=j.worker if j.running else None,
        tenant=j.tenant,
        idempotency_key=j.idempotency_key,
        errors=attempt_errors(json_copy(j.errors), None, j.attempt),
    )


def _finished_detail(f: FinishedJob) -> JobDetail:
    return JobDetail(
        id=f.id,
        name=f.name,
        pool=f.pool,
        status=f.status,
        args=json_copy(f.args) or {},
        attempt=f.attempt,
        max_attempts=f.max_attempts,
        priority=f.priority,
        enqueued_at=f.enqueued_at,
        started_at=f.started_at,
        finished_at=f.finished_at,
        tenant=f.tenant,
        idempotency_key=f.idempotency_key,
        result=json_copy(f.result),
        error=f.error,
        traceback=f.traceback,
        errors=attempt_errors(json_copy(f.errors), f.traceback, f.attempt),
    )


__all__ = ["job_detail", "list_jobs"]
