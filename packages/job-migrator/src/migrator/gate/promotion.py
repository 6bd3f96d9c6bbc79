"""The promotion rule: a job goes async, or to a percentage, only on clean shadow evidence.

While a moved job runs inline, the runtime counts each call's argument round
trip (``queue_runtime.shadow``) in its ``shadow_evidence`` table, per job and
code fingerprint. ``migrator rollout set J async|N%`` reads that record
through the gate store (never SQL) and refuses while it shows a failed round
trip, an unencodable fallback, or fewer than ``shadow_min_calls`` checked
calls. ``inline`` is never refused. ``--force`` passes, and the audit row of the
change says so (who, when, the numbers overridden, the reason given).

Which record counts: with ``--app`` (the app imported), the one of the job's
current code fingerprint; without it, the newest seen, i.e. the code that ran
inline most recently. Another job's record, or an older fingerprint's once the
new code has run, never counts.
"""

from __future__ import annotations

import getpass
from dataclasses import dataclass

from migrator.errors import GateError
from queue_runtime.config import RolloutMode
from queue_runtime.errors import QueueError
from queue_runtime.gate import current_fingerprint
from queue_runtime.jobs import JobFunction
from queue_runtime.registry import default_registry
from queue_runtime.runtime import Runtime
from queue_runtime.shadow_model import ShadowEvidence, current_evidence, promotion_refusal


class PromotionRefused(GateError):
    """The job's shadow evidence does not allow going async (or to a percentage) yet."""


@dataclass(frozen=True, slots=True)
class Promotion:
    """What the rule says of one job: the record it read and why it refuses (None: it allows)."""

    job: str
    evidence: ShadowEvidence | None
    refusal: str | None
    min_calls: int

    def audit(self, reason: str | None) -> str | None:
        """The audit row's reason: a forced promotion names the numbers it overrode."""
        if self.refusal is None:
            return reason
        figures = self.evidence.summary() if self.evidence else "no shadow evidence"
        why = f"; reason: {reason}" if reason else ""
        return f"forced past the shadow evidence ({figures}, {self.min_calls} needed){why}"


def evidence_of(
    runtime: Runtime, job: str, fingerprint: str | None = None
) -> ShadowEvidence | None:
    """The record the rule reads for ``job`` (of ``fingerprint`` when known)."""
    try:
        found = runtime.gate_store.shadow_evidence(job)
    except QueueError as exc:
        raise GateError(f"cannot read the shadow evidence: {exc}") from exc
    return current_evidence(found, job, fingerprint)


def promotion(runtime: Runtime, job: str, fingerprint: str | None = None) -> Promotion:
    """The rule applied to ``job``'s record (for a move to async or a percentage)."""
    evidence = evidence_of(runtime, job, fingerprint)
    needed = runtime.settings.shadow_min_calls
    return Promotion(job, evidence, promotion_refusal(evidence, job, needed), needed)


def promotions(runtime: Runtime, jobs: list[str]) -> dict[str, Promotion]:
    """The rule for each of ``jobs`` and every job with a record, from one read of the table."""
    try:
        found = runtime.gate_store.shadow_evidence()
    except QueueError as exc:
        raise GateError(f"cannot read the shadow evidence: {exc}") from exc
    needed = runtime.settings.shadow_min_calls
    out: dict[str, Promotion] = {}
    for job in sorted({*jobs, *(e.job for e in found)}):
        evidence = current_evidence(found, job)
        out[job] = Promotion(job, evidence, promotion_refusal(evidence, job, needed), needed)
    return out


def evidence_json(found: Promotion) -> dict[str, object]:
    """The record and the verdict, as ``rollout status --json`` and the plan show them."""
    e = found.evidence
    record: dict[str, object] = {"promotable": found.refusal is None, "refusal": found.refusal}
    record["min_calls"] = found.min_calls
    if e is None:
        return record | {"checked": 0, "failed": 0, "unencodable": 0, "examples": []}
    examples = [
        {"param": f.param, "type": f.type_name, "reason": f.reason, "fallback": f.fallback}
        for f in e.examples
    ]
    counts = {"checked": e.checked, "failed": e.failed, "unencodable": e.unencodable}
    seen = {"fingerprint": e.fingerprint, "last_seen": e.last_seen.isoformat()}
    return record | counts | seen | {"examples": examples}


def check_promotion(
    runtime: Runtime, job: str, mode: RolloutMode, registered: bool, force: bool
) -> Promotion | None:
    """The rule for ``rollout set job mode``: None for ``inline``; raises unless clean or forced."""
    if mode is RolloutMode.INLINE:
        return None
    fingerprint = app_fingerprint(job) if registered else None
    found = promotion(runtime, job, fingerprint)
    if found.refusal is not None and not force:
        raise PromotionRefused(found.refusal)
    return found


def app_fingerprint(job: str) -> str | None:
    """The fingerprint of the job's code as the imported app (``--app``) has it."""
    if job not in default_registry.names():
        return None
    return current_fingerprint(default_registry.get(job, JobFunction))


def forced_by(who: str | None) -> str:
    """Who forced a promotion: ``--by``, else the user running the command."""
    return who or getpass.getuser()
