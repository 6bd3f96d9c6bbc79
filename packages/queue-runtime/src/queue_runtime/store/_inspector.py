"""The ``Inspector`` protocol: what the tools read (``migrator plan --check``, the load test,
``queue-runtime jobs/show/workers``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from queue_runtime.store._records import (
    HistoryEntry,
    JobDetail,
    JobHealth,
    JobPage,
    JobQuery,
    WorkerInfo,
)


class Inspector(Protocol):
    """Read-only questions the tools ask about the runtime's state."""

    def history(self, job_ids: Sequence[int]) -> list[HistoryEntry]:
        """The finished jobs among ``job_ids`` (any order)."""
        ...

    def finished_count(self, job_ids: Sequence[int]) -> int: ...
    def unfinished_ids(self, job_ids: Sequence[int]) -> set[int]:
        """The ids among ``job_ids`` still in the hot table (queued, running, retrying)."""
        ...

    def dead_count(self) -> int: ...
    def job_health(self, job: str, window_seconds: float) -> JobHealth:
        """``job``'s runs, failures and dead letters over the last ``window_seconds``, its lag now."""
        ...

    def revisions(self) -> list[str] | None:
        """The schema's migration revision(s); None when it was never migrated."""
        ...

    def missing(self, names: Sequence[str]) -> list[str]:
        """Which of these tables or indexes the schema lacks (in the order given)."""
        ...

    def list_jobs(self, query: JobQuery) -> JobPage:
        """Jobs matching ``query``, newest (highest id) first, from the hot table and the
        history; keyset-paginated on the id, never counted."""
        ...

    def job_detail(self, job_id: int) -> JobDetail | None:
        """One job wherever it lives; a replayed dead job answers as its replay (its id
        differs); None when unknown or purged."""
        ...

    def workers(self) -> list[WorkerInfo]:
        """The live workers (their presence records), by id."""
        ...

    def close(self) -> None: ...
