"""Key retention: the worker's reaper forgets idempotency keys past ``key_retention_days``.

Real PostgreSQL (a fresh schema per test), the reaper driven by hand with a
pinned clock. After expiry a key names a new call: the same key with other
arguments is a new job, and a run of the guard's key runs the body again.
"""

from __future__ import annotations

import pytest

from queue_runtime import job
from queue_runtime.errors import KeyReused
from queue_runtime.gate import key_state
from queue_runtime.gate._guard import run_guarded
from queue_runtime.metrics import WorkerMetrics
from queue_runtime.registry import Registry
from queue_runtime.runtime import Runtime
from queue_runtime.store import Completion
from queue_runtime.worker._reaper import Reaper

pytestmark = [pytest.mark.pg]

jobs = Registry()


@job(name="tests.keys.add", registry=jobs)
def add(a: int, b: int) -> int:
    return a + b


def _reaper(runtime: Runtime, key_retention: float) -> Reaper:
    return Reaper(
        runtime.store,
        runtime.leases,
        ttl=0.2,
        metrics=WorkerMetrics(),
        clock=lambda: 0.0,
        key_retention_seconds=key_retention,
        keys=runtime.gate_store,
    )


def test_the_reaper_expires_enqueue_and_guard_keys(runtime: Runtime) -> None:
    first = add.enqueue(1, 2, idempotency_key="k")
    with pytest.raises(KeyReused):
        add.enqueue(1, 3, idempotency_key="k")
    (claimed,) = runtime.store.claim("batch", 10, "w-test")
    runtime.store.complete_many([Completion(claimed.id, claimed.attempt, result=3)])
    assert run_guarded(runtime, add, "g", None, lambda: 3, "digest-a") == 3
    assert _reaper(runtime, key_retention=3600).expire_keys() == 0  # younger than an hour

    assert _reaper(runtime, key_retention=0).expire_keys() == 2  # enqueue key + guard key
    again = add.enqueue(1, 3, idempotency_key="k")  # an expired key names a new call
    assert again.created and again.id != first.id
    assert key_state(runtime, "g") is None
    assert run_guarded(runtime, add, "g", None, lambda: 4, "digest-b") == 4  # runs again


def test_retain_expires_keys_on_its_schedule(runtime: Runtime) -> None:
    add.enqueue(5, 5, idempotency_key="sched")
    (claimed,) = runtime.store.claim("batch", 10, "w-test")
    runtime.store.complete_many([Completion(claimed.id, claimed.attempt, result=10)])
    assert _reaper(runtime, key_retention=0).retain() == 0  # no history retention configured
    assert add.enqueue(5, 6, idempotency_key="sched").created
