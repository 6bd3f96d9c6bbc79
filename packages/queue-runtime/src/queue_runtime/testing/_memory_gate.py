"""MemoryGateStore and MemoryInspector: the gate's records and the tools' questions, in memory.

The gate store keeps certifications, rollouts and the execution guard's
idempotency keys by the rules of the PostgreSQL tables; the inspector reads a
:class:`MemoryJobStore`. A memory "schema" is always at the code's head
revision and lacks no table.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from queue_runtime.config import RolloutMode
from queue_runtime.local_keys import LocalKeys
from queue_runtime.shadow_model import ShadowDelta, ShadowEvidence
from queue_runtime.store import (
    Certification,
    ChangeCause,
    GateSnapshot,
    HistoryEntry,
    JobDetail,
    JobHealth,
    JobPage,
    JobQuery,
    KeyCounts,
    KeyState,
    Rollout,
    RolloutChange,
    WorkerInfo,
)
from queue_runtime.testing import _inspect, _shadow
from queue_runtime.testing._clock import Clock, SystemClock
from queue_runtime.testing._memory_jobs import MemoryJobStore
from queue_runtime.testing._memory_leases import MemoryLeaseStore
from queue_runtime.testing._rows import json_copy


@dataclass(frozen=True, slots=True)
class _Stored:
    """A certification and its insertion order (newest first breaks ties on time by it)."""

    seq: int
    certification: Certification


class MemoryGateStore:
    def __init__(self, clock: Clock | None = None) -> None:
        self.clock = clock or SystemClock()
        self._lock = threading.Lock()
        self._seq = itertools.count(1)
        self._certifications: list[_Stored] = []
        self._rollouts: dict[str, Rollout] = {}
        self._changes: list[RolloutChange] = []  # oldest first
        self._keys = LocalKeys(lambda: self.clock.now())  # the rules of job_keys
        self._evidence: _shadow.Records = {}

    def close(self) -> None:
        """Nothing to release."""

    # -- certifications -------------------------------------------------------

    def insert_certification(
        self,
        job: str,
        fingerprint: str,
        figures: dict[str, Any],
        who: str,
        report: dict[str, Any] | None = None,
    ) -> Certification:
        with self._lock:
            kept = None if report is None else json_copy(report)
            made = Certification(
                job, fingerprint, self.clock.now(), who, json_copy(figures), None, kept
            )
            self._certifications.append(_Stored(next(self._seq), made))
            return made

    def revoke_certifications(self, job: str, fingerprint: str | None) -> int:
        with self._lock:
            now, revoked = self.clock.now(), 0
            for i, stored in enumerate(self._certifications):
                cert = stored.certification
                if cert.job == job and cert.valid and fingerprint in (None, cert.fingerprint):
                    self._certifications[i] = replace(
                        stored, certification=replace(cert, revoked_at=now)
                    )
                    revoked += 1
            return revoked

    def certifications(
        self, job: str | None, fingerprint: str | None, valid_only: bool
    ) -> list[Certification]:
        """Newest first."""
        with self._lock:
            chosen = [
                s
                for s in self._certifications
                if job in (None, s.certification.job)
                and fingerprint in (None, s.certification.fingerprint)
                and (s.certification.valid or not valid_only)
            ]
        chosen.sort(key=lambda s: (s.certification.certified_at, s.seq), reverse=True)
        return [s.certification for s in chosen]

    # -- rollouts ---------------------------------------------------------------

    def upsert_rollout(
        self, job: str, mode: RolloutMode, percent: int, who: str | None, reason: str | None = None
    ) -> Rollout:
        with self._lock:
            change = self._store(job, mode, percent, who, ChangeCause.SET, reason)
        assert change.after is not None, "a stored mode is the change's after"
        return change.after

    def delete_rollout(self, job: str, who: str | None) -> Rollout | None:
        with self._lock:
            before = self._rollouts.pop(job, None)
            if before is not None:
                change = RolloutChange(job, before, None, self.clock.now(), who, ChangeCause.UNSET)
                self._changes.append(change)
            return before

    def rollback_to_inline(self, job: str, who: str, reason: str) -> RolloutChange | None:
        with self._lock:  # one lock: several callers at once make one change between them
            before = self._rollouts.get(job)
            if before is not None and before.mode is RolloutMode.INLINE:
                return None
            return self._store(job, RolloutMode.INLINE, 0, who, ChangeCause.SLO, reason)

    def rollout_changes(self, job: str | None, limit: int = 50) -> list[RolloutChange]:
        with self._lock:
            mine = [c for c in reversed(self._changes) if job in (None, c.job)]
        return mine[:limit]

    def _store(
        self,
        job: str,
        mode: RolloutMode,
        percent: int,
        who: str | None,
        cause: ChangeCause,
        reason: str | None,
    ) -> RolloutChange:
        """Store and audit, under the caller's lock."""
        now = self.clock.now()
        before, after = self._rollouts.get(job), Rollout(job, mode, percent, now, who)
        self._rollouts[job] = after
        if before is not None:
            before = Rollout(job, before.mode, before.percent)  # the audit keeps the mode only
        change = RolloutChange(job, before, after, now, who, cause, reason)
        self._changes.append(change)
        return change

    def add_shadow(self, deltas: Sequence[ShadowDelta]) -> None:
        with self._lock:
            now = self.clock.now()
            for delta in deltas:
                _shadow.add(self._evidence, delta, now)

    def shadow_evidence(self, job: str | None = None) -> list[ShadowEvidence]:
        with self._lock:
            return _shadow.select(self._evidence, job)

    def rollouts(self) -> list[Rollout]:
        """Every stored rollout, by job name."""
        with self._lock:
            return [self._rollouts[job] for job in sorted(self._rollouts)]

    def snapshot(self) -> GateSnapshot:
        with self._lock:
            certified: dict[str, set[str]] = {}
            for stored in self._certifications:
                if stored.certification.valid:
                    cert = stored.certification
                    certified.setdefault(cert.job, set()).add(cert.fingerprint)
            frozen = {job: frozenset(prints) for job, prints in certified.items()}
            return GateSnapshot(dict(self._rollouts), frozen)

    # -- idempotency keys (the execution guard) -----------------------------------

    def begin_key(
        self, key: str, job: str, job_id: int | None, digest: str | None = None
    ) -> KeyState | None:
        return self._keys.begin_key(key, job, job_id, digest)

    def complete_key(
        self, key: str, job: str, result: Any, job_id: int | None, digest: str | None = None
    ) -> None:
        self._keys.complete_key(key, job, result, job_id, digest)

    def complete_key_in(
        self,
        conn: object,
        key: str,
        job: str,
        result: Any,
        job_id: int | None,
        digest: str | None = None,
    ) -> None:
        self._keys.complete_key_in(conn, key, job, result, job_id, digest)

    def key_state(self, key: str) -> KeyState | None:
        return self._keys.key_state(key)

    def key_counts(self, job: str) -> KeyCounts:
        return self._keys.key_counts(job)

    def purge_keys(self, older_than_seconds: float, batch: int = 10_000) -> int:
        return self._keys.purge_keys(older_than_seconds, batch)


