"""The gate's records and errors: certifications, rollouts, decisions.

The enumerations live in :mod:`queue_runtime.config` (settings use them) and
are re-exported from :mod:`queue_runtime.gate`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from queue_runtime.config import GateAction, Idempotency, RolloutMode
from queue_runtime.errors import ConfigError, QueueError

# Jobs with these verdicts (declared or from the inventory) run async only when certified.
GATED = frozenset({Idempotency.NON_IDEMPOTENT, Idempotency.UNSAFE})


class GateClosed(QueueError):
    """The job is gated (non_idempotent or unsafe) and holds no certification for its current code."""


class ClassificationConflict(ConfigError):
    """The job's declaration disagrees with the analyzer's verdict."""


@dataclass(frozen=True, slots=True)
class Rollout:
    """A job's rollout mode; ``percent`` is the async share (100 for async, 0 for inline)."""

    job: str
    mode: RolloutMode
    percent: int = 100
    updated_at: datetime | None = None  # None: no row stored, the configured default applies
    updated_by: str | None = None

    @property
    def label(self) -> str:
        """``inline``, ``25%`` or ``async``: what ``migrator rollout set`` takes."""
        return f"{self.percent}%" if self.mode is RolloutMode.PERCENT else self.mode.value


@dataclass(frozen=True, slots=True)
class Certification:
    """A passed load test of ``job`` at one fingerprint of its code."""

    job: str
    fingerprint: str
    certified_at: datetime
    certified_by: str
    figures: dict[str, Any] = field(default_factory=dict)
    revoked_at: datetime | None = None

    @property
    def valid(self) -> bool:
        """Not revoked (whether it matches the job's current code is the caller's question)."""
        return self.revoked_at is None


@dataclass(frozen=True, slots=True)
class Decision:
    """Where one enqueue runs: async (stored for workers) or inline, and why."""

    run_async: bool
    reason: str


__all__ = [
    "GATED",
    "Certification",
    "ClassificationConflict",
    "Decision",
    "GateAction",
    "GateClosed",
    "Idempotency",
    "Rollout",
    "RolloutMode",
]
