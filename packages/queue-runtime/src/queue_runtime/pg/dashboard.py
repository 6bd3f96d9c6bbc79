"""What the web dashboard reads from PostgreSQL: pages of jobs, one job, charts, workers.

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
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any, TypeVar

from psycopg import sql

from queue_runtime.config import Settings
from queue_runtime.pg.connect import Connections, LazyPool, channel
from queue_runtime.pg.errors import translated
from queue_runtime.store import KEPT_ATTEMPTS, JobStatus

T = TypeVar("T")


class ListState(StrEnum):
    """What the jobs page filters on: the runtime's statuses, as stored."""

    QUEUED = "queued"
    SCHEDULED = "scheduled"  # queued with a run_at in the future (not a retry)
    RUNNING = "running"
    RETRYING = "retrying"
    SUCCEEDED = "succeeded"
    DEAD = "dead"
    CANCELLED = "cancelled"


_NOT_RETRY = "state = 'pending' AND NOT (errors IS NOT NULL AND attempt > 0)"
_HOT_STATE = {
    ListState.QUEUED: f"{_NOT_RETRY} AND run_at <= now()",
    ListState.SCHEDULED: f"{_NOT_RETRY} AND run_at > now()",
    ListState.RUNNING: "state = 'running'",
    ListState.RETRYING: "state = 'pending' AND errors IS NOT NULL AND attempt > 0",
}
_HOT_STATUS = """CASE WHEN state = 'running' THEN 'running'
         WHEN errors IS NOT NULL AND attempt > 0 THEN 'retrying' ELSE 'queued' END"""
# The list's argument preview: the start of the arguments' JSON (never the whole payload).
PREVIEW = 120
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
SLICES = 60  # the per-name figures read their window in this many equal slices
TOP_ID = "SELECT greatest((SELECT max(id) FROM {s}.jobs), (SELECT max(id) FROM {s}.job_history))"

# One job: claimed_at is the claim of its running attempt, or (history) of the
# attempt that finished it (started_at, NULL before migration 0006).
DETAIL = f"""
SELECT id, name, pool, {_HOT_STATUS}, priority, args, attempt, max_attempts, NULL::jsonb,
       NULL::text, NULL::text, tenant, idempotency_key, enqueued_at, run_at, claimed_at,
       worker, NULL::timestamptz, errors
FROM {{s}}.jobs WHERE id = %(id)s
UNION ALL
SELECT id, name, pool, status::text, priority, args, attempt, max_attempts, result,
       error, traceback, tenant, idempotency_key, enqueued_at, NULL, started_at,
       NULL, finished_at, errors
FROM {{s}}.job_history WHERE id = %(id)s
"""

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


@dataclass(frozen=True, slots=True)
class JobRow:
    """One line of the jobs (or dead letters) page."""

    id: int
    name: str
    pool: str
    status: JobStatus
    attempt: int
    max_attempts: int
    enqueued_at: datetime
    finished_at: datetime | None
    error: str | None  # the last attempt's
    args_text: str | None = None  # the start of the arguments' JSON (PREVIEW + 1 characters)
    run_at: datetime | None = None  # queued jobs: when it may run

    @property
    def args_preview(self) -> str:
        text = self.args_text or ""
        return text if len(text) <= PREVIEW else text[: PREVIEW - 1] + "…"

    @property
    def scheduled(self) -> bool:
        """Queued to run later (a retry's backoff shows as ``retrying``)."""
        return (
            self.status is JobStatus.QUEUED
            and self.run_at is not None
            and self.run_at > datetime.now(UTC)
        )


@dataclass(frozen=True, slots=True)
class JobPage:
    rows: list[JobRow]
    next_after: int | None  # the ``after`` of the next page; None: this is the last one


@dataclass(frozen=True, slots=True)
class JobDetail:
    """Everything the job page shows, wherever the job lives now."""

    id: int
    name: str
    pool: str
    status: JobStatus
    priority: int
    args: Any
    attempt: int
    max_attempts: int
    result: Any
    error: str | None
    traceback: str | None
    tenant: str | None
    idempotency_key: str | None
    enqueued_at: datetime
    run_at: datetime | None
    claimed_at: datetime | None  # the running attempt's start, or the finishing one's
    worker: str | None
    finished_at: datetime | None
    attempts: list[dict[str, Any]] = field(default_factory=list)  # failed ones, oldest first

    @property
    def run_seconds(self) -> float | None:
        """How long the attempt that finished the job ran (None: not finished, or no start)."""
        if self.finished_at is None or self.claimed_at is None:
            return None
        return max(0.0, (self.finished_at - self.claimed_at).total_seconds())

    @property
    def attempts_cut(self) -> str:
        """A note when earlier failed attempts were dropped from the history ("" otherwise)."""
        first = self.attempts[0].get("attempt") if self.attempts else None
        if len(self.attempts) < KEPT_ATTEMPTS or not isinstance(first, int) or first <= 1:
            return ""
        return f"Only the last {KEPT_ATTEMPTS} failed attempts are kept."


