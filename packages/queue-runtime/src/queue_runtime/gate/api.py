"""Certifications and rollout modes: the functions ``migrator gate|rollout|loadtest`` call.

Every function takes the :class:`~queue_runtime.runtime.Runtime` whose
PostgreSQL holds the tables. A change made here is seen at once by this
process (its cache is dropped) and by every other process within
``Settings.rollout_refresh`` seconds.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from queue_runtime.config import RolloutMode
from queue_runtime.errors import ConfigError
from queue_runtime.gate.model import Certification, Rollout

if TYPE_CHECKING:
    from queue_runtime.runtime import Runtime

_PERCENT = re.compile(r"^\s*(\d{1,3})\s*%?\s*$")


def certify(
    runtime: Runtime, job_name: str, fingerprint: str, figures: dict[str, Any], who: str
) -> Certification:
    """Record a passed load test of ``job_name`` at ``fingerprint`` (its code then); returns the row.

    ``figures`` is what the load test measured (JSON-ready: throughput,
    latencies, lost jobs, duplicate completions...). ``who`` names the person
    or tool that certified. The gate opens for that fingerprint only.
    """
    if not who.strip():
        raise ConfigError("a certification needs a name: who certified it")
    if not fingerprint.strip():
        raise ConfigError("a certification needs the job's fingerprint")
    row = runtime.gate_store.insert_certification(job_name, fingerprint, dict(figures), who)
    runtime.gate_cache.invalidate()
    return row


def revoke(runtime: Runtime, job_name: str, fingerprint: str | None = None) -> int:
    """Revoke the job's valid certifications (only ``fingerprint``'s if given); returns how many."""
    count = runtime.gate_store.revoke_certifications(job_name, fingerprint)
    runtime.gate_cache.invalidate()
    return count


def certification(
    runtime: Runtime, job_name: str, fingerprint: str | None = None
) -> Certification | None:
    """The newest valid (unrevoked) certification of the job, for ``fingerprint`` if given."""
    found = runtime.gate_store.certifications(job_name, fingerprint, valid_only=True)
    return found[0] if found else None


def certifications(runtime: Runtime, job_name: str | None = None) -> list[Certification]:
    """Every certification (revoked ones too), newest first; of one job if ``job_name``."""
    return runtime.gate_store.certifications(job_name, None, valid_only=False)


def parse_rollout(text: str) -> tuple[RolloutMode, int]:
    """``inline`` | ``async`` | ``25%`` (or ``25``) -> (mode, async percent)."""
    value = text.strip().lower()
    if value == RolloutMode.INLINE.value:
        return RolloutMode.INLINE, 0
    if value == RolloutMode.ASYNC.value:
        return RolloutMode.ASYNC, 100
    match = _PERCENT.match(value)
    if match is None or int(match.group(1)) > 100:
        raise ConfigError(f"rollout {text!r}: expected inline, async or a percentage like 25%")
    return RolloutMode.PERCENT, int(match.group(1))


def set_rollout(
    runtime: Runtime,
    job_name: str,
    mode: RolloutMode | str,
    percent: int | None = None,
    who: str | None = None,
) -> Rollout:
    """Store the job's rollout mode: ``inline`` (the rollback), ``percent`` with ``percent``, ``async``.

    ``mode`` may also be the text ``migrator rollout set`` takes (``"25%"``).
    """
    if isinstance(mode, str) and not isinstance(mode, RolloutMode):
        if mode.strip().lower() in {m.value for m in RolloutMode} and percent is not None:
            mode = RolloutMode(mode.strip().lower())
        else:
            mode, percent = parse_rollout(mode)
    if mode is RolloutMode.PERCENT:
        if percent is None or not 0 <= percent <= 100:
            raise ConfigError(f"rollout percent must be 0..100, not {percent!r}")
    else:
        percent = 100 if mode is RolloutMode.ASYNC else 0
    row = runtime.gate_store.upsert_rollout(job_name, mode, percent, who)
    runtime.gate_cache.invalidate()
    return row


def get_rollout(runtime: Runtime, job_name: str) -> Rollout:
    """The job's stored rollout, or the configured default (``updated_at`` None) when none is stored."""
    found = {r.job: r for r in runtime.gate_store.rollouts()}.get(job_name)
    return found or default_rollout(runtime, job_name)


def rollouts(runtime: Runtime) -> list[Rollout]:
    """Every stored rollout, by job name (jobs without one use the default)."""
    return runtime.gate_store.rollouts()


def default_rollout(runtime: Runtime, job_name: str) -> Rollout:
    mode = runtime.settings.default_rollout
    return Rollout(job_name, mode, 100 if mode is RolloutMode.ASYNC else 0)
