"""A job's health over a window, from the memory store's rows (as ``PgInspector.job_health``)."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import Any

from queue_runtime.store import JobHealth, JobStatus
from queue_runtime.testing._rows import FinishedJob, HotJob


def job_health(
    job: str, window_seconds: float, hot: list[HotJob], finished: list[FinishedJob], now: datetime
) -> JobHealth:
    since = now - timedelta(seconds=window_seconds)
    recent = [f for f in finished if f.name == job and f.finished_at >= since]
    mine = [j for j in hot if j.name == job]
    histories = [j.errors for j in mine] + [f.errors for f in recent]
    due = [j.run_at for j in mine if not j.running and j.run_at <= now]
    return JobHealth(
        job=job,
        succeeded=sum(1 for f in recent if f.status is JobStatus.SUCCEEDED),
        failed_attempts=_failures_since(histories, since),
        dead=sum(1 for f in recent if f.status is JobStatus.DEAD),
        lag_seconds=(now - min(due)).total_seconds() if due else 0.0,
    )


def _failures_since(histories: Iterable[list[dict[str, Any]] | None], since: datetime) -> int:
    """Attempt-history entries (``errors``) stamped at or after ``since``."""
    return sum(
        1
        for history in histories
        for entry in history or []
        if datetime.fromisoformat(str(entry["at"])) >= since
    )