class MemoryInspector:
    """What the tools read, answered from a :class:`MemoryJobStore` (and the presence
    records of a :class:`MemoryLeaseStore`, for ``workers()``)."""

    def __init__(self, jobs: MemoryJobStore, leases: MemoryLeaseStore | None = None) -> None:
        self._jobs = jobs
        self._leases = leases

    def close(self) -> None:
        """Nothing to release."""

    def history(self, job_ids: Sequence[int]) -> list[HistoryEntry]:
        return self._jobs.history_of(job_ids)

    def finished_count(self, job_ids: Sequence[int]) -> int:
        return len(self._jobs.history_of(job_ids))

    def unfinished_ids(self, job_ids: Sequence[int]) -> set[int]:
        return self._jobs.unfinished_of(job_ids)

    def dead_count(self) -> int:
        return self._jobs.dead_count()

    def job_health(self, job: str, window_seconds: float) -> JobHealth:
        return self._jobs.health_of(job, window_seconds)

    def revisions(self) -> list[str] | None:
        """The head revision(s) of the shipped migrations: memory always has the current schema."""
        from alembic.script import ScriptDirectory  # alembic only when asked, as migrate does

        from queue_runtime import migrations

        return list(ScriptDirectory(str(Path(migrations.__file__).parent)).get_heads())

    def missing(self, names: Sequence[str]) -> list[str]:
        """Nothing: every table and index the code expects is "there"."""
        return []

    def list_jobs(self, query: JobQuery) -> JobPage:
        hot, finished, _ = self._jobs.snapshot()
        return _inspect.list_jobs(hot, finished, query)

    def job_detail(self, job_id: int) -> JobDetail | None:
        hot, finished, replayed_as = self._jobs.snapshot()
        return _inspect.job_detail(hot, finished, replayed_as, job_id)

    def workers(self) -> list[WorkerInfo]:
        """The lease store's presence records; none without a lease store."""
        return self._leases.workers() if self._leases is not None else []