@dataclass(frozen=True, slots=True)
class Minute:
    at: datetime
    succeeded: int
    lag_seconds: float
    capped: bool = False  # more than ``cap`` jobs finished: the figures are of the first ``cap``


@dataclass(frozen=True, slots=True)
class NameStats:
    """One job name's finished jobs over a window (``PgDashboard.by_name``)."""

    name: str
    finished: int
    dead: int
    cancelled: int
    retried: int  # finished after more than one attempt
    run_p50: float | None  # seconds, the attempt that finished the job (None: no start times)
    run_p95: float | None
    total_p95: float  # enqueue to finish

    @property
    def failure_rate(self) -> float:
        """Dead among finished (0..1)."""
        return self.dead / self.finished if self.finished else 0.0


@dataclass(frozen=True, slots=True)
class NameStatsPage:
    rows: list[NameStats]
    capped: bool  # a slice held more jobs than were read: the figures are of a sample


@dataclass(frozen=True, slots=True)
class PeriodicSwitch:
    job: str
    enabled: bool
    changed_at: datetime
    changed_by: str | None
    reason: str | None


@dataclass(frozen=True, slots=True)
class WorkerRow:
    worker: str
    pool: str
    running: int
    oldest_claim: datetime
    newest_claim: datetime


class PgDashboard:
    """The dashboard's read queries (raise ``StoreUnavailable`` / ``StoreError``)."""

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
        rows = [_job_row(r) for r in found[:limit]]
        if len(found) > limit:
            return JobPage(rows, rows[-1].id)
        return JobPage(rows, floor if floor > 1 else None)

    def _floor(self, after: int | None, window: int) -> int:
        top = after
        if top is None:
            found = self._all(TOP_ID)[0][0]
            top = int(found) + 1 if found is not None else 1
        return max(top - window, 0)

    def dead(self, job_ids: list[int]) -> list[JobRow]:
        """Which of ``job_ids`` are dead letters (newest first)."""
        return [_job_row(r) for r in self._all(DEAD_BY_ID, {"ids": job_ids})]

    def job(self, job_id: int) -> JobDetail | None:
        found = self._all(DETAIL, {"id": job_id})
        return _detail(found[0]) if found else None

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

    def by_keys(self, keys: list[str]) -> dict[str, JobRow]:
        """The jobs these idempotency keys name (periodic ticks), by key."""
        return {row[0]: _job_row(row[1:]) for row in self._all(BY_KEY, {"keys": keys})}

    def periodic_switches(self, limit: int = 20) -> list[PeriodicSwitch]:
        """The newest switches of periodic jobs (who switched which off or on, and why)."""
        return [PeriodicSwitch(*r) for r in self._all(PERIODIC_SWITCHES, {"limit": limit})]

    def retry_now(self, job_ids: list[int], by: str) -> list[int]:
        """Make these waiting jobs due now (audited with ``by``); the ids that were waiting."""
        params = {"ids": job_ids, "by": by, "channel": self._wake}
        return [int(r[0]) for r in self._all(RETRY_NOW, params)]

    def workers(self) -> list[WorkerRow]:
        return [WorkerRow(str(w or "?"), p, int(n), a, b) for w, p, n, a, b in self._all(WORKERS)]


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


def _job_row(row: tuple[Any, ...]) -> JobRow:
    job_id, name, pool, status, attempt, max_attempts, enqueued_at, finished_at, error = row[:9]
    args_text, run_at = row[9:11]
    return JobRow(
        job_id,
        name,
        pool,
        JobStatus(status),
        attempt,
        max_attempts,
        enqueued_at,
        finished_at,
        error,
        args_text,
        run_at,
    )


def _detail(row: tuple[Any, ...]) -> JobDetail:
    (
        job_id,
        name,
        pool,
        status,
        priority,
        args,
        attempt,
        max_attempts,
        result,
        error,
        traceback,
        tenant,
        key,
        enqueued_at,
        run_at,
        claimed_at,
        worker,
        finished_at,
        errors,
    ) = row
    return JobDetail(
        id=job_id,
        name=name,
        pool=pool,
        status=JobStatus(status),
        priority=priority,
        args=args,
        attempt=attempt,
        max_attempts=max_attempts,
        result=result,
        error=error,
        traceback=traceback,
        tenant=tenant,
        idempotency_key=key,
        enqueued_at=enqueued_at,
        run_at=run_at,
        claimed_at=claimed_at,
        worker=worker,
        finished_at=finished_at,
        attempts=list(errors or []),
    )
