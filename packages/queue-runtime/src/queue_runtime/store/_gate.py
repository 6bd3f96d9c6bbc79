"""The ``KeyStore`` and ``GateStore`` protocols: the execution guard's keys, certifications,
rollouts and shadow evidence."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from queue_runtime.config import RolloutMode
from queue_runtime.shadow_model import ShadowDelta, ShadowEvidence
from queue_runtime.store._records import (
    Certification,
    GateSnapshot,
    KeyCounts,
    KeyState,
    Rollout,
    RolloutChange,
)


class KeyStore(Protocol):
    """The execution guard's keys (``job_keys``): what :mod:`queue_runtime.gate._guard` uses.

    A ``GateStore`` is one; a Runtime without a database keeps them in process
    (:class:`queue_runtime.local_keys.LocalKeys`).
    """

    def begin_key(
        self, key: str, job: str, job_id: int | None, digest: str | None = None
    ) -> KeyState | None:
        """Take ``key`` for this attempt of the call ``digest`` names (:func:`args_digest`).

        None: the key is this attempt's now (new, or a previous attempt's that
        died: taken over), run the job. A ``KeyState``: the key is not taken:
        it completed (its stored result answers the attempt), or it names
        another call (``names_other_call(digest)``). A ``digest`` of None
        matches any call (a caller that has none).
        """
        ...

    def complete_key(
        self, key: str, job: str, result: Any, job_id: int | None, digest: str | None = None
    ) -> None:
        """Record ``key`` completed with ``result`` (JSON-ready); a completed key stays as it is,
        and so does a key that names another call."""
        ...

    def complete_key_in(
        self,
        conn: object,
        key: str,
        job: str,
        result: Any,
        job_id: int | None,
        digest: str | None = None,
    ) -> None:
        """As ``complete_key``, inside the caller's transaction on ``conn`` (its own connection)."""
        ...

    def key_state(self, key: str) -> KeyState | None: ...


class GateStore(KeyStore, Protocol):
    """Certifications, rollouts, idempotency keys: what the gate and the guard store."""

    def insert_certification(
        self,
        job: str,
        fingerprint: str,
        figures: dict[str, Any],
        who: str,
        report: dict[str, Any] | None = None,
    ) -> Certification: ...
    def revoke_certifications(self, job: str, fingerprint: str | None) -> int: ...
    def certifications(
        self, job: str | None, fingerprint: str | None, valid_only: bool
    ) -> list[Certification]:
        """Newest first."""
        ...

    def upsert_rollout(
        self, job: str, mode: RolloutMode, percent: int, who: str | None, reason: str | None = None
    ) -> Rollout:
        """Store the job's mode and audit the change (one transaction)."""
        ...

    def delete_rollout(self, job: str, who: str | None) -> Rollout | None:
        """Remove the job's stored mode (audited when there was one); the removed row."""
        ...

    def rollback_to_inline(self, job: str, who: str, reason: str) -> RolloutChange | None:
        """Set ``inline`` unless it is stored already, audited as an SLO rollback.

        None: the job was inline already (another worker won the race). Several
        callers at once make one change between them.
        """
        ...

    def rollout_changes(self, job: str | None, limit: int = 50) -> list[RolloutChange]:
        """The audit, newest first; of one job if ``job``."""
        ...

    def rollouts(self) -> list[Rollout]:
        """Every stored rollout, by job name."""
        ...

    def snapshot(self) -> GateSnapshot: ...
    def key_counts(self, job: str) -> KeyCounts: ...
    def purge_keys(self, older_than_seconds: float, batch: int = 10_000) -> int:
        """Key retention: forget keys not touched (taken, completed) for this long, in batches;
        returns how many were forgotten."""
        ...

    def add_shadow(self, deltas: Sequence[ShadowDelta]) -> None:
        """Add each delta's counts to its (job, fingerprint) record, keeping the newest examples.

        Additive: processes flushing the same record at once lose no count.
        """
        ...

    def shadow_evidence(self, job: str | None = None) -> list[ShadowEvidence]:
        """The shadow evidence records (of one job if ``job``), newest seen first."""
        ...

    def close(self) -> None: ...
