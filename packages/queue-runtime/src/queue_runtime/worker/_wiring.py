"""Building a worker's parts from a Runtime; the claim schedule and pool capacities."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from queue_runtime.config import Settings
from queue_runtime.errors import ConfigError, NotConfigured
from queue_runtime.metrics import WorkerMetrics
from queue_runtime.pg.connect import application_name as dsn_application_name
from queue_runtime.retry import Backoff
from queue_runtime.runtime import Runtime
from queue_runtime.store import JobStore, LeaseStore
from queue_runtime.worker._control import CancelRequests, Control
from queue_runtime.worker._dispatch import Dispatcher
from queue_runtime.worker._execute import Executor
from queue_runtime.worker._heartbeat import Heartbeat, Watchdog
from queue_runtime.worker._inflight import Inflight
from queue_runtime.worker._listen import Listener
from queue_runtime.worker._prefetch import PoolSignals, Prefetch
from queue_runtime.worker._reaper import Reaper
from queue_runtime.worker._resolve import Resolver
from queue_runtime.worker._settle import Settler
from queue_runtime.worker._slo import SloGuard


@dataclass(frozen=True, slots=True)
class WorkerOptions:
    """What a worker adds to its Runtime: which pools, how wide, who it is."""

    pools: list[str]
    concurrency: int | None
    worker_id: str
    metrics: WorkerMetrics
    stopping: threading.Event
    backoff: Backoff


def claim_schedule(settings: Settings, pools: list[str]) -> list[str]:
    """One polling round: each pool ``weight`` times, higher ``priority`` pools first.

    With the defaults (transactional: weight 4, batch: weight 1) a round makes
    four claim turns for ``transactional`` per one for ``batch``.
    """
    unknown = sorted(set(pools) - set(settings.pools))
    if unknown:
        raise ConfigError(f"unknown pool(s) {unknown}; configured: {sorted(settings.pools)}")
    ordered = sorted(pools, key=lambda p: -settings.pools[p].priority)
    return [p for p in ordered for _ in range(settings.pools[p].weight)]


def pool_capacity(settings: Settings, pools: list[str], override: int | None) -> dict[str, int]:
    """Concurrent attempts per pool: its own ``concurrency``, or the worker's override."""
    return {p: override or settings.pools[p].concurrency for p in pools}


def application_name(settings: Settings, worker_id: str) -> str:
    """The DSN's application_name when set (operators group a fleet by it), else the worker id."""
    configured = dsn_application_name(settings.database_url or "")
    return configured or f"qr-worker {worker_id}"[:63]


@dataclass
class WorkerParts:
    store: JobStore
    leases: LeaseStore
    wake: threading.Event
    signals: PoolSignals
    buffers: dict[str, Prefetch]
    inflight: Inflight
    executor: Executor
    settler: Settler
    dispatcher: Dispatcher
    heartbeat: Heartbeat
    watchdog: Watchdog
    reaper: Reaper
    listener: Listener
    control: Control = field(init=False)  # pauses and cancel requests (``_control``)

    @classmethod
    def build(cls, runtime: Runtime, worker: WorkerOptions) -> WorkerParts:
        s = runtime.settings
        leases = _lease_store(runtime)
        backoff = worker.backoff
        wake = threading.Event()
        signals = PoolSignals(worker.pools)
        buffers = {
            pool: Prefetch(pool, slots, s.claim_batch, wake.set)
            for pool, slots in pool_capacity(s, worker.pools, worker.concurrency).items()
        }
        inflight = Inflight()
        cancels = CancelRequests()
        executor = Executor(f"qr-job-{worker.worker_id}", cancels, worker.worker_id)
        settler = Settler(runtime.store, leases, worker.worker_id, worker.metrics, backoff)
        parts = (inflight, executor, settler, Resolver(runtime), worker.metrics)
        dispatcher = Dispatcher(
            s, runtime.store, leases, worker.worker_id, parts, backoff.now, worker.stopping
        )
        dispatcher.buffers, dispatcher.cancels = buffers, cancels
        loops = _loops(runtime, worker, leases, inflight, dispatcher, signals, wake)
        built = cls(
            runtime.store,
            leases,
            wake,
            signals,
            buffers,
            inflight,
            executor,
            settler,
            dispatcher,
            *loops,
        )
        built.control = Control(
            runtime.store, buffers, inflight, cancels, dispatcher.give_back, built.resumed
        )
        return built

    def resumed(self, pool: str) -> None:
        """A paused pool was resumed: it may have work, claim now."""
        self.signals.notify(pool)
        self.wake.set()

    def close(self) -> None:
        # The leases are the Runtime's: closing it closes them.
        self.executor.close()


def _loops(
    runtime: Runtime,
    worker: WorkerOptions,
    leases: LeaseStore,
    inflight: Inflight,
    dispatcher: Dispatcher,
    signals: PoolSignals,
    wake: threading.Event,
) -> tuple[Heartbeat, Watchdog, Reaper, Listener]:
    s = runtime.settings
    app_name = application_name(s, worker.worker_id)
    return (
        Heartbeat(
            leases,
            worker.worker_id,
            s.lease_ttl,
            inflight,
            worker.metrics,
            dispatcher.redis_down,
            dispatcher.buffers,
        ),
        Watchdog(inflight, dispatcher.settle),
        Reaper(
            runtime.store,
            leases,
            s.lease_ttl,
            worker.metrics,
            retention_seconds=s.history_retention_days * 86_400,
            keys=runtime.gate_store,
            key_retention_seconds=s.key_retention_days * 86_400,
            slo=SloGuard(runtime, worker.worker_id, worker.metrics),
        ),
        Listener(s, signals, set(worker.pools), wake, app_name),
    )


def _lease_store(runtime: Runtime) -> LeaseStore:
    try:
        return runtime.leases
    except NotConfigured as exc:
        raise ConfigError(
            "a worker needs redis_url (leases and tenant caps live in Redis)"
        ) from exc
