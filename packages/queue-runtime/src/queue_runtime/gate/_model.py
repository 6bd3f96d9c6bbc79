"""The gate's records and errors: certifications, rollouts, decisions.

The enumerations live in :mod:`queue_runtime.config` (settings use them) and
are re-exported from :mod:`queue_runtime.gate`.
"""

from __future__ import annotations

from dataclasses import dataclass

from queue_runtime.config import GateAction, Idempotency, RolloutMode
from queue_runtime.errors import ConfigError, QueueError
from queue_runtime.store import Certification, ChangeCause, Rollout, RolloutChange

# Jobs with these verdicts (declared or from the inventory) run async only when certified.
GATED = frozenset({Idempotency.NON_IDEMPOTENT, Idempotency.UNSAFE})


class GateClosed(QueueError):
    """The job is gated (non_idempotent or unsafe) and holds no certification for its current code."""


class CertificationRefused(QueueError):
    """A certification needs a passing load test of this job at this fingerprint of its code"""


class ClassificationConflict(ConfigError):
    """The job's declaration disagrees with the analyzer's verdict."""


@dataclass(frozen=True, slots=True)
class Decision:
    """Where one enqueue runs: async (stored for workers) or inline, and why."""

    run_async: bool
    reason: str


__all__ = [
    "GATED",
    "Certification",
    "CertificationRefused",
    "ChangeCause",
    "ClassificationConflict",
    "Decision",
    "GateAction",
    "GateClosed",
    "Idempotency",
    "Rollout",
    "RolloutChange",
    "RolloutMode",
]
