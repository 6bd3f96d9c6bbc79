"""Manual mode helpers: enqueued jobs wait in memory until the test runs them (Oban's ``:manual``).

Under the pytest plugin's manual mode (``@pytest.mark.queue_runtime(mode="manual")``,
or ``queue_runtime_testing = "manual"``) every enqueue is stored in the
current Runtime's :class:`MemoryJobStore` and nothing runs until the test says:

- :func:`enqueued_jobs`: what waits, oldest first (of one job if given), with
  the arguments as the job will receive them;
- :func:`assert_enqueued`: that a job was enqueued with (at least) these
  arguments; the failure lists what was enqueued instead;
- :func:`drain`: run every due job in this process, the ones they enqueue
  too, until none is left. A failure is not retried: the job goes to the
  dead-letter queue and :class:`Drained` lists it. A keyed job goes through
  the execution guard, as on a worker.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import Any

from queue_runtime._inline import InlineRun, KeyGuard, run_inline
from queue_runtime.definition import Defined
from queue_runtime.errors import ConfigError
from queue_runtime.runtime import Runtime, current
from queue_runtime.store import ClaimedJob, Completion, Failure, JobRecord, args_digest
from queue_runtime.testing._memory_jobs import MemoryJobStore

DRAINER = "pytest-drain"


class NotManual(ConfigError):
    """The manual mode's helpers read the in-memory queue: the current Runtime has none."""


@dataclass(frozen=True, slots=True)
class EnqueuedJob:
    """One job waiting in the in-memory queue."""

    id: int
    name: str
    args: dict[str, Any]  # by parameter name, as the job will receive them
    idempotency_key: str | None
    pool: str


@dataclass(frozen=True, slots=True)
class Drained:
    """What :func:`drain` ran: how many succeeded, and the jobs that failed (dead-lettered)."""

    succeeded: int
    failed: list[JobRecord] = field(default_factory=list)


def enqueued_jobs(
    job: Defined | str | None = None, runtime: Runtime | None = None
) -> list[EnqueuedJob]:
    """The jobs waiting (due or scheduled), oldest first; of ``job`` (a job or its name) if given."""
    rt = runtime or current()
    name = _name(job)
    waiting = _memory(rt).queued()
    return [_enqueued(rt, r) for r in waiting if name in (None, r.name)]


def assert_enqueued(job: Defined | str, /, **args: Any) -> EnqueuedJob:
    """The first waiting ``job`` whose arguments include ``args``; AssertionError if none."""
    found = enqueued_jobs(job)
    for candidate in found:
        if all(name in candidate.args and candidate.args[name] == v for name, v in args.items()):
            return candidate
    seen = [c.args for c in found] or "nothing"
    raise AssertionError(f"{_name(job)} was not enqueued with {args!r}; enqueued: {seen}")


def drain(runtime: Runtime | None = None, limit: int = 10_000) -> Drained:
    """Run the due jobs in this process until none is left (at most ``limit`` runs)."""
    rt = runtime or current()
    store = _memory(rt)
    succeeded, failed = 0, []
    for _ in range(limit):
        claimed = _next_due(rt, store)
        if claimed is None:
            break
        record = _run(rt, store, claimed)
        if record is None:
            succeeded += 1
        else:
            failed.append(record)
    return Drained(succeeded, failed)


def _next_due(rt: Runtime, store: MemoryJobStore) -> ClaimedJob | None:
    """One due job at a time, so the jobs a drained job enqueues are drained too."""
    pools = dict.fromkeys([*rt.settings.pools, *(r.pool for r in store.queued())])
    return next((c for pool in pools for c in store.claim(pool, 1, DRAINER)), None)


def _run(rt: Runtime, store: MemoryJobStore, claimed: ClaimedJob) -> JobRecord | None:
    """Run one claimed job; None when it succeeded, else its dead-lettered record."""
    if claimed.name not in rt.registry:
        error = f"{claimed.name} is not a registered job in this process"
        store.fail(Failure(claimed.id, claimed.attempt, error))
        return store.get(claimed.id)
    definition = rt.registry.definition(claimed.name)
    guard = None
    if claimed.idempotency_key is not None:
        guard = KeyGuard(rt, claimed.idempotency_key, args_digest(claimed.name, claimed.args))
    handle = run_inline(definition, claimed.args, InlineRun(guard=guard))
    outcome = handle.record()
    if handle.error is None:
        store.complete_many([Completion(claimed.id, claimed.attempt, outcome.result)])
        return None
    store.fail(Failure(claimed.id, claimed.attempt, outcome.error or "failed"))
    return store.get(claimed.id)


def _enqueued(rt: Runtime, record: JobRecord) -> EnqueuedJob:
    args = record.args
    if record.name in rt.registry:
        definition = rt.registry.definition(record.name)
        positional, keywords = definition.codec.decode(record.args)
        bound = inspect.signature(definition.fn).bind_partial(*positional, **keywords)
        args = dict(bound.arguments)
    return EnqueuedJob(record.id, record.name, args, record.idempotency_key, record.pool)


def _memory(rt: Runtime) -> MemoryJobStore:
    store = rt.store
    if not isinstance(store, MemoryJobStore):
        raise NotManual(
            f"{rt!r} stores jobs in {type(store).__name__}: use the pytest plugin's manual mode "
            "(@pytest.mark.queue_runtime(mode='manual')) or configure(stores=memory_stores())"
        )
    return store


def _name(job: Defined | str | None) -> str | None:
    return job if job is None or isinstance(job, str) else job.definition.name
