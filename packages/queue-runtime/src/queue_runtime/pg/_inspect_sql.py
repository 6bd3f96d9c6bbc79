"""The statements behind ``PgInspector.list_jobs`` and ``job_detail``.

Tables: ``{s}.jobs`` (queued, retrying, running: the hot table) and
``{s}.job_history`` (succeeded, dead, cancelled); ``{s}.job_audit`` maps a
replayed dead job to its replay. ``{s}`` is the schema (``sql.Identifier``);
every value is a bind parameter. A listing is composed of fixed fragments only
(which table, which filters), each part ordered by the primary key and limited,
so it is two backward index scans at most: never a COUNT, never an OFFSET. A
name filter (``--job``) filters as it scans (an index on the name would slow
every enqueue, claim and completion; an installation may add one to the
history, see docs/runtime.md, and it is then used).
"""

from __future__ import annotations

from typing import Any

from queue_runtime.store import JobQuery, JobStatus

REPLAY_HOPS = 5  # how far job_detail follows a replayed dead job (as JobStore.get)

_HOT_STATUS = """CASE WHEN state = 'running' THEN 'running'
         WHEN errors IS NOT NULL AND attempt > 0 THEN 'retrying' ELSE 'queued' END"""
_RETRYING = "(errors IS NOT NULL AND attempt > 0)"
_HOT_WHERE = {
    JobStatus.RUNNING: "state = 'running'",
    JobStatus.RETRYING: f"state = 'pending' AND {_RETRYING}",
    JobStatus.QUEUED: f"state = 'pending' AND NOT {_RETRYING}",
}
_FINAL = (JobStatus.SUCCEEDED, JobStatus.DEAD, JobStatus.CANCELLED)

_HOT_LIST = f"""SELECT id, name, pool, {_HOT_STATUS}, attempt, max_attempts, enqueued_at, run_at,
       claimed_at, NULL::timestamptz, errors->-1->>'error'
FROM {{s}}.jobs WHERE {{where}} ORDER BY id DESC LIMIT %(limit)s"""
_HISTORY_LIST = """SELECT id, name, pool, status::text, attempt, max_attempts, enqueued_at,
       NULL::timestamptz, started_at, finished_at, coalesce(error, errors->-1->>'error')
FROM {s}.job_history WHERE {where} ORDER BY id DESC LIMIT %(limit)s"""


def listing(query: JobQuery) -> tuple[str, dict[str, Any]]:
    """The statement (``{s}`` still to render) and its parameters; one row more than
    ``query.limit`` tells the caller there is a next page."""
    common = [
        cond
        for cond, value in (
            ("id < %(after)s", query.after),
            ("name = %(job)s", query.job),
            ("pool = %(pool)s", query.pool),
        )
        if value is not None
    ]
    parts = []
    if query.state is None or query.state in _HOT_WHERE:
        hot = [*common, *([_HOT_WHERE[query.state]] if query.state else [])]
        parts.append(_HOT_LIST.replace("{where}", _where(hot)))
    if query.state is None or query.state in _FINAL:
        final = [*common, *(["status = %(state)s::text::{s}.final_status"] if query.state else [])]
        parts.append(_HISTORY_LIST.replace("{where}", _where(final)))
    statement = " UNION ALL ".join(f"({part})" for part in parts)
    if len(parts) > 1:
        statement += " ORDER BY 1 DESC LIMIT %(limit)s"
    params = {
        "after": query.after,
        "job": query.job,
        "pool": query.pool,
        "state": query.state.value if query.state else None,
        "limit": query.limit + 1,
    }
    return statement, params


def _where(conditions: list[str]) -> str:
    return " AND ".join(conditions) or "true"


_DETAIL_HOT = f"""SELECT id, name, pool, {_HOT_STATUS}, args, attempt, max_attempts, priority,
       enqueued_at, run_at, claimed_at, NULL::timestamptz, worker, tenant, idempotency_key,
       NULL::jsonb, NULL::text, NULL::text, errors
FROM {{s}}.jobs WHERE id = %(id)s"""
_DETAIL_HISTORY = """SELECT id, name, pool, status::text, args, attempt, max_attempts, priority,
       enqueued_at, NULL::timestamptz, started_at, finished_at, NULL::text, tenant,
       idempotency_key, result, error, traceback, errors
FROM {s}.job_history WHERE id = %(id)s"""
DETAIL = f"{_DETAIL_HOT}\nUNION ALL\n{_DETAIL_HISTORY}"

# replayed_as: the job a dead job was replayed into.
REPLAYED_AS = """
SELECT new_job_id FROM {s}.job_audit
WHERE job_id = %s AND action = 'replay' ORDER BY id DESC LIMIT 1
"""
