"""Shadow evidence as data: what inline runs showed of a job's arguments, per code fingerprint.

While a moved job still runs inline, each call's arguments take the round trip
a queued call would take (encode, decode, encode again); :mod:`queue_runtime.shadow`
counts the outcomes and flushes them to the gate store, whose
``shadow_evidence`` table is the system of record. The promotion rule
(:func:`promotion_refusal`) reads it: a job goes async, or to a percentage,
only on a clean and long enough record of the code it runs now.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

KEPT_EXAMPLES = 5  # the newest failed round trips / fallbacks kept per job and fingerprint


@dataclass(frozen=True, slots=True)
class ShadowFailure:
    """One failed round trip or unencodable fallback: the parameter, its value's type, why."""

    param: str
    type_name: str
    reason: str
    fallback: bool = False  # True: no codec covers the value (the call ran as before)


@dataclass(frozen=True, slots=True)
class ShadowDelta:
    """Counts one process gathered since its last flush, added to the stored record."""

    job: str
    fingerprint: str
    checked: int = 0
    failed: int = 0
    unencodable: int = 0
    examples: tuple[ShadowFailure, ...] = ()  # newest first, at most KEPT_EXAMPLES


@dataclass(frozen=True, slots=True)
class ShadowEvidence:
    """The stored record of one job at one fingerprint (its code then)."""

    job: str
    fingerprint: str
    checked: int
    failed: int
    unencodable: int
    examples: tuple[ShadowFailure, ...]
    first_seen: datetime
    last_seen: datetime

    @property
    def clean(self) -> bool:
        return self.failed == 0 and self.unencodable == 0

    def summary(self) -> str:
        """``120 checked, 0 failed, 0 unencodable`` (the figures every tool shows)."""
        return f"{self.checked} checked, {self.failed} failed, {self.unencodable} unencodable"


def current_evidence(
    found: Sequence[ShadowEvidence], job: str, fingerprint: str | None = None
) -> ShadowEvidence | None:
    """The record promotion reads: of ``fingerprint`` when known, else the newest seen code's.

    Records of other jobs never count; records of older code are stale once
    the job's new code has run inline (its record is then the newest).
    """
    mine = [e for e in found if e.job == job]
    if fingerprint is not None:
        mine = [e for e in mine if e.fingerprint == fingerprint]
    return max(mine, key=lambda e: e.last_seen, default=None)


def promotion_refusal(evidence: ShadowEvidence | None, job: str, min_calls: int) -> str | None:
    """Why ``job`` may not go async or to a percentage yet (one line), None when it may.

    Refused: a failed round trip or an unencodable fallback (whatever ``min_calls``),
    or fewer than ``min_calls`` checked calls (0: no record is needed).
    """
    fix = f"run it inline (`migrator rollout set {job} inline`) until the record is clean"
    if evidence is None and min_calls == 0:  # shadow_min_calls = 0: no count is required
        return None
    if evidence is None:
        return f"{job}: no shadow evidence (0 checked calls, {min_calls} needed); {fix}"
    if evidence.failed or evidence.unencodable:
        example = evidence.examples[0] if evidence.examples else None
        why = f" (e.g. {example.param}: {example.type_name}: {example.reason})" if example else ""
        return (
            f"{job}: shadow evidence shows {evidence.failed} failed round trip(s) and "
            f"{evidence.unencodable} unencodable fallback(s){why}; fix the argument (or register "
            "a codec) and gather a clean record of the new code, or --force"
        )
    if evidence.checked < min_calls:
        return f"{job}: only {evidence.checked} of {min_calls} checked calls; {fix}, or --force"
    return None


def evidence_note(evidence: ShadowEvidence | None, job: str, min_calls: int) -> str:
    """One line for reports (``plan --check``, the dashboard): the figures and the verdict."""
    refusal = promotion_refusal(evidence, job, min_calls)
    figures = evidence.summary() if evidence else "none"
    verdict = "promotable" if refusal is None else f"not promotable: {refusal}"
    return f"shadow evidence: {figures}; {verdict}"
