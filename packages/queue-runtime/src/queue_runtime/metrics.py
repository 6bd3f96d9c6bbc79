"""Prometheus metrics of one worker, on a registry of its own.

Every metric is labelled by ``pool``, but ``queue_runtime_slo_rollbacks_total``
by ``job``. Counters are updated by the worker as
things happen; the gauges that describe the queue as a whole (depth, lag, DLQ
depth) are refreshed from ``JobStore.stats()`` by :meth:`WorkerMetrics.observe_stats`.
``consumer_throughput`` is jobs completed per second over the last minute,
computed from this worker's own completions.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable

try:
    from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, start_http_server
except ImportError:  # the optional extra is not installed: count in-process only
    from queue_runtime._prometheus import FallbackCounter as Counter  # type: ignore[assignment]
    from queue_runtime._prometheus import FallbackGauge as Gauge  # type: ignore[assignment]
    from queue_runtime._prometheus import (  # type: ignore[assignment]
        FallbackHistogram as Histogram,
    )
    from queue_runtime._prometheus import (  # type: ignore[assignment]
        FallbackRegistry as CollectorRegistry,
    )
    from queue_runtime._prometheus import (  # type: ignore[assignment]
        fallback_serve as start_http_server,
    )

from queue_runtime.store import PoolStats

THROUGHPUT_WINDOW = 60.0  # seconds


class _Window:
    """Completions of the last minute per pool, with their sum kept up to date.

    ``add`` and ``rate`` are O(1) amortised: expired entries leave the deque
    once, their count subtracted from the running total (summing the window on
    every completion made a long drain slower as it went).
    """

    def __init__(self, clock: Callable[[], float]) -> None:
        self._clock = clock
        self._events: dict[str, deque[tuple[float, int]]] = {}
        self._totals: dict[str, int] = {}
        self._lock = threading.Lock()

    def add(self, pool: str, count: int) -> None:
        with self._lock:
            self._events.setdefault(pool, deque()).append((self._clock(), count))
            self._totals[pool] = self._totals.get(pool, 0) + count

    def rate(self, pool: str) -> float:
        horizon = self._clock() - THROUGHPUT_WINDOW
        with self._lock:
            events = self._events.get(pool)
            if not events:
                return 0.0
            while events and events[0][0] < horizon:
                self._totals[pool] -= events.popleft()[1]
            return self._totals[pool] / THROUGHPUT_WINDOW


class WorkerMetrics:
    """The metrics a worker exports (``--metrics-port``)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.registry = CollectorRegistry()
        self._window = _Window(clock)
        labels = ["pool"]
        r = self.registry
        self.queue_depth = Gauge("queue_depth", "Due pending jobs.", labels, registry=r)
        self.consumer_lag = Gauge(
            "consumer_lag_seconds", "Age of the oldest due pending job.", labels, registry=r
        )
        self.throughput = Gauge(
            "consumer_throughput", "Jobs completed per second, last minute.", labels, registry=r
        )
        self.completed = Counter("jobs_completed", "Jobs completed.", labels, registry=r)
        self.claim_latency = Histogram(
            "claim_latency_seconds", "Time of one claim statement.", labels, registry=r
        )
        self.dlq_depth = Gauge("dlq_depth", "Jobs in the dead-letter queue.", labels, registry=r)
        self.retries = Counter("retries", "Failed attempts scheduled again.", labels, registry=r)
        self.dead = Counter(
            "dead_lettered", "Jobs sent to the DLQ by this worker.", labels, registry=r
        )
        self.lost_leases = Counter(
            "lost_leases", "Leases lost, or rescued by the reaper.", labels, registry=r
        )
        self.reasserted_leases = Counter(
            "reasserted_leases", "Leases found missing and set again.", labels, registry=r
        )
        self.tenant_deferrals = Counter(
            "tenant_deferrals", "Jobs deferred by a tenant cap.", labels, registry=r
        )
        # By job, not pool: an SLO is a job's, and so is its rollback to inline.
        self.slo_rollbacks = Counter(
            "queue_runtime_slo_rollbacks",
            "Jobs this worker rolled back to inline on an SLO breach.",
            ["job"],
            registry=r,
        )

    def job_completed(self, pool: str, count: int = 1) -> None:
        self.completed.labels(pool).inc(count)
        self._window.add(pool, count)
        self.throughput.labels(pool).set(self._window.rate(pool))

    def observe_stats(self, stats: list[PoolStats]) -> None:
        for s in stats:
            self.queue_depth.labels(s.pool).set(s.depth)
            self.consumer_lag.labels(s.pool).set(s.lag_seconds)
            self.dlq_depth.labels(s.pool).set(s.dead)
            self.throughput.labels(s.pool).set(self._window.rate(s.pool))

    def serve(self, port: int, addr: str = "0.0.0.0") -> None:
        """Expose this registry over HTTP (a daemon thread of prometheus_client)."""
        start_http_server(port, addr=addr, registry=self.registry)

    def value(self, name: str, pool: str) -> float:
        """A sample's current value (tests and the status command read it)."""
        sample = self.registry.get_sample_value(name, {"pool": pool})
        return 0.0 if sample is None else sample
