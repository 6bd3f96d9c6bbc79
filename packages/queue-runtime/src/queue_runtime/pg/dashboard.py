"""PgDashboard: the ``DashboardStore`` seam on PostgreSQL (pages of jobs, one job, charts, claims).

Every list is a keyset page (``id < after ORDER BY id DESC LIMIT n + 1``) on
the primary keys of ``{s}.jobs`` and ``{s}.job_history`` (a job name or an
argument search filters as it scans: over the history, within a window of ids
per page, see ``WINDOW``), in the same order: no ``COUNT(*)`` and no
``OFFSET`` over the hot table or the history. The charts and the per-name
figures read the last hour(s) of ``job_history`` through its BRIN index on
``finished_at`` (a bounded number of rows); a periodic job's last run is the
job its tick's idempotency key names (the key's primary key); the workers are
the ``worker`` column of running rows (``jobs_running_idx``). One write lives
here, "retry now" (``retry_now``: a waiting job due at once, in the job
audit), because no CLI command has it; every other action is the JobStore's.
Every value is a bind parameter; ``{s}`` is the schema, rendered with
``sql.Identifier``.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from psycopg import sql

from queue_runtime.config import Settings
from queue_runtime.pg import _inspect_sql as inspect_sql
from queue_runtime.pg._errors import translated
from queue_runtime.pg.connect import Connections, LazyPool, channel
from queue_runtime.pg.inspect import detail_of
from queue_runtime.store import (
    PREVIEW,
    SLICES,
    JobDetail,
    JobPage,
    JobStatus,
    JobSummary,
    ListState,
    Minute,
    NameStats,
    NameStatsPage,
    PeriodicSwitch,
    WorkerClaims,
)

_NOT_RETRY = "state = 'pending' AND NOT (errors IS NOT NULL AND attempt > 0)"
_HOT_STATE = {
    ListState.QUEUED: f"{_NOT_RETRY} AND run_at <= now()",
    ListState.SCHEDULED: f"{_NOT_RETRY} AND run_at > now()",
    ListState.RUNNING: "state = 'running'",
    ListState.RETRYING: "state = 'pending' AND errors IS NOT NULL AND attempt > 0",
}
_HOT_STATUS = """CASE WHEN state = 'running' THEN 'running'
         WHEN errors IS NOT NULL AND attempt > 0 THEN 'retrying' ELSE 'queued' END"""
_HOT_ROW = (
    f"id, name, pool, {_HOT_STATUS}, attempt, max_attempts, enqueued_at, NULL::timestamptz,"
    f" errors->-1->>'error', left(args::text, {PREVIEW + 1}), run_at"
)
_HISTORY_ROW = (
    "id, name, pool, status::text, attempt, max_attempts, enqueued_at, finished_at, error,"
    f" left(args::text, {PREVIEW + 1}), NULL::timestamptz"
)
# A job name is an index range: ``name = %(name)s AND id < %(after)s`` walks
# (name, id) backwards. The condition is only written when there is a name: a
# generic ``(%(name)s IS NULL OR name = ...)`` would hide it from a prepared plan.
_NAME = " AND name = %(name)s"
# An argument search: a substring of the arguments' JSON text, case-insensitive (the
# pattern's own %, _ and \ are escaped). No index: like a rare status, it searches a window.
_ARGS = " AND args::text ILIKE %(args)s"
_PAGE_TAIL = " AND id < %(after)s{floor} ORDER BY id DESC LIMIT %(limit)s"
_FLOOR = " AND id >= %(floor)s"
# A final status other than dead (succeeded, cancelled: possibly rare among millions)
# has no index to follow: each such page searches at most WINDOW ids below ``after``
# (within the name's index range when there is a name) and, short of matches, links
# to the next window. A page costs what WINDOW ids cost, however rare the status.
WINDOW = 200_000
# An argument search reads each row's arguments as text (no index can serve a
# substring of a JSON document): its window is smaller, the same cost a page.
SEARCH_WINDOW = 20_000
TOP_ID = "SELECT greatest((SELECT max(id) FROM {s}.jobs), (SELECT max(id) FROM {s}.job_history))"

# Dead letters, newest first, through the partial index on dead rows' finished_at (dead
# rows are few among a large history: an id-ordered scan would read all of it). The
# keyset is (finished_at, id); ``after`` is the last id shown.
DEAD_PAGE = f"""
SELECT {_HISTORY_ROW} FROM {{s}}.job_history
WHERE status = 'dead' AND (%(name)s::text IS NULL OR name = %(name)s)
  AND (%(first_page)s OR (finished_at, id) < (
      SELECT finished_at, id FROM {{s}}.job_history WHERE id = %(after)s))
