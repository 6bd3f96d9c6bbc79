"""The gate, rollout modes and the execution guard.

- **Gate**: a job classified ``non_idempotent`` or ``unsafe`` (declared in
  code or by the analyzer's inventory) runs async only with a valid
  certification for its current code (:func:`fingerprint`); until then
  enqueue runs it inline as before, or raises :class:`GateClosed`
  (``Settings.gate_action``).
- **Rollout modes** per job, stored in PostgreSQL and cached per process for
  ``Settings.rollout_refresh`` seconds: ``inline``, ``percent``, ``async``.
  Setting ``inline`` is the rollback. Rollout never bypasses the gate. Every
  change is audited (:func:`rollout_history`); a job whose SLO
  (``[tool.queue_runtime.jobs."NAME"] slo``) is breached is rolled back to
  inline by the workers (:func:`slo_breach`, :func:`slo_rollback`).
- **Execution guard** (:mod:`queue_runtime.gate._guard`): a keyed job's
  completion is recorded in ``job_keys``; a redelivery returns the stored
  result instead of running the function again.

::

    from queue_runtime.gate import certify, fingerprint, gate_decision, set_rollout

    cert = certify(runtime, "app.jobs.charge", fingerprint(charge), figures, who="loadtest")
    set_rollout(runtime, "app.jobs.charge", "25%", who="alice")
    gate_decision(runtime, charge)   # Decision(run_async=..., reason=...)
"""

from queue_runtime.config import GateAction, Idempotency, RolloutMode
from queue_runtime.gate._decide import classification, current_fingerprint, gate_decision, is_gated
from queue_runtime.gate._guard import complete_in, key_state
from queue_runtime.gate._metrics import gate_inline_counts
from queue_runtime.gate._model import (
    Certification,
    ChangeCause,
    ClassificationConflict,
    Decision,
    GateClosed,
    Rollout,
    RolloutChange,
)
from queue_runtime.gate._slo import slo_breach
from queue_runtime.gate.api import (
    certification,
    certifications,
    certify,
    get_rollout,
    parse_rollout,
    revoke,
    rollout_history,
    rollouts,
    set_rollout,
    slo_rollback,
    unset_rollout,
)
from queue_runtime.gate.fingerprint import fingerprint

__all__ = [
    "Certification",
    "ChangeCause",
    "ClassificationConflict",
    "Decision",
    "GateAction",
    "GateClosed",
    "Idempotency",
    "Rollout",
    "RolloutChange",
    "RolloutMode",
    "certification",
    "certifications",
    "certify",
    "classification",
    "complete_in",
    "current_fingerprint",
    "fingerprint",
    "gate_decision",
    "gate_inline_counts",
    "get_rollout",
    "is_gated",
    "key_state",
    "parse_rollout",
    "revoke",
    "rollout_history",
    "rollouts",
    "set_rollout",
    "slo_breach",
    "slo_rollback",
    "unset_rollout",
]
