"""``migrator gate`` and ``migrator rollout`` as library calls: certifications and rollout modes.

:mod:`~migrator.gate.service` holds one call per command (a :class:`QueueTarget`
and the command's arguments in, a typed outcome out); underneath,
:mod:`~migrator.gate.certification` (gate status, certify, revoke),
:mod:`~migrator.gate.rollouts` (set, unset, status, history, which jobs are known),
:mod:`~migrator.gate.promotion` (the shadow-evidence rule for going async) and
:mod:`~migrator.gate.app` (the runtime and the ``--app`` module).
"""

from migrator.gate.app import QueueTarget, load_app, open_runtime, opened
from migrator.gate.certification import GateRow
from migrator.gate.promotion import Promotion, PromotionRefused, evidence_json
from migrator.gate.rollouts import KnownJobs, StatusRow
from migrator.gate.service import (
    RolloutOverview,
    RolloutRequest,
    RolloutSet,
    RolloutUnset,
    certify_with_report,
    revoke_certifications,
    rollout_changes,
    rollout_overview,
    set_rollout_mode,
    show_gate,
    unset_rollout_mode,
)

__all__ = [
    "GateRow",
    "KnownJobs",
    "Promotion",
    "PromotionRefused",
    "QueueTarget",
    "RolloutOverview",
    "RolloutRequest",
    "RolloutSet",
    "RolloutUnset",
    "StatusRow",
    "certify_with_report",
    "evidence_json",
    "load_app",
    "open_runtime",
    "opened",
    "revoke_certifications",
    "rollout_changes",
    "rollout_overview",
    "set_rollout_mode",
    "show_gate",
    "unset_rollout_mode",
]
