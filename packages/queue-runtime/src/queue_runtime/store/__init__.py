"""Storage seams, at the domain level (after River's ``rivertype``).

Four protocols, each taking and returning small typed records, and the
dashboard's reads:

- ``JobStore``: the jobs themselves (enqueue, claim, settle, DLQ, stats);
- ``GateStore``: certifications, rollouts, idempotency-key state (the gate
  and the execution guard) and shadow evidence (:mod:`queue_runtime.shadow`);
- ``Inspector``: what the tools read (``migrator plan --check``, the load
  test, ``queue-runtime jobs/show/workers``, the dashboard): history of ids,
  dead count, schema revisions, job listings and details, live workers;
- ``LeaseStore``: leases, the dataset epoch, tenant tokens (Redis);
- ``DashboardStore``: the web dashboard's pages of jobs, one job, charts,
  per-name figures and claims (and "retry now"), on the Inspector's records.

``queue_runtime.pg`` implements the first three and the dashboard's on
PostgreSQL, ``queue_runtime.redis`` the fourth, ``queue_runtime.testing`` all
five in memory. One contract suite (``tests/integration/test_store_contract.py``)
runs against every implementation.

One module per protocol (``_jobs``, ``_gate``, ``_inspector``, ``_leases``,
``_dashboard`` with its own records),
their records in ``_records``; this package re-exports them: import from
``queue_runtime.store``.
"""

from __future__ import annotations

from dataclasses import dataclass

from queue_runtime.store._dashboard import (
    SLICES,
    DashboardStore,
    ListState,
    Minute,
    NameStats,
    NameStatsPage,
    PeriodicSwitch,
    WorkerClaims,
)
from queue_runtime.store._gate import GateStore, KeyStore
from queue_runtime.store._inspector import Inspector
from queue_runtime.store._jobs import JobStore, args_digest, batch_digests
from queue_runtime.store._leases import LeaseStore
from queue_runtime.store._records import (
    KEPT_ATTEMPTS,
    PREVIEW,
    TRACEBACK_CHARS,
    AttemptError,
    Cancellation,
    Certification,
    ChangeCause,
    ClaimedJob,
    Completion,
    Control,
    EnqueuedKey,
    Failure,
    GateSnapshot,
    HistoryEntry,
    JobDetail,
    JobHealth,
    JobPage,
    JobQuery,
    JobRecord,
    JobStatus,
    JobSummary,
    KeyCounts,
    KeyState,
    KeyStatus,
    NewJob,
    PoolStats,
    Renewal,
    Rollout,
    RolloutChange,
    WorkerInfo,
    attempt_errors,
    clip_traceback,
)


@dataclass(frozen=True, slots=True)
class Stores:
    """The four seams one Runtime runs on (``Runtime(settings, stores=...)``).

    The default is PostgreSQL plus Redis built from the settings
    (:func:`queue_runtime.pg.stores`); ``queue_runtime.testing`` builds
    in-memory ones. ``dashboard``: what the web dashboard reads (None: these
    stores have no dashboard).
    """

    jobs: JobStore
    gate: GateStore
    inspector: Inspector
    leases: LeaseStore
    dashboard: DashboardStore | None = None

    def close(self) -> None:
        """Close every store (each close is idempotent, so shared connections are fine)."""
        for part in (self.jobs, self.gate, self.inspector, self.leases, self.dashboard):
            if part is not None:
                part.close()


__all__ = [
    "KEPT_ATTEMPTS",
    "PREVIEW",
    "SLICES",
    "TRACEBACK_CHARS",
    "AttemptError",
    "Cancellation",
    "Certification",
    "ChangeCause",
    "ClaimedJob",
    "Completion",
    "Control",
    "DashboardStore",
    "EnqueuedKey",
    "Failure",
    "GateSnapshot",
    "GateStore",
    "HistoryEntry",
    "Inspector",
    "JobDetail",
    "JobHealth",
    "JobPage",
    "JobQuery",
    "JobRecord",
    "JobStatus",
    "JobStore",
    "JobSummary",
    "KeyCounts",
    "KeyState",
    "KeyStatus",
    "KeyStore",
    "LeaseStore",
    "ListState",
    "Minute",
    "NameStats",
    "NameStatsPage",
    "NewJob",
    "PeriodicSwitch",
    "PoolStats",
    "Renewal",
    "Rollout",
    "RolloutChange",
    "Stores",
    "WorkerClaims",
    "WorkerInfo",
    "args_digest",
    "attempt_errors",
    "batch_digests",
    "clip_traceback",
]
