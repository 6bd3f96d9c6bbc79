"""The jobs a worker is running: deadlines, who may settle each attempt.

Slots are the pools' executor threads (``_execute``); this table only tracks
what runs. An entry lives from the moment its job starts until its thread returns. Its
outcome is *settled* once: by the job finishing, or earlier by the timeout
watchdog (a sync job cannot be killed; its thread keeps its slot until it
returns, and whatever it returns later is ignored here and fenced out by the
store, since the attempt is no longer ``running``).
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

from queue_runtime.config import RetryPolicy
from queue_runtime.store import ClaimedJob


@dataclass(eq=False)
class Running:
    job: ClaimedJob
    deadline: float | None  # monotonic; None: enforced elsewhere (async wait_for)
    timeout: float
    policy: RetryPolicy
    tenant_held: bool = False
    settled: bool = False
    lost: bool = False  # the heartbeat found another worker holding the token
    started_at: float = field(default_factory=time.monotonic)

    @property
    def token(self) -> str:
        return self.job.token


class Inflight:
    """Thread-safe table of running attempts."""

    def __init__(self) -> None:
        self._entries: dict[str, Running] = {}
        self._lock = threading.Lock()
        self._idle = threading.Condition(self._lock)

    def add(self, running: Running) -> None:
        with self._lock:
            self._entries[running.token] = running

    def claim_settlement(self, running: Running) -> bool:
        """True exactly once per attempt: the caller owns reporting its outcome."""
        with self._lock:
            if running.settled:
                return False
            running.settled = True
            self._idle.notify_all()
            return True

    def remove(self, running: Running) -> None:
        with self._lock:
            self._entries.pop(running.token, None)
            self._idle.notify_all()

    def unsettled(self) -> list[Running]:
        with self._lock:
            return [r for r in self._entries.values() if not r.settled]

    def overdue(self, now: float) -> list[Running]:
        with self._lock:
            return [
                r
                for r in self._entries.values()
                if not r.settled and r.deadline is not None and r.deadline <= now
            ]

    def wait_empty(self, timeout: float) -> bool:
        """Block until no attempt is unsettled, or ``timeout``; True when drained."""
        deadline = time.monotonic() + timeout
        with self._lock:
            while any(not r.settled for r in self._entries.values()):
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._idle.wait(left)
            return True

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)