ORDER BY finished_at DESC, id DESC LIMIT %(limit)s
"""

# Given minutes: how many jobs finished in each (at most ``cap`` rows are read per
# minute, so a burst of millions costs what ``cap`` rows cost), how many of those
# succeeded, and the longest enqueue-to-finish time among them (the lag a job met,
# its run included). BRIN on finished_at finds each minute's pages.
MINUTES = """
SELECT m.at, count(x.status), count(*) FILTER (WHERE x.status = 'succeeded'),
       coalesce(max(extract(epoch FROM x.finished_at - x.enqueued_at)), 0)::float8
FROM unnest(%(minutes)s::timestamptz[]) AS m(at)
LEFT JOIN LATERAL (
    SELECT status, finished_at, enqueued_at FROM {s}.job_history
    WHERE finished_at >= m.at AND finished_at < m.at + interval '1 minute'
    LIMIT %(cap)s
) x ON true
GROUP BY m.at
"""
NOW_MINUTE = "SELECT date_trunc('minute', now())"

DEAD_BY_ID = f"""
SELECT {_HISTORY_ROW} FROM {{s}}.job_history
WHERE id = ANY(%(ids)s::bigint[]) AND status = 'dead' ORDER BY id DESC
"""

WORKERS = """
SELECT worker, pool, count(*), min(claimed_at), max(claimed_at)
FROM {s}.jobs WHERE state = 'running'
GROUP BY worker, pool ORDER BY worker, pool
"""

# Retry now: queued jobs waiting for their run_at (a retry's backoff, a scheduled
# job) become due at once; each is recorded in the job audit with who asked, and
# the workers of their pools are woken.
RETRY_NOW = """
WITH due AS (
    UPDATE {s}.jobs SET run_at = now()
    WHERE id = ANY(%(ids)s::bigint[]) AND state = 'pending' AND run_at > now()
    RETURNING id, pool
), a AS (
    INSERT INTO {s}.job_audit (job_id, action, detail)
    SELECT id, 'retry_now', jsonb_build_object('by', %(by)s::text) FROM due
), woken AS (
    SELECT pg_notify(%(channel)s, pool) FROM (SELECT DISTINCT pool FROM due) p
)
SELECT id FROM due WHERE (SELECT count(*) FROM woken) >= 0 ORDER BY id  -- runs the NOTIFYs
"""

# Per job name, the jobs that finished in the window, read as ``slices`` equal
# slices (one a minute for an hour) of at most ``per`` rows each, through the BRIN
# on finished_at: a busy window costs what slices * per rows cost, and its figures
# are of a sample spread evenly over it, never of its first rows only. Per name: how
# many, how many died or were cancelled or needed a retry, the median and p95 run
# time of the attempt that finished them (started_at; NULL before migration 0006)
# and the p95 of enqueue-to-finish; and whether any slice held more than ``per``.
BY_NAME = """
WITH x AS (
    SELECT m.at, h.* FROM unnest(%(starts)s::timestamptz[]) AS m(at)
    CROSS JOIN LATERAL (
        SELECT name, status, attempt, started_at, enqueued_at, finished_at
        FROM {s}.job_history
        WHERE finished_at >= m.at AND finished_at < m.at + %(step)s::interval
        LIMIT %(per)s
    ) h
), full_slices AS (
    SELECT count(*) AS n FROM (SELECT at FROM x GROUP BY at HAVING count(*) >= %(per)s) f
)
SELECT name, count(*), count(*) FILTER (WHERE status = 'dead'),
       count(*) FILTER (WHERE status = 'cancelled'), count(*) FILTER (WHERE attempt > 1),
       percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM finished_at - started_at)),
       percentile_cont(0.95) WITHIN GROUP (ORDER BY extract(epoch FROM finished_at - started_at)),
       percentile_cont(0.95) WITHIN GROUP (ORDER BY extract(epoch FROM finished_at - enqueued_at)),
       (SELECT n > 0 FROM full_slices)
