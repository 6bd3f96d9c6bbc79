"""Each process's copy of the rollout and certification tables, refreshed every few seconds.

The enqueue path reads the snapshot (a dict and a set) instead of querying:
one refresh (two SELECTs) per ``Settings.rollout_refresh`` seconds per
Runtime. A change made in another process is seen within that interval; one
made in this process through :mod:`queue_runtime.gate.api` at once.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import TYPE_CHECKING

from queue_runtime.config import Idempotency
from queue_runtime.errors import QueueError
from queue_runtime.gate import store
from queue_runtime.gate.model import Rollout

if TYPE_CHECKING:
    from queue_runtime.runtime import Runtime

log = logging.getLogger("queue_runtime.gate")


class GateCache:
    def __init__(self, runtime: Runtime) -> None:
        self._runtime = runtime
        self._lock = threading.Lock()
        self._loaded_at: float | None = None
        self._ever_loaded = False
        self.classes: dict[tuple[str, int], Idempotency] = {}  # see decide.classification
        self._rollouts: dict[str, Rollout] = {}
        self._certified: frozenset[tuple[str, str]] = frozenset()

    def invalidate(self) -> None:
        self._loaded_at = None

    def rollout(self, job: str) -> Rollout | None:
        self._fresh()
        return self._rollouts.get(job)

    def certified(self, job: str, fingerprint: str) -> bool:
        self._fresh()
        return (job, fingerprint) in self._certified

    def _fresh(self) -> None:
        loaded = self._loaded_at
        if (
            loaded is not None
            and time.monotonic() - loaded < self._runtime.settings.rollout_refresh
        ):
            return
        with self._lock:
            loaded = self._loaded_at
            if (
                loaded is not None
                and time.monotonic() - loaded < self._runtime.settings.rollout_refresh
            ):
                return  # another thread refreshed while we waited
            try:
                rollouts, certified = store.snapshot(self._runtime)
            except QueueError as exc:
                if not self._ever_loaded:
                    raise
                # Keep the last snapshot rather than fail every enqueue; retried next interval.
                log.warning(
                    "gate: cannot refresh rollouts/certifications, keeping the last: %s", exc
                )
                self._loaded_at = time.monotonic()
                return
            self._rollouts = {r.job: r for r in rollouts}
            self._certified = frozenset(certified)
            self._loaded_at = time.monotonic()
            self._ever_loaded = True


def gate_cache(runtime: Runtime) -> GateCache:
    """The Runtime's cache (one per Runtime, created on first use)."""
    found = runtime._parts.get("gate_cache")  # enqueue's fast path: no lock once created
    if found is not None:
        return found
    return runtime._lazy("gate_cache", lambda: GateCache(runtime))
