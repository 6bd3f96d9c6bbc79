"""The load test's execution ledger and its chaos probe: the protocols, and the memory ones.

The ledger holds one row per run of a job body (run id, job id, attempt,
idempotency key, worker pid, start, end, whether it raised): a load test's
workers write it around the real function (:class:`LedgerWriter`), and the
load test reads it to measure latency, duplicate deliveries and duplicate
completions. The :class:`ExecutionProbe` asks what chaos needs to kill a
worker at the worst moment (an execution that returned while its job is not
yet acknowledged, joined with the execution guard's keys) and ends the
sessions ("backends") of the workers by application name.

:class:`MemoryLedger` answers from any :class:`~queue_runtime.store.JobStore`
and :class:`~queue_runtime.store.KeyStore` (the in-memory ones in tests); its
sessions stand for connections: a writer opens one under its application name
on its first write, a terminated one is opened again on the next write, as the
PostgreSQL writer reconnects. :class:`~queue_runtime.testing.PgLedger`
is the same on PostgreSQL, next to the runtime's ``jobs`` and ``job_keys``.
"""

from __future__ import annotations

import itertools
import threading
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Protocol

from queue_runtime.store import JobStatus, JobStore, KeyStatus, KeyStore
from queue_runtime.testing._clock import Clock, SystemClock

__all__ = ["ExecutionLedger", "ExecutionProbe", "LedgerRow", "LedgerWriter", "MemoryLedger"]


@dataclass(frozen=True, slots=True)
class LedgerRow:
    """One run of a job body."""

    job_id: int
    attempt: int
    pid: int
    started_at: datetime
    finished_at: datetime | None
    failed: bool
    idempotency_key: str | None


class LedgerWriter(Protocol):
    """Writes one run's rows from a worker; never loses a row to a dropped connection."""

    def start(self, job_id: int, attempt: int, key: str | None, pid: int) -> int:
        """A row for a body that starts now; its entry id."""
        ...

    def finish(self, entry: int, failed: bool) -> None:
        """Stamp the entry's end, and whether the body raised."""
        ...

    def close(self) -> None:
        """Close its sessions (a worker's writer lives as long as the process)."""
        ...


class ExecutionProbe(Protocol):
    """One control session (its own application name) asking about one run's executions."""

    def returned(self, pid: int) -> int:
        """A job id of ``pid`` whose body returned, not yet acknowledged (its key, if the guard
        holds one, recorded completed); 0 when there is none."""
        ...

    def running(self, pid: int) -> int:
        """How many executions of ``pid`` are running."""
        ...

    def exposed(self, pid: int) -> int:
        """Executions of ``pid`` between their return and the guard's record of their key."""
        ...

    def active(self, application_name: str) -> bool:
        """Whether a session of ``application_name`` is running a statement now."""
        ...

    def terminate(self, prefix: str) -> int:
        """End every session (but this probe's) whose application name starts with ``prefix``;
        how many."""
        ...

    def close(self) -> None: ...


class ExecutionLedger(Protocol):
    """Where a load test's ledger lives, and the probe that reads it with the queue's state."""

    def create(self) -> None:
        """Make the ledger ready (idempotent)."""
        ...

    def writer(self, run_id: str, application_name: str) -> LedgerWriter: ...

    def read(self, run_id: str) -> list[LedgerRow]:
        """Every row of the run, in insertion order."""
        ...

    def delete_run(self, run_id: str) -> None: ...

    def probe(self, run_id: str, application_name: str) -> ExecutionProbe: ...

    def backends(self, application_name: str) -> int:
        """How many sessions are open under ``application_name``."""
        ...


@dataclass(frozen=True, slots=True)
class _Entry:
    run_id: str
    row: LedgerRow


class _Sessions:
    """Open sessions by id: what a connection under an application name is in memory."""

    def __init__(self) -> None:
        self.names: dict[int, str] = {}
        self._ids = itertools.count(1)

    def open(self, application_name: str) -> int:
        session = next(self._ids)
        self.names[session] = application_name
        return session


