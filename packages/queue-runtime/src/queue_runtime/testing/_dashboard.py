"""MemoryDashboard: the ``DashboardStore`` seam on a :class:`MemoryJobStore`.

It answers as :class:`queue_runtime.pg.dashboard.PgDashboard` does, from the
memory store's rows: no windows over the history (a page is full until the
last), every row of a minute or a slice counted up to ``cap`` as PostgreSQL
reads them, the percentiles interpolated as ``percentile_cont``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from datetime import datetime, timedelta

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
from queue_runtime.testing._inspect import finished_summary, hot_summary, job_detail
from queue_runtime.testing._memory_jobs import MemoryJobStore
from queue_runtime.testing._rows import FinishedJob, HotJob

_FINAL = {ListState.SUCCEEDED, ListState.DEAD, ListState.CANCELLED}


class MemoryDashboard:
    """What the web dashboard reads, answered from a :class:`MemoryJobStore`."""

    def __init__(self, jobs: MemoryJobStore) -> None:
        self._jobs = jobs

    def close(self) -> None:
        """Nothing to release."""

    def jobs(
        self,
        state: ListState | None,
        name: str | None,
        after: int | None,
        limit: int = 50,
        args: str | None = None,
    ) -> JobPage:
        hot, finished, _ = self._jobs.snapshot()
        now = self._jobs.clock.now()
        rows = [_hot(j) for j in hot if _hot_in(j, state, now)]
        rows += [_finished(f) for f in finished if _finished_in(f, state)]
        texts = {j.id: _json(j.args) for j in hot} | {f.id: _json(f.args) for f in finished}
        wanted = args.lower() if args else None
        chosen = [
            r
            for r in rows
            if (not name or r.name == name) and (wanted is None or wanted in texts[r.id].lower())
        ]
        if state is ListState.DEAD and not args:
            chosen = _dead_page(chosen, finished, after)
        else:
            chosen = sorted((r for r in chosen if after is None or r.id < after), key=_newest)
        page = tuple(chosen[:limit])
        return JobPage(page, page[-1].id if len(chosen) > limit else None)

    def dead(self, job_ids: list[int]) -> list[JobSummary]:
        _, finished, _ = self._jobs.snapshot()
        ids = set(job_ids)
        found = [_finished(f) for f in finished if f.id in ids and f.status is JobStatus.DEAD]
        return sorted(found, key=_newest)

    def job(self, job_id: int) -> JobDetail | None:
        hot, finished, _ = self._jobs.snapshot()
        return job_detail(hot, finished, {}, job_id)  # by its id: a replay is not followed

    def now_minute(self) -> datetime:
        return self._jobs.clock.now().replace(second=0, microsecond=0)

    def minutes(self, starts: list[datetime], cap: int) -> list[Minute]:
        _, finished, _ = self._jobs.snapshot()
        found = []
        for at in starts:
            rows = _within(finished, at, at + timedelta(minutes=1))[:cap]
            ok = sum(f.status is JobStatus.SUCCEEDED for f in rows)
            lag = max((_seconds(f.enqueued_at, f.finished_at) for f in rows), default=0.0)
            found.append(Minute(at, ok, lag, len(rows) >= cap))
        return found

    def by_name(self, since: datetime, until: datetime, cap: int = 12_000) -> NameStatsPage:
        _, finished, _ = self._jobs.snapshot()
        step, per = (until - since) / SLICES, max(cap // SLICES, 1)
        slices = [
            _within(finished, since + step * i, since + step * (i + 1)) for i in range(SLICES)
        ]
        sample = [f for rows in slices for f in rows[:per]]
        names = sorted({f.name for f in sample})
        rows = [_name_stats(n, [f for f in sample if f.name == n]) for n in names]
        rows.sort(key=lambda r: (-r.finished, r.name))
        return NameStatsPage(rows, any(len(s) >= per for s in slices))

    def by_keys(self, keys: list[str]) -> dict[str, JobSummary]:
        hot, finished, _ = self._jobs.snapshot()
        rows = {j.id: _hot(j) for j in hot} | {f.id: _finished(f) for f in finished}
        found = {}
        for key in keys:
            taken = self._jobs.enqueued_key(key)
            if taken is not None and taken.job_id in rows:
                found[key] = rows[taken.job_id]
        return found

    def periodic_switches(self, limit: int = 20) -> list[PeriodicSwitch]:
        return self._jobs.periodic_switches(limit)

    def retry_now(self, job_ids: list[int], by: str) -> list[int]:
        """``by`` goes unrecorded: the memory store keeps no job audit."""
        return self._jobs.retry_now(job_ids)

    def claims(self) -> list[WorkerClaims]:
        hot, _, _ = self._jobs.snapshot()
        groups: dict[tuple[str, str], list[datetime]] = {}
        for j in hot:
            if j.running and j.claimed_at is not None:
                groups.setdefault((j.worker or "?", j.pool), []).append(j.claimed_at)
        return [
            WorkerClaims(worker, pool, len(at), min(at), max(at))
            for (worker, pool), at in sorted(groups.items())
        ]


def _newest(row: JobSummary) -> int:
    return -row.id


def _hot_in(j: HotJob, state: ListState | None, now: datetime) -> bool:
    status = j.status()
    if state is None:
        return True
    if state in (ListState.QUEUED, ListState.SCHEDULED):
        later = j.run_at > now
        return status is JobStatus.QUEUED and later == (state is ListState.SCHEDULED)
    return state not in _FINAL and status.value == state.value


def _finished_in(f: FinishedJob, state: ListState | None) -> bool:
    return state is None or f.status.value == state.value


def _preview(args: object) -> str | None:
    return None if args is None else _json(args)[: PREVIEW + 1]


def _hot(j: HotJob) -> JobSummary:
    return replace(hot_summary(j), args_text=_preview(j.args))


def _finished(f: FinishedJob) -> JobSummary:
    return replace(finished_summary(f), error=f.error, args_text=_preview(f.args))


def _json(args: object) -> str:
    """The arguments' JSON text as ``jsonb::text`` writes it (an object's keys shortest first,
    then by their bytes): what an argument search reads and a preview shows; "" for none."""
    return "" if args is None else json.dumps(_jsonb_order(args), ensure_ascii=False)


def _jsonb_order(value: object) -> object:
    if isinstance(value, dict):
        keys = sorted(value, key=lambda k: (len(k.encode()), k.encode()))
        return {k: _jsonb_order(value[k]) for k in keys}
    if isinstance(value, list):
        return [_jsonb_order(v) for v in value]
    return value


def _dead_page(
    rows: list[JobSummary], finished: Sequence[FinishedJob], after: int | None
) -> list[JobSummary]:
    """Dead letters, newest finished first; after the job ``after`` (gone: nothing)."""
    at = {f.id: f.finished_at for f in finished}
    order: Callable[[JobSummary], tuple[datetime, int]] = lambda r: (at[r.id], r.id)  # noqa: E731
    rows = sorted(rows, key=order, reverse=True)
    if after is None:
        return rows
    if after not in at:
        return []
    mark = (at[after], after)
    return [r for r in rows if order(r) < mark]


def _within(finished: Iterable[FinishedJob], since: datetime, until: datetime) -> list[FinishedJob]:
    return sorted((f for f in finished if since <= f.finished_at < until), key=lambda f: f.id)


def _seconds(start: datetime, end: datetime) -> float:
    return (end - start).total_seconds()


def _name_stats(name: str, rows: list[FinishedJob]) -> NameStats:
    runs = [_seconds(f.started_at, f.finished_at) for f in rows if f.started_at is not None]
    totals = [_seconds(f.enqueued_at, f.finished_at) for f in rows]
    return NameStats(
        name,
        len(rows),
        sum(f.status is JobStatus.DEAD for f in rows),
        sum(f.status is JobStatus.CANCELLED for f in rows),
        sum(f.attempt > 1 for f in rows),
        _percentile(runs, 0.5),
        _percentile(runs, 0.95),
        _percentile(totals, 0.95) or 0.0,
    )


def _percentile(values: list[float], q: float) -> float | None:
    """``percentile_cont(q)``: linear between the two nearest ranks; None without values."""
    if not values:
        return None
    ordered = sorted(values)
    pos = q * (len(ordered) - 1)
    low = int(pos)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (pos - low)
