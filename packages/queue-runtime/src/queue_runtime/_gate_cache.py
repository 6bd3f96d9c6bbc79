"""Each process's copy of the rollout and certification tables, refreshed every few seconds.

The enqueue path reads the snapshot (two dicts) instead of querying: one
refresh (:meth:`GateStore.snapshot`) per ``Settings.rollout_refresh`` seconds
per Runtime. A change made in another process is seen within that interval;
one made in this process through :mod:`queue_runtime.gate.api` at once.

It sits below the Runtime (which owns one) and above the store protocols:
the gate's decisions read it, the gate's API invalidates it.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from queue_runtime.config import Idempotency
from queue_runtime.errors import QueueError
from queue_runtime.store import GateSnapshot, Rollout

log = logging.getLogger("queue_runtime.gate")

_NONE: frozenset[str] = frozenset()


class GateCache:
    """The last :class:`GateSnapshot`, plus per-Runtime memos of the gate's classifications."""

    def __init__(self, snapshot: Callable[[], GateSnapshot], refresh: float) -> None:
        self._snapshot = snapshot
        self._refresh = refresh
        self._lock = threading.Lock()
        self._loaded_at: float | None = None
        self._ever_loaded = False
        self._rollouts: dict[str, Rollout] = {}
        self._certified: dict[str, frozenset[str]] = {}
        # (job name, id(function)) -> effective classification (gate.decide.classification)
        self.classes: dict[tuple[str, int], Idempotency] = {}
        # job qualname -> the analyzer's verdict, read once from Settings.inventory_path
        self.inventory: dict[str, Idempotency] | None = None

    def invalidate(self) -> None:
        self._loaded_at = None

    @property
    def due(self) -> bool:
        """Whether the next read refreshes the snapshot first (a store read)."""
        loaded = self._loaded_at
        return loaded is None or time.monotonic() - loaded >= self._refresh

    def refresh_if_due(self) -> None:
        """What the next read would do first: an async caller runs it in a thread."""
        self._fresh()

    def rollout(self, job: str) -> Rollout | None:
        self._fresh()
        return self._rollouts.get(job)

    def certified(self, job: str, fingerprint: str) -> bool:
        self._fresh()
        return fingerprint in self._certified.get(job, _NONE)

    def _fresh(self) -> None:
        loaded = self._loaded_at
        if loaded is not None and time.monotonic() - loaded < self._refresh:
            return
        with self._lock:
            loaded = self._loaded_at
            if loaded is not None and time.monotonic() - loaded < self._refresh:
                return  # another thread refreshed while we waited
            self._reload()

    def _reload(self) -> None:
        try:
            snapshot = self._snapshot()
        except QueueError as exc:
            if not self._ever_loaded:
                raise
            # Keep the last snapshot rather than fail every enqueue; retried next interval.
            log.warning("gate: cannot refresh rollouts/certifications, keeping the last: %s", exc)
            self._loaded_at = time.monotonic()
            return
        self._rollouts = snapshot.rollouts
        self._certified = snapshot.certified
        self._loaded_at = time.monotonic()
        self._ever_loaded = True
