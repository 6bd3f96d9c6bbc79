"""Whether a job's recent health breaches its SLO (``[tool.queue_runtime.jobs."NAME"] slo``).

Pure: the workers' reaper reads the health (:meth:`Inspector.job_health`) and,
on a breach, calls :func:`queue_runtime.gate.slo_rollback` with the reason
given here, which the audit keeps.
"""

from __future__ import annotations

from queue_runtime.config import SloPolicy
from queue_runtime.store import JobHealth


def slo_breach(policy: SloPolicy, health: JobHealth) -> str | None:
    """Why ``health`` breaches ``policy``, in one line; None when it holds."""
    window = f"over {policy.window_seconds:g}s"
    rate = policy.max_failure_rate
    if rate is not None and health.attempts >= policy.min_attempts and health.failure_rate > rate:
        return (
            f"failure rate {health.failure_rate:.2f} > {rate:g}"
            f" ({health.failed_attempts} of {health.attempts} attempts failed {window})"
        )
    if policy.max_dead is not None and health.dead > policy.max_dead:
        return f"{health.dead} dead letters > {policy.max_dead} {window}"
    lag = policy.max_lag_seconds
    if lag is not None and health.lag_seconds > lag:
        return f"lag {health.lag_seconds:.0f}s > {lag:g}s"
    return None
