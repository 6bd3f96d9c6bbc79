"""A Runtime on the in-memory stores: the queue without PostgreSQL or Redis.

``memory_runtime()`` gives an app's unit tests a Runtime whose stores need no
server: jobs are stored, claimed and inspected in memory. Every store shares
one clock, so a test pins time for all of them.
"""

from __future__ import annotations

from queue_runtime.config import Mode, Settings
from queue_runtime.registry import Registry
from queue_runtime.runtime import Runtime
from queue_runtime.store import Stores
from queue_runtime.testing._clock import Clock, SystemClock
from queue_runtime.testing._dashboard import MemoryDashboard
from queue_runtime.testing._memory_gate import MemoryGateStore, MemoryInspector
from queue_runtime.testing._memory_jobs import MemoryJobStore
from queue_runtime.testing._memory_leases import MemoryLeaseStore


def memory_stores(settings: Settings | None = None, clock: Clock | None = None) -> Stores:
    """The four seams and the dashboard's in memory, on one clock (the system's unless given)."""
    clock = clock or SystemClock()
    pools = list((settings or Settings()).pools)
    jobs = MemoryJobStore(pools, clock)
    leases = MemoryLeaseStore(clock)
    return Stores(
        jobs=jobs,
        gate=MemoryGateStore(clock),
        inspector=MemoryInspector(jobs, leases),
        leases=leases,
        dashboard=MemoryDashboard(jobs),
    )


def memory_runtime(
    settings: Settings | None = None,
    *,
    clock: Clock | None = None,
    registry: Registry | None = None,
) -> Runtime:
    """A Runtime in queue mode (unless ``settings`` say otherwise) on in-memory stores.

    It is not made the current Runtime: pass it where a Runtime is taken (a
    Worker, a JobHandle, the gate), or make the current one with
    ``configure(settings, stores=memory_stores(settings))`` so that
    ``job.enqueue()`` stores into memory.
    """
    settings = settings or Settings(mode=Mode.QUEUE)
    return Runtime(settings, registry=registry, stores=memory_stores(settings, clock))
