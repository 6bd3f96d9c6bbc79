"""Pause and cancel inside a worker, without servers: the control poll on the memory store,
the prefetch buffer of a paused pool, the job's context, the outcome of a stopped attempt."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from queue_runtime.config import RetryPolicy, Settings
from queue_runtime.errors import JobCancelled
from queue_runtime.jobs import JobFunction
from queue_runtime.metrics import WorkerMetrics
from queue_runtime.retry import Backoff
from queue_runtime.store import ClaimedJob, JobStatus, NewJob
from queue_runtime.testing import MemoryJobStore, MemoryLeaseStore
from queue_runtime.worker import current_context
from queue_runtime.worker._context import JobContext, set_current
from queue_runtime.worker._control import CancelRequests, Control
from queue_runtime.worker._execute import Executor
from queue_runtime.worker._inflight import Inflight
from queue_runtime.worker._outcome import Outcome, OutcomeKind
from queue_runtime.worker._prefetch import Prefetch
from queue_runtime.worker._resolve import Invocation
from queue_runtime.worker._settle import Settlement, Settler


def claimed(store: MemoryJobStore, n: int) -> list[ClaimedJob]:
    for i in range(n):
        store.enqueue(NewJob("app.jobs.work", "batch", {"n": i}))
    return store.claim("batch", n, "w1")


def control_for(
    store: MemoryJobStore, buffer: Prefetch
) -> tuple[Control, list[ClaimedJob], list[str]]:
    given_back: list[ClaimedJob] = []
    resumed: list[str] = []
    control = Control(
        store, {"batch": buffer}, Inflight(), CancelRequests(), given_back.extend, resumed.append
    )
    return control, given_back, resumed


def test_a_paused_pool_wants_nothing_takes_nothing_and_hands_its_buffer_back() -> None:
    store = MemoryJobStore(pools=list(Settings().pools))
    buffer = Prefetch("batch", slots=2, claim_batch=8, wake=lambda: None)
    jobs = claimed(store, 3)
    assert buffer.put(jobs) and buffer.wanted() == 0  # full: nothing wanted anyway
    control, given_back, resumed = control_for(store, buffer)

    store.pause("batch")
    control.poll()
    assert control.paused == {"batch"} and given_back == jobs and len(buffer) == 0
    assert buffer.wanted() == 0 and buffer.put(jobs[:1]) is False  # a late claim goes back
    control.poll()
    assert given_back == jobs  # paused once, handed back once

    store.resume("batch")
    control.poll()
    assert control.paused == frozenset() and resumed == ["batch"]
    assert buffer.wanted() == 2 and buffer.put(jobs[:1]) is True


def test_pauses_of_pools_this_worker_does_not_serve_are_ignored() -> None:
    store = MemoryJobStore(pools=list(Settings().pools))
    buffer = Prefetch("batch", slots=1, claim_batch=8, wake=lambda: None)
    control, _, _ = control_for(store, buffer)
    store.pause("transactional")
    control.poll()
    assert control.paused == frozenset() and buffer.wanted() == 1


def test_the_poll_publishes_cancel_requests_of_held_jobs_only() -> None:
    store = MemoryJobStore(pools=list(Settings().pools))
    buffer = Prefetch("batch", slots=1, claim_batch=8, wake=lambda: None)
    first, second = claimed(store, 2)
    buffer.put([first, second])
    control, _, _ = control_for(store, buffer)
    store.cancel_job(first.id)
    control.poll()
    assert control.cancels.requested(first.id) and not control.cancels.requested(second.id)
    buffer.drain()  # no longer held here: the next poll forgets it
    control.poll()
    assert not control.cancels.requested(first.id)


def test_the_context_reports_the_request_and_raises_job_cancelled() -> None:
    store = MemoryJobStore(pools=list(Settings().pools))
    [job] = claimed(store, 1)
    cancels = CancelRequests()
    context = JobContext(job, cancels)
    assert not context.cancel_requested
    context.raise_if_cancelled()  # nothing requested: no-op
    assert cancels.update(frozenset({job.id})) == {job.id}
    assert context.cancel_requested
    with pytest.raises(JobCancelled, match=f"job {job.id} stopped on its cancel request"):
        context.raise_if_cancelled()


def test_outside_a_worker_the_context_has_no_job_and_is_never_cancelled() -> None:
    set_current(None)
    context = current_context()
    assert context.job is None and not context.cancel_requested
    context.raise_if_cancelled()


def _stops_when_asked(n: int) -> str:
    current_context().raise_if_cancelled()
    return "ran"


async def _stops_when_asked_async(n: int) -> str:
    current_context().raise_if_cancelled()
    return "ran"


@pytest.mark.parametrize("func", [_stops_when_asked, _stops_when_asked_async])
def test_an_attempt_that_raises_job_cancelled_ends_cancelled_and_is_stored_so(
    func: Callable[[int], Any],
) -> None:
    store = MemoryJobStore(pools=list(Settings().pools))
    first, second = claimed(store, 2)
    cancels = CancelRequests()
    cancels.update(frozenset({first.id}))
    executor = Executor("test", cancels)
    function = JobFunction(func, "app.jobs.work", "batch")
    outcomes: list[Outcome] = []
    try:
        for job in (first, second):
            inv = Invocation(job, function, function.spec(Settings()), [job.id], {})
            executor.run(inv, outcomes.append)
    finally:
        executor.close()
    assert [o.kind for o in outcomes] == [OutcomeKind.CANCELLED, OutcomeKind.SUCCEEDED]

    settler = Settler(store, MemoryLeaseStore(), "w1", WorkerMetrics(), Backoff())
    settler.start()
    settler.submit(Settlement(first, outcomes[0], RetryPolicy(), False))
    settler.close(timeout=5)
    record = store.get(first.id)
    assert record is not None and record.status is JobStatus.CANCELLED
    assert record.error == f"The job was cancelled: job {first.id} stopped on its cancel request"
    assert record.attempt == 1 and store.dead_letters() == []
