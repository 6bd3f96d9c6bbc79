"""The load test's ledger analysis on rows a worker wrote, without a server (the memory ledger)."""

from __future__ import annotations

from contextlib import closing

from migrator.loadtest.ledger import (
    duplicate_completions,
    duplicate_deliveries,
    ledger_app_name,
    read,
    worker_writer,
)
from queue_runtime.store import Completion, NewJob
from queue_runtime.testing import ManualClock, MemoryGateStore, MemoryJobStore, MemoryLedger


def test_a_body_that_ran_twice_is_one_duplicate_delivery_and_completion() -> None:
    clock = ManualClock()
    jobs = MemoryJobStore(pools=["batch"], clock=clock)
    ledger = MemoryLedger(jobs, MemoryGateStore(), clock)
    [job_id] = jobs.enqueue_many([NewJob(name="app.charge", pool="batch", args={})])
    [claimed] = jobs.claim("batch", 1, "w1")
    first = worker_writer(ledger, "run")  # as the worker's ledger app writes it
    entry = first.start(job_id, claimed.attempt, None, 10)
    clock.advance(0.2)
    first.finish(entry, failed=False)
    with closing(ledger.probe("run", "control")) as probe:
        assert probe.returned(10) == job_id  # the moment kill-workers aims at
    again = ledger.writer("run", ledger_app_name(11))
    again.finish(again.start(job_id, claimed.attempt + 1, None, 11), failed=False)
    jobs.complete_many([Completion(job_id, claimed.attempt)])
    rows = read(ledger, "run")
    assert [(e.job_id, e.attempt, e.pid) for e, _ in rows] == [(job_id, 1, 10), (job_id, 2, 11)]
    assert rows[0][0].finished_at is not None
    assert (rows[0][0].finished_at - rows[0][0].started_at).total_seconds() == 0.2
    assert duplicate_deliveries(rows) == 1
    [duplicate] = duplicate_completions(rows)
    assert (duplicate.key, duplicate.keyed, duplicate.completions) == (str(job_id), False, 2)