class MemoryLedger:
    """An :class:`ExecutionLedger` in memory, reading the state of ``jobs`` and ``keys``."""

    def __init__(
        self, jobs: JobStore, keys: KeyStore | None = None, clock: Clock | None = None
    ) -> None:
        self.jobs, self.keys = jobs, keys
        self.clock = clock or SystemClock()
        self._lock = threading.Lock()
        self._entries: dict[int, _Entry] = {}
        self._ids = itertools.count(1)
        self._sessions = _Sessions()

    def create(self) -> None:
        """Nothing to prepare in memory."""

    def writer(self, run_id: str, application_name: str) -> LedgerWriter:
        return _MemoryWriter(self, run_id, application_name)

    def read(self, run_id: str) -> list[LedgerRow]:
        with self._lock:
            return [e.row for _, e in sorted(self._entries.items()) if e.run_id == run_id]

    def delete_run(self, run_id: str) -> None:
        with self._lock:
            self._entries = {i: e for i, e in self._entries.items() if e.run_id != run_id}

    def probe(self, run_id: str, application_name: str) -> ExecutionProbe:
        with self._lock:
            session = self._sessions.open(application_name)
        return _MemoryProbe(self, run_id, session)

    def backends(self, application_name: str) -> int:
        with self._lock:
            return sum(1 for name in self._sessions.names.values() if name == application_name)

    # -- what the writers and probes share ------------------------------------------
    def _write_start(self, session: int, run_id: str, row: LedgerRow, name: str) -> tuple[int, int]:
        with self._lock:
            session = self._reconnect(session, name)
            entry = next(self._ids)
            stamped = replace(row, started_at=self.clock.now())
            self._entries[entry] = _Entry(run_id, stamped)
            return session, entry

    def _write_finish(self, session: int, entry: int, failed: bool, name: str) -> int:
        with self._lock:
            session = self._reconnect(session, name)
            found = self._entries.get(entry)
            if found is not None:
                row = replace(found.row, finished_at=self.clock.now(), failed=failed)
                self._entries[entry] = _Entry(found.run_id, row)
            return session

    def _reconnect(self, session: int, name: str) -> int:
        """The writer's session, opened again when it was never opened or was terminated."""
        return session if session in self._sessions.names else self._sessions.open(name)

    def _rows(self, run_id: str, pid: int) -> list[LedgerRow]:
        with self._lock:
            return [
                e.row for e in self._entries.values() if e.run_id == run_id and e.row.pid == pid
            ]

    def _terminate(self, prefix: str, spare: int) -> int:
        with self._lock:
            ended = [
                s
                for s, name in self._sessions.names.items()
                if name.startswith(prefix) and s != spare
            ]
            for session in ended:
                del self._sessions.names[session]
            return len(ended)

    def _close(self, session: int) -> None:
        with self._lock:
            self._sessions.names.pop(session, None)


class _MemoryWriter:
    def __init__(self, ledger: MemoryLedger, run_id: str, application_name: str) -> None:
        self._ledger, self._run_id, self._name = ledger, run_id, application_name
        self._session = 0  # opened on the first write, as a connection is

    def start(self, job_id: int, attempt: int, key: str | None, pid: int) -> int:
        row = LedgerRow(job_id, attempt, pid, datetime.min, None, False, key)
        self._session, entry = self._ledger._write_start(
            self._session, self._run_id, row, self._name
        )
        return entry

    def finish(self, entry: int, failed: bool) -> None:
        self._session = self._ledger._write_finish(self._session, entry, failed, self._name)

    def close(self) -> None:
        self._ledger._close(self._session)
        self._session = 0


class _MemoryProbe:
    def __init__(self, ledger: MemoryLedger, run_id: str, session: int) -> None:
        self._ledger, self._run_id, self._session = ledger, run_id, session

    def __enter__(self) -> _MemoryProbe:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._ledger._close(self._session)

    def _unacknowledged(self, pid: int) -> list[LedgerRow]:
        """Rows of ``pid`` whose body returned while their attempt still runs."""
        found = []
        for row in self._ledger._rows(self._run_id, pid):
            if row.finished_at is None or row.failed:
                continue
            job = self._ledger.jobs.get(row.job_id)
            if job is not None and job.status is JobStatus.RUNNING and job.attempt == row.attempt:
                found.append(row)
        return found

    def _key_state(self, row: LedgerRow) -> KeyStatus | None:
        if row.idempotency_key is None or self._ledger.keys is None:
            return None
        state = self._ledger.keys.key_state(row.idempotency_key)
        return state.state if state is not None else None

    def returned(self, pid: int) -> int:
        for row in self._unacknowledged(pid):
            if self._key_state(row) in (None, KeyStatus.COMPLETED):
                return row.job_id
        return 0

    def running(self, pid: int) -> int:
        return sum(1 for r in self._ledger._rows(self._run_id, pid) if r.finished_at is None)

    def exposed(self, pid: int) -> int:
        rows = self._unacknowledged(pid)
        return sum(1 for row in rows if self._key_state(row) is KeyStatus.IN_PROGRESS)

    def active(self, application_name: str) -> bool:
        """Never: a memory write is done under a lock before anyone can ask."""
        return False

    def terminate(self, prefix: str) -> int:
        return self._ledger._terminate(prefix, spare=self._session)
