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
from queue_runtime.store import (
    Certification,
    GateSnapshot,
    HistoryEntry,
    KeyCounts,
    KeyState,
    KeyStatus,
    Rollout,
)
from queue_runtime.testing._rows import json_copy
from queue_runtime.testing.clock import Clock, SystemClock
from queue_runtime.testing.memory_jobs import MemoryJobStore


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
        self._keys: dict[str, KeyState] = {}

    def close(self) -> None:
        """Nothing to release."""

    # -- certifications -------------------------------------------------------

    def insert_certification(
        self, job: str, fingerprint: str, figures: dict[str, Any], who: str
    ) -> Certification:
        with self._lock:
            made = Certification(job, fingerprint, self.clock.now(), who, json_copy(figures))
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

    def upsert_rollout(self, job: str, mode: RolloutMode, percent: int, who: str | None) -> Rollout:
        with self._lock:
            stored = Rollout(job, mode, percent, self.clock.now(), who)
            self._rollouts[job] = stored
            return stored

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

    def begin_key(self, key: str, job: str, job_id: int | None) -> KeyState | None:
        """None: the key is this attempt's now (new, or taken over); else its completed state."""
        with self._lock:
            found = self._keys.get(key)
            if found is not None and found.state is KeyStatus.COMPLETED:
                return found
            owner = found.job if found is not None else job  # a taken-over key keeps its job
            now = self.clock.now()
            self._keys[key] = KeyState(key, owner, KeyStatus.IN_PROGRESS, None, job_id, now)
            return None

    def complete_key(self, key: str, job: str, result: Any, job_id: int | None) -> None:
        """Record ``key`` completed; a completed key stays as it is."""
        with self._lock:
            found = self._keys.get(key)
            if found is not None and found.state is KeyStatus.COMPLETED:
                return
            owner, kept_id = job, job_id
            if found is not None:
                owner, kept_id = found.job, job_id if job_id is not None else found.job_id
            state = KeyState(
                key, owner, KeyStatus.COMPLETED, json_copy(result), kept_id, self.clock.now()
            )
            self._keys[key] = state

    def complete_key_in(
        self, conn: object, key: str, job: str, result: Any, job_id: int | None
    ) -> None:
        """As :meth:`complete_key`, at once: memory has no transaction of ``conn`` to join."""
        self.complete_key(key, job, result, job_id)

    def key_state(self, key: str) -> KeyState | None:
        with self._lock:
            return self._keys.get(key)

    def key_counts(self, job: str) -> KeyCounts:
        with self._lock:
            mine = [k for k in self._keys.values() if k.job == job]
        completed = sum(1 for k in mine if k.state is KeyStatus.COMPLETED)
        return KeyCounts(completed=completed, total=len(mine))


class MemoryInspector:
    """What the tools read, answered from a :class:`MemoryJobStore`."""

    def __init__(self, jobs: MemoryJobStore) -> None:
        self._jobs = jobs

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

    def revisions(self) -> list[str] | None:
        """The head revision(s) of the shipped migrations: memory always has the current schema."""
        from alembic.script import ScriptDirectory  # alembic only when asked, as migrate does

        from queue_runtime import migrations

        return list(ScriptDirectory(str(Path(migrations.__file__).parent)).get_heads())

    def missing(self, names: Sequence[str]) -> list[str]:
        """Nothing: every table and index the code expects is "there"."""
        return []
