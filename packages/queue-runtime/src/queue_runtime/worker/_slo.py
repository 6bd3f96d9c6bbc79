"""The SLO check: a job whose recent health breaches its SLO is rolled back to inline.

Run by the reaper every round. Every worker checks, and several may find the
same breach at once: :meth:`GateStore.rollback_to_inline` makes one change
between them (a lock per job in PostgreSQL), and only the worker whose call
made it logs the line and counts ``queue_runtime_slo_rollbacks_total{job}``.
A job already inline (stored, or by default) is not judged: there is nothing
to roll back, and going forward again is an operator's ``rollout set``.
"""

from __future__ import annotations

import logging

from queue_runtime.config import RolloutMode, SloPolicy
from queue_runtime.gate._slo import slo_breach
from queue_runtime.gate.api import slo_rollback
from queue_runtime.metrics import WorkerMetrics
from queue_runtime.runtime import Runtime
from queue_runtime.store import RolloutChange

log = logging.getLogger("queue_runtime.worker")


class SloGuard:
    def __init__(self, runtime: Runtime, worker_id: str, metrics: WorkerMetrics) -> None:
        self._runtime, self._metrics = runtime, metrics
        self._who = f"slo:{worker_id}"
        self.policies = {
            name: config.slo for name, config in runtime.settings.jobs.items() if config.slo
        }

    def check(self) -> list[RolloutChange]:
        """One round over every job with an SLO; the rollbacks this worker made."""
        made = []
        for name, policy in self.policies.items():
            change = self._judge(name, policy)
            if change is not None:
                made.append(change)
        return made

    def _judge(self, name: str, policy: SloPolicy) -> RolloutChange | None:
        if self._inline(name):
            return None
        health = self._runtime.inspector.job_health(name, policy.window_seconds)
        reason = slo_breach(policy, health)
        if reason is None:
            return None
        change = slo_rollback(self._runtime, name, self._who, reason)
        if change is not None:
            log.warning("SLO breach: %s rolled back to inline: %s", name, reason)
            self._metrics.slo_rollbacks.labels(name).inc()
        return change

    def _inline(self, name: str) -> bool:
        rollout = self._runtime.gate_cache.rollout(name)
        mode = rollout.mode if rollout else self._runtime.settings.default_rollout
        return mode is RolloutMode.INLINE
