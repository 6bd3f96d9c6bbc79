"""queue_runtime.testing without any server: the public API, pinned clocks, memory_runtime.

The behaviour the memory stores share with PostgreSQL and Redis is checked by
the contract suites (``tests/integration/test_*_contract.py``); here is what
only an in-memory store can show: time that stands still until moved.
"""

from __future__ import annotations

import subprocess
import sys
from datetime import timedelta

import pytest

import queue_runtime.testing as testing
from queue_runtime import JobHandle, Runtime
from queue_runtime.config import RolloutMode
from queue_runtime.errors import LeasesUnavailable
from queue_runtime.store import Completion, Failure, JobStatus, NewJob
from queue_runtime.testing import (
    ManualClock,
    MemoryGateStore,
    MemoryInspector,
    MemoryJobStore,
    MemoryLeaseStore,
    NoTransactions,
    memory_runtime,
)


def new(n: int = 0, **fields: object) -> NewJob:
    return NewJob(name="app.jobs.work", pool="batch", args={"n": n}, **fields)  # type: ignore[arg-type]


def test_public_api_is_exactly_all() -> None:
    public = {name for name in vars(testing) if not name.startswith("_")}
    modules = {"clock", "isolation", "memory_gate", "memory_jobs", "memory_leases"}
    modules |= {"private_redis", "runtime", "services", "spawner", "manual", "pytest_plugin"}
    modules |= {"server_fixtures"}
    assert public - modules == set(testing.__all__)


def test_importing_it_needs_no_pytest_and_connects_to_nothing() -> None:
    code = "import sys, queue_runtime.testing; assert 'pytest' not in sys.modules, 'pytest'"
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


def test_a_retry_is_due_when_the_pinned_clock_reaches_it() -> None:
    clock = ManualClock()
    store = MemoryJobStore(clock=clock)
    store.enqueue(new(1))
    [c] = store.claim("batch", 1, "w1")
    store.fail(Failure(c.id, c.attempt, "boom", retry_at=clock.now() + timedelta(seconds=30)))
    clock.advance(29)
    assert store.claim("batch", 1, "w1") == []
    clock.advance(1)
    assert [(j.id, j.attempt) for j in store.claim("batch", 1, "w1")] == [(c.id, 2)]


def test_running_tokens_and_retention_follow_the_clock() -> None:
    clock = ManualClock()
    store = MemoryJobStore(clock=clock)
    store.enqueue_many([new(1), new(2)])
    [first, second] = store.claim("batch", 2, "w1")
    clock.advance(10)
    assert store.running_tokens(older_than_seconds=10) == [(first.id, 1), (second.id, 1)]
    assert store.running_tokens(older_than_seconds=11) == []
    store.complete_many([Completion(first.id, 1)])
    clock.advance(3600)
    store.complete_many([Completion(second.id, 1)])
    assert store.purge_finished(older_than_seconds=60) == 1
    assert store.get(first.id) is None and store.get(second.id) is not None


def test_stats_lag_and_last_minute_on_a_pinned_clock() -> None:
    clock = ManualClock()
    store = MemoryJobStore(pools=["batch", "idle"], clock=clock)
    store.enqueue(new(1))
    store.enqueue(new(2))
    [c] = store.claim("batch", 1, "w1")
    store.complete_many([Completion(c.id, c.attempt)])
    clock.advance(5)
    stats = {s.pool: s for s in store.stats()}
    assert (stats["batch"].lag_seconds, stats["batch"].succeeded_last_minute) == (5.0, 1)
    assert stats["idle"].depth == 0  # configured pools appear even when idle
    clock.advance(60)
    assert {s.pool: s for s in store.stats()}["batch"].succeeded_last_minute == 0


def test_memory_store_joins_no_callers_transaction() -> None:
    with pytest.raises(NoTransactions):
        MemoryJobStore().enqueue(new(1), conn=object())


def test_arguments_and_results_are_stored_as_json() -> None:
    store = MemoryJobStore()
    nested = {"k": "v"}
    args = {"items": (1, 2), "nested": nested}
    job_id = store.enqueue(NewJob(name="app.jobs.work", pool="batch", args=args))
    nested["k"] = "changed after enqueue"
    found = store.get(job_id)
    assert found is not None and found.args == {"items": [1, 2], "nested": {"k": "v"}}
    with pytest.raises(TypeError):
        store.enqueue(NewJob(name="app.jobs.work", pool="batch", args={"when": object()}))


def test_leases_expire_on_the_pinned_clock_and_an_outage_raises() -> None:
    clock = ManualClock()
    leases = MemoryLeaseStore(clock)
    assert leases.acquire(["1:1"], "w1", ttl=5) == [True]
    clock.advance(4.9)
    assert leases.alive(["1:1"]) == [True]
    clock.advance(0.1)
    assert leases.alive(["1:1"]) == [False]
    leases.go_down()
    with pytest.raises(LeasesUnavailable):
        leases.ping()
    leases.go_down(False)
    assert leases.ping()


def test_memory_runtime_runs_on_the_memory_stores() -> None:
    clock = ManualClock()
    rt = memory_runtime(clock=clock)
    assert isinstance(rt, Runtime)
    assert isinstance(rt.store, MemoryJobStore) and isinstance(rt.leases, MemoryLeaseStore)
    assert isinstance(rt.gate_store, MemoryGateStore)
    assert isinstance(rt.inspector, MemoryInspector)
    job_id = rt.store.enqueue(new(3))
    handle = JobHandle(job_id, rt)
    assert handle.status() is JobStatus.QUEUED
    [c] = rt.store.claim("batch", 1, "w1")
    rt.store.complete_many([Completion(c.id, c.attempt, {"ok": True})])
    assert handle.result(timeout=1) == {"ok": True}
    assert rt.inspector.finished_count([job_id]) == 1
    rt.gate_store.upsert_rollout("app.jobs.work", RolloutMode.INLINE, 0, None)
    assert rt.gate_store.snapshot().rollouts["app.jobs.work"].updated_at == clock.now()
    rt.close()
