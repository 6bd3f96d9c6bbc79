"""Certifications and rollout modes: the functions ``migrator gate|rollout|loadtest`` call.

Rollout changes (set, unset, the workers' SLO rollback) are audited in the
store (:func:`rollout_history`).

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
from queue_runtime.gate._model import Certification, CertificationRefused, Rollout, RolloutChange

if TYPE_CHECKING:
    from queue_runtime.runtime import Runtime

_PERCENT = re.compile(r"^\s*(\d{1,3})\s*%?\s*$")


def certify(
    runtime: Runtime,
    job_name: str,
    fingerprint: str,
    figures: dict[str, Any],
    who: str,
    report: dict[str, Any] | None = None,
) -> Certification:
    """Record a passed load test of ``job_name`` at ``fingerprint`` (its code then); returns the row.

    ``figures`` is what the load test measured (JSON-ready: throughput,
    latencies, lost jobs, duplicate completions...) and must say
    ``"passed": true``. ``report``, when given, is the load test's whole
    report (``migrator loadtest --json``), stored with the certification: it
    must be of ``job_name`` (``job`` and ``spec.job``), at ``fingerprint``,
    and passed. The figures are the caller's word: ``migrator gate certify``
    computes the verdict again from a report's figures before calling this. ``who`` names the
    person or tool that certified. The gate opens for that fingerprint only.
    Refusals raise :class:`CertificationRefused`.
    """
    if not who.strip():
        raise ConfigError("a certification needs a name: who certified it")
    if not fingerprint.strip():
        raise ConfigError("a certification needs the job's fingerprint")
    _check_evidence(job_name, fingerprint, figures, report)
    row = runtime.gate_store.insert_certification(
        job_name, fingerprint, dict(figures), who, None if report is None else dict(report)
    )
    runtime.gate_cache.invalidate()
    return row


def _check_evidence(
    job_name: str, fingerprint: str, figures: dict[str, Any], report: dict[str, Any] | None
) -> None:
    """What the runtime can check of a load test: it passed, for this job, at this code."""
    if figures.get("passed") is not True:
        raise CertificationRefused(f"{job_name}: the figures do not say the load test passed")
    if report is None:
        return
    for field, named in _named_jobs(report):
        if named != job_name:
            raise CertificationRefused(f"the report is of {named!r} ({field}), not {job_name}")
    if report.get("fingerprint") != fingerprint:
        raise CertificationRefused(f"{job_name}: the report is of another fingerprint")
    if report.get("passed") is not True:
        raise CertificationRefused(f"{job_name}: the report's load test did not pass")


def _named_jobs(report: dict[str, Any]) -> list[tuple[str, object]]:
    """Every field of a load-test report that names its job: ``job``, and ``spec.job`` if any."""
    named: list[tuple[str, object]] = [("job", report.get("job"))]
    if "spec" in report:
        spec = report["spec"]
        named.append(("spec.job", spec.get("job") if isinstance(spec, dict) else None))
    return named


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
    reason: str | None = None,
) -> Rollout:
    """Store the job's rollout mode: ``inline`` (the rollback), ``percent`` with ``percent``, ``async``.

    ``mode`` may also be the text ``migrator rollout set`` takes (``"25%"``).
    The change is audited (:func:`rollout_history`) with ``who`` and ``reason``.
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
    row = runtime.gate_store.upsert_rollout(job_name, mode, percent, who, reason)
    runtime.gate_cache.invalidate()
    return row


def unset_rollout(runtime: Runtime, job_name: str, who: str | None = None) -> Rollout | None:
    """Remove the job's stored mode: it follows ``Settings.default_rollout`` again (audited).

    Returns the removed rollout, None when none was stored.
    """
    removed = runtime.gate_store.delete_rollout(job_name, who)
    runtime.gate_cache.invalidate()
    return removed


def slo_rollback(runtime: Runtime, job_name: str, who: str, reason: str) -> RolloutChange | None:
    """Switch the job to inline because its SLO is breached (``reason``), unless it is inline.

    None: it was inline already (another worker rolled it back first).
    """
    change = runtime.gate_store.rollback_to_inline(job_name, who, reason)
    runtime.gate_cache.invalidate()
    return change


def rollout_history(
    runtime: Runtime, job_name: str | None = None, limit: int = 50
) -> list[RolloutChange]:
    """The audited rollout changes, newest first; of one job if ``job_name``."""
    return runtime.gate_store.rollout_changes(job_name, limit)


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
