"""Shadow evidence in memory, by the rules of the ``shadow_evidence`` table (``pg/shadow.py``)."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime

from queue_runtime.shadow_model import KEPT_EXAMPLES, ShadowDelta, ShadowEvidence

Records = dict[tuple[str, str], ShadowEvidence]


def add(records: Records, delta: ShadowDelta, now: datetime) -> None:
    """Add ``delta`` to its record (created at ``now``), keeping the newest examples."""
    key = (delta.job, delta.fingerprint)
    found = records.get(key)
    if found is None:
        found = ShadowEvidence(delta.job, delta.fingerprint, 0, 0, 0, (), now, now)
    records[key] = replace(
        found,
        checked=found.checked + delta.checked,
        failed=found.failed + delta.failed,
        unencodable=found.unencodable + delta.unencodable,
        examples=(delta.examples[:KEPT_EXAMPLES] + found.examples)[:KEPT_EXAMPLES],
        last_seen=now,
    )


def select(records: Records, job: str | None) -> list[ShadowEvidence]:
    """Of ``job`` (all when None), newest seen first, then by job and fingerprint."""
    found = [e for e in records.values() if job is None or e.job == job]
    found.sort(key=lambda e: (e.job, e.fingerprint))
    found.sort(key=lambda e: e.last_seen, reverse=True)
    return found
