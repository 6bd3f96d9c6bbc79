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


def level_of(declared: Idempotency | None, verdict: Idempotency | None) -> Idempotency | None:
    """The stricter of the code's declaration and the inventory's verdict (None: neither).

    ``idempotency="unknown"`` declares that the analyzer had not decided when the job was
    moved (``migrator apply`` writes it): the verdict, once decided, is the level."""
    if declared is Idempotency.UNKNOWN:
        declared = None
    for level in (Idempotency.UNSAFE, Idempotency.NON_IDEMPOTENT):
        if level in (declared, verdict):
            return level
    return declared or verdict


def held(declared: Idempotency | None, level: Idempotency | None) -> bool:
    """Whether the job runs async only when certified: a non_idempotent or unsafe level, or a
    job declared ``unknown`` (moved before the analyzer decided) whose verdict is not yet
    ``idempotent``. A job with no declaration and no verdict is not held: the gate is for
    jobs someone classified."""
    if level in GATED:
        return True
    return declared is Idempotency.UNKNOWN and level is not Idempotency.IDEMPOTENT


class GateClosed(QueueError):
    """The job is gated (non_idempotent, unsafe, or declared unknown and still undecided) and
    holds no certification for its current code."""


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
    "held",
    "level_of",
]