FROM x GROUP BY name ORDER BY count(*) DESC, name
"""

# The job an idempotency key names (a periodic tick's key), wherever it is now.
BY_KEY = f"""
SELECT k.key, j.* FROM {{s}}.idempotency_keys k
CROSS JOIN LATERAL (
    SELECT {_HOT_ROW} FROM {{s}}.jobs WHERE id = k.job_id
    UNION ALL
    SELECT {_HISTORY_ROW} FROM {{s}}.job_history WHERE id = k.job_id
) j
WHERE k.key = ANY(%(keys)s::text[])
"""

# The newest switches of periodic jobs (their audit), newest first.
PERIODIC_SWITCHES = """
SELECT job, enabled, changed_at, changed_by, reason FROM {s}.periodic_switches
ORDER BY id DESC LIMIT %(limit)s
"""

# The last-id sentinel of a first page: larger than any bigint id.
FIRST = 2**63 - 1


class PgDashboard:
    """The dashboard's queries (raise ``StoreUnavailable`` / ``StoreError``)."""

    def __init__(self, connections: Connections, schema: str, wake: str = "") -> None:
        self._connections = connections
        self._schema = schema
        self._wake = wake  # the NOTIFY channel workers listen on
        ident = sql.Identifier(schema)
        self._render: Callable[[str], sql.Composed] = lambda text: sql.SQL(text).format(s=ident)

    @classmethod
    def open(cls, settings: Settings, max_size: int = 4) -> PgDashboard:
        """On a small pool of its own, opened on first use, with JIT off on its connections:
        compiling the chart's per-minute query cost 540 ms of its 754 ms at 1M history rows,
        and the dashboard's short reads never gain from it."""
        pool = LazyPool(settings, max_size, options="-c jit=off")
        return cls(pool, settings.schema_name, channel(settings))

    def close(self) -> None:
        self._connections.close()

    def _all(self, text: str, params: Any = None) -> list[tuple[Any, ...]]:
        with translated(self._schema), self._connections.connection() as conn:
            return conn.execute(self._render(text), params).fetchall()

    def jobs(
        self,
        state: ListState | None,
        name: str | None,
        after: int | None,
        limit: int = 50,
        args: str | None = None,
    ) -> JobPage:
        """A page of jobs, newest id first, with ids below ``after``.

        With a sparse status, or an argument search (``args``: a substring of the
        arguments' JSON), the page searches one window of ids (see ``WINDOW``): it
        may hold fewer than ``limit`` jobs, and ``next_after`` continues below it.
        A name alone is exact (its index): full pages until the last.
        """
        windowed = _sparse(state, name) or bool(args)
        floor = self._floor(after, SEARCH_WINDOW if args else WINDOW) if windowed else 0
        params = {
            "args": f"%{_like_escaped(args)}%" if args else None,
            "name": name or None,
            "after": after or FIRST,
            "floor": floor,
            "limit": limit + 1,
            "status": state.value if state else None,
            "first_page": after is None,
        }
        found = self._all(_page_query(state, bool(name), windowed, bool(args)), params)
        rows = tuple(_job_row(r) for r in found[:limit])
        if len(found) > limit:
            return JobPage(rows, rows[-1].id)
        return JobPage(rows, floor if floor > 1 else None)

    def _floor(self, after: int | None, window: int) -> int:
        top = after
        if top is None:
            found = self._all(TOP_ID)[0][0]
            top = int(found) + 1 if found is not None else 1
        return max(top - window, 0)

    def dead(self, job_ids: list[int]) -> list[JobSummary]:
        """Which of ``job_ids`` are dead letters (newest first)."""
        return [_job_row(r) for r in self._all(DEAD_BY_ID, {"ids": job_ids})]

    def job(self, job_id: int) -> JobDetail | None:
        found = self._all(inspect_sql.DETAIL, {"id": job_id})
        return detail_of(found[0]) if found else None

    def now_minute(self) -> datetime:
        """The database clock's current minute (the charts' right edge)."""
        found: datetime = self._all(NOW_MINUTE)[0][0]
        return found

    def minutes(self, starts: list[datetime], cap: int) -> list[Minute]:
        """The finished jobs of each minute starting at ``starts`` (reading at most ``cap`` each)."""
        found = self._all(MINUTES, {"minutes": starts, "cap": cap})
        return [Minute(at, int(ok), float(lag), int(n) >= cap) for at, n, ok, lag in found]

    def by_name(self, since: datetime, until: datetime, cap: int = 12_000) -> NameStatsPage:
        """Failure rate and durations per job name of the jobs finished in [since, until),
        reading at most ``cap`` rows: ``SLICES`` slices of ``cap / SLICES`` rows each."""
        step = (until - since) / SLICES
        params = {
            "starts": [since + step * i for i in range(SLICES)],
            "step": step,
            "per": max(cap // SLICES, 1),
        }
        found = self._all(BY_NAME, params)
        rows = [
            NameStats(str(n), int(c), int(d), int(x), int(r), p50, p95, float(t or 0.0))
            for n, c, d, x, r, p50, p95, t, _ in found
        ]
        return NameStatsPage(rows, bool(found and found[0][-1]))

    def by_keys(self, keys: list[str]) -> dict[str, JobSummary]:
        """The jobs these idempotency keys name (periodic ticks), by key."""
        return {row[0]: _job_row(row[1:]) for row in self._all(BY_KEY, {"keys": keys})}

    def periodic_switches(self, limit: int = 20) -> list[PeriodicSwitch]:
        """The newest switches of periodic jobs (who switched which off or on, and why)."""
        return [PeriodicSwitch(*r) for r in self._all(PERIODIC_SWITCHES, {"limit": limit})]

    def retry_now(self, job_ids: list[int], by: str) -> list[int]:
        """Make these waiting jobs due now (audited with ``by``); the ids that were waiting."""
        params = {"ids": job_ids, "by": by, "channel": self._wake}
        return [int(r[0]) for r in self._all(RETRY_NOW, params)]

    def claims(self) -> list[WorkerClaims]:
        found = self._all(WORKERS)
        return [WorkerClaims(str(w or "?"), p, int(n), a, b) for w, p, n, a, b in found]


def _sparse(state: ListState | None, name: str | None) -> bool:
    """Whether the filter may match few history rows of many with no index to find them:
    a succeeded/cancelled status, or a name over the history (dead letters have their own
    index; the hot table is the queue, small enough to filter as it is scanned). An
    optional ``(name, id)`` index on the history (docs/runtime.md) is used when present."""
    if state in (ListState.SUCCEEDED, ListState.CANCELLED):
        return True
    return bool(name) and state not in _HOT_STATE and state is not ListState.DEAD


def _like_escaped(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _page_query(state: ListState | None, named: bool, windowed: bool, searched: bool) -> str:
    """The page's statement: fixed fragments only (which table, a name, a search, a window)."""
    if state is ListState.DEAD and not searched:
        return DEAD_PAGE
    where = (_NAME if named else "") + (_ARGS if searched else "")
    tail = where + _PAGE_TAIL.replace("{floor}", _FLOOR if windowed else "")
    hot = f"SELECT {_HOT_ROW} FROM {{s}}.jobs WHERE "
    history = f"SELECT {_HISTORY_ROW} FROM {{s}}.job_history WHERE "
    if state in _HOT_STATE:
        return hot + _HOT_STATE[state] + tail
    if state is not None:
        return history + "status = %(status)s" + tail
    return f"({hot}true{tail}) UNION ALL ({history}true{tail}) ORDER BY id DESC LIMIT %(limit)s"


def _job_row(row: tuple[Any, ...]) -> JobSummary:
    job_id, name, pool, status, attempt, max_attempts, enqueued_at, finished_at, error = row[:9]
    args_text, run_at = row[9:11]
    return JobSummary(
        job_id,
        name,
        pool,
        JobStatus(status),
        attempt,
        max_attempts,
        enqueued_at,
        run_at=run_at,
        finished_at=finished_at,
        error=error,
        args_text=args_text,
    )
