"""``configure(settings, stores=...)``: the current Runtime on the in-memory stores.

An app's unit tests enqueue through their ``@job`` functions as in production
(queue mode, the gate asked, the job stored) without PostgreSQL or Redis, and
drain the queue themselves: claim, run, complete, no worker process.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from queue_runtime import Mode, Runtime, Settings, configure, current, job
from queue_runtime import runtime as runtime_module
from queue_runtime.registry import Registry
from queue_runtime.store import Completion, JobStatus
from queue_runtime.testing import MemoryGateStore, MemoryJobStore, memory_stores

jobs = Registry()  # this module's jobs, apart from the app-wide registry


@job(name="tests.memory.add", pool="batch", registry=jobs)
def add(a: int, b: int = 0) -> int:
    return a + b


@job(name="tests.memory.shout", pool="transactional", registry=jobs)
def shout(text: str) -> str:
    return text.upper()


@pytest.fixture(name="runtime")
def memory_current(monkeypatch: pytest.MonkeyPatch) -> Iterator[Runtime]:
    monkeypatch.setattr(runtime_module, "_current", None)
    settings = Settings(mode=Mode.QUEUE)
    runtime = configure(settings, stores=memory_stores(settings))
    yield runtime
    runtime.close()


def drain(runtime: Runtime, registry: Registry, pool: str) -> int:
    """What a worker does, in the test's thread: claim, run, complete; the number run."""
    claimed = runtime.store.claim(pool, 100, "test-drain")
    done = []
    for c in claimed:
        definition = registry.definition(c.name)
        args, kwargs = definition.codec.decode(c.args)
        value = definition.fn(*args, **kwargs)
        done.append(Completion(c.id, c.attempt, definition.codec.encode_result(value)))
    return runtime.store.complete_many(done)


def test_configure_with_stores_makes_them_the_current_runtimes(runtime: Runtime) -> None:
    assert current() is runtime
    assert isinstance(runtime.store, MemoryJobStore)
    assert isinstance(runtime.gate_store, MemoryGateStore)


def test_enqueue_stores_the_job_and_a_drain_runs_it(runtime: Runtime) -> None:
    first = add.enqueue(2, b=3)
    second = add.enqueue(40, 2)
    other = shout.enqueue("hi")
    assert (first.status(), other.status()) == (JobStatus.QUEUED, JobStatus.QUEUED)
    assert drain(runtime, jobs, "batch") == 2
    assert (first.result(timeout=1), second.result(timeout=1)) == (5, 42)
    assert other.status() is JobStatus.QUEUED  # another pool: not drained yet
    assert drain(runtime, jobs, "transactional") == 1
    assert other.result(timeout=1) == "HI"


def test_keyed_and_bulk_enqueues_go_to_the_memory_store(runtime: Runtime) -> None:
    once = add.enqueue(1, idempotency_key="k-1")
    again = add.enqueue(1, idempotency_key="k-1")
    assert again.id == once.id and not again.created
    handles = add.enqueue_many([((n,), {}) for n in range(3)])
    assert drain(runtime, jobs, "batch") == 4
    assert [h.result(timeout=1) for h in handles] == [0, 1, 2]
