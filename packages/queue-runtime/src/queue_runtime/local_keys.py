"""LocalKeys: the execution guard's keys held in this process, by the rules of ``job_keys``.

A Runtime with no database (inline mode without ``database_url``, no stores
given) keeps its keys here, so the guard holds in that mode too: a key run
again for the same call answers with the first run's result, a key run for
another call raises KeyReused. The keys last as long as the process; every
``PURGE_EVERY`` keys taken, those untouched for longer than the retention
(``key_retention_days``) are forgotten, so a long-lived process does not grow
without bound. The in-memory ``GateStore`` of :mod:`queue_runtime.testing`
keeps its keys here as well (one implementation, one contract suite).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from queue_runtime.store import KeyCounts, KeyState, KeyStatus

PURGE_EVERY = 1024


def _utc_now() -> datetime:
    return datetime.now(UTC)


class LocalKeys:
    """A :class:`~queue_runtime.store.KeyStore` in memory (thread-safe)."""

    def __init__(
        self, now: Callable[[], datetime] = _utc_now, retention_seconds: float | None = None
    ) -> None:
        self._now = now
        self._retention = retention_seconds
        self._lock = threading.Lock()
        self._keys: dict[str, KeyState] = {}
        self._taken = 0

    def close(self) -> None:
        """Nothing to release."""

    def begin_key(
        self, key: str, job: str, job_id: int | None, digest: str | None = None
    ) -> KeyState | None:
        """None: the key is this attempt's now (new, or taken over); else its state: completed,
        or taken for another call."""
        self._purge_now_and_then()
        with self._lock:
            found = self._keys.get(key)
            if found is not None and _kept(found, digest):
                return found
            owner = found.job if found is not None else job  # a taken-over key keeps its job
            kept = digest if found is None or found.args_digest is None else found.args_digest
            state = KeyState(key, owner, KeyStatus.IN_PROGRESS, None, job_id, self._now(), kept)
            self._keys[key] = state
            return None

    def complete_key(
        self, key: str, job: str, result: Any, job_id: int | None, digest: str | None = None
    ) -> None:
        """Record ``key`` completed; a completed key stays as it is, and so does another call's."""
        stored = None if result is None else json.loads(json.dumps(result))  # as a JSON column
        with self._lock:
            found = self._keys.get(key)
            if found is not None and _kept(found, digest):
                return
            owner, kept_id, kept = job, job_id, digest
            if found is not None:
                owner, kept_id = found.job, job_id if job_id is not None else found.job_id
                kept = digest if found.args_digest is None else found.args_digest
            now = self._now()
            self._keys[key] = KeyState(key, owner, KeyStatus.COMPLETED, stored, kept_id, now, kept)

    def complete_key_in(
        self,
        conn: object,
        key: str,
        job: str,
        result: Any,
        job_id: int | None,
        digest: str | None = None,
    ) -> None:
        """As :meth:`complete_key`, at once: memory has no transaction of ``conn`` to join."""
        self.complete_key(key, job, result, job_id, digest)

    def key_state(self, key: str) -> KeyState | None:
        with self._lock:
            return self._keys.get(key)

    def key_counts(self, job: str) -> KeyCounts:
        with self._lock:
            mine = [k for k in self._keys.values() if k.job == job]
        completed = sum(1 for k in mine if k.state is KeyStatus.COMPLETED)
        return KeyCounts(completed=completed, total=len(mine))

    def purge_keys(self, older_than_seconds: float, batch: int = 10_000) -> int:
        """Forget keys not touched since the cutoff (``batch`` bounds PostgreSQL's deletes)."""
        with self._lock:
            cutoff = self._now() - timedelta(seconds=older_than_seconds)
            gone = [k for k, s in self._keys.items() if s.updated_at and s.updated_at <= cutoff]
            for key in gone:
                del self._keys[key]
            return len(gone)

    def _purge_now_and_then(self) -> None:
        if self._retention is None:
            return
        self._taken += 1  # a lost increment between threads only delays a purge
        if self._taken % PURGE_EVERY == 0:
            self.purge_keys(self._retention)


def _kept(found: KeyState, digest: str | None) -> bool:
    """A stored key this attempt may not take: completed, or taken for another call."""
    return found.state is KeyStatus.COMPLETED or found.names_other_call(digest)
