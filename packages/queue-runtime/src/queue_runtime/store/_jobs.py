"""The ``JobStore`` protocol: the jobs themselves (enqueue, claim, settle, DLQ, stats).

Fencing: every claim increments ``attempt``; ``(job_id, attempt)`` is the
fencing token. ``complete`` / ``fail`` / ``retry`` only act on a row whose
state is still ``running`` with that same attempt, so a worker whose lease was
lost (and whose job was rescued and claimed again) cannot finish it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any, Protocol

from queue_runtime.errors import KeyReused
from queue_runtime.store._records import (
    Cancellation,
    ClaimedJob,
    Completion,
    Control,
    EnqueuedKey,
    Failure,
    JobRecord,
    JobStatus,
    NewJob,
    PoolStats,
)


class JobStore(Protocol):
    def enqueue(self, job: NewJob, conn: Any = None) -> int: ...
    def enqueue_many(self, jobs: Sequence[NewJob]) -> list[int]: ...
    def claim(self, pool: str, limit: int, worker_id: str) -> list[ClaimedJob]: ...
    def complete_many(self, done: list[Completion]) -> int: ...
    def fail(self, failure: Failure) -> JobStatus: ...
    def defer(self, job_id: int, attempt: int, run_at: datetime, unknown: bool = False) -> bool:
        """Back to pending at ``run_at`` without consuming an attempt (fenced by ``(id, attempt)``);
        ``unknown``: the worker has not registered its name (the first such time is kept, and
        claims report how long ago it was as ``ClaimedJob.unknown_for``)."""
        ...

    def rescue(self, tokens: list[tuple[int, int]]) -> int: ...
    def running_tokens(self, older_than_seconds: float) -> list[tuple[int, int]]: ...
    def get(self, job_id: int) -> JobRecord | None: ...
    def dead_letters(self, limit: int = 50, name: str | None = None) -> list[JobRecord]: ...
    def replay(self, job_ids: list[int]) -> list[int]: ...
    def purge_dead(self, job_ids: list[int] | None = None) -> int: ...
    def stats(self) -> list[PoolStats]: ...
    # enqueue with the "was it new?" answer (idempotency keys), cancel, history retention:
    def enqueue_returning(self, job: NewJob, conn: Any = None) -> tuple[int, bool]:
        """``(job id, created)``: created is False when the idempotency key was known.

        A known key answers only the same call: the key is stored with
        :func:`args_digest` of the job's name and arguments, and a call with
        other arguments (or another job) raises :class:`~queue_runtime.errors.KeyReused`.
        """
        ...

    def enqueue_many_returning(self, jobs: Sequence[NewJob]) -> list[tuple[int, bool]]:
        """``enqueue_many`` with each job's ``(id, created)``; keys as ``enqueue_returning``:
        a key given twice in the batch, or known, for another call raises KeyReused and
        nothing of the batch is stored."""
        ...

    def enqueued_key(self, key: str) -> EnqueuedKey | None:
        """The job an enqueue took ``key`` for and the call it names; None: no enqueue did."""
        ...

    def cancel(self, job_id: int) -> bool: ...
    def purge_finished(self, older_than_seconds: float, batch: int = 10_000) -> int: ...
    def purge_keys(self, older_than_seconds: float, batch: int = 10_000) -> int:
        """Key retention: forget enqueue keys taken longer ago than this (batched), except the
        keys of jobs still queued or running; returns how many were forgotten."""
        ...

    # cancel and pause (``queue-runtime cancel|pause|resume``), what workers poll:
    def cancel_job(self, job_id: int, by: str | None = None) -> Cancellation:
        """Cancel a job that has not started (it never runs); for a running one, record a
        cancel request its worker hands to the job's context."""
        ...

    def cancel_attempt(self, job_id: int, attempt: int, reason: str) -> bool:
        """Finish a running attempt as cancelled (fenced by ``(id, attempt)``)."""
        ...

    def pause(self, pool: str, by: str | None = None) -> bool:
        """Workers stop claiming from ``pool``; False when it was paused already."""
        ...

    def resume(self, pool: str) -> bool:
        """Workers claim from ``pool`` again; False when it was not paused."""
        ...

    def control(self, job_ids: list[int]) -> Control:
        """The paused pools and which of ``job_ids`` have a cancel request (one round trip)."""
        ...

    # periodic jobs switched off (the dashboard's /periodic), what tickers skip:
    def switch_periodic(self, job: str, enabled: bool, by: str | None, reason: str) -> bool:
        """Record a periodic job switched on or off (with who and why); False when it
        already was (nothing recorded)."""
        ...

    def disabled_periodic(self) -> frozenset[str]:
        """The periodic jobs switched off: no ticker enqueues their ticks."""
        ...

    # the async twins (``aenqueue``, ``aget_result`` of the Django backend): natively async where
    # the store has an async driver (PostgreSQL: the running loop's pool), the same answers:
    async def aenqueue_returning(self, job: NewJob) -> tuple[int, bool]:
        """``enqueue_returning`` awaited (no caller's transaction: ``conn=`` is sync only)."""
        ...

    async def aget(self, job_id: int) -> JobRecord | None:
        """``get`` awaited."""
        ...

    def close(self) -> None:
        """Release connections; idempotent (the stores of one Runtime may share them)."""
        ...


def args_digest(job: str, args: Mapping[str, Any]) -> str:
    """sha256 (hex) of the job's name and its JSON arguments: which call an idempotency key names.

    Keys sorted, so the digest is the call's, not the order its keyword
    arguments were given in.
    """
    text = json.dumps([job, args], sort_keys=True, separators=(",", ":"), allow_nan=False)
    return hashlib.sha256(text.encode()).hexdigest()


def batch_digests(jobs: Sequence[NewJob]) -> list[str | None]:
    """Each job's call digest (None without a key); KeyReused for a key the batch gives
    to two different calls (a repeat of the same call is one job, as two enqueues are)."""
    digests: list[str | None] = []
    first: dict[str, str] = {}
    for job in jobs:
        key = job.idempotency_key
        if not key:
            digests.append(None)
            continue
        digest = args_digest(job.name, job.args)
        if first.setdefault(key, digest) != digest:
            raise KeyReused(f"{key!r} is given twice in the batch, for two different calls")
        digests.append(digest)
    return digests
