"""Prometheus metrics of one worker, on a registry of its own.

Every metric is labelled by ``pool``, but ``queue_runtime_slo_rollbacks_total``
by ``job``, and the per-job families (``queue_runtime_jobs_*``,
``queue_runtime_job_duration_seconds``) by ``job`` and ``pool``. Counters are
updated by the worker as things happen; the gauges that describe the queue as
a whole (depth, lag, DLQ depth) are refreshed from ``JobStore.stats()`` by
:meth:`WorkerMetrics.observe_stats`. ``consumer_throughput`` is jobs completed
per second over the last minute, computed from this worker's own completions.

Per-job figures arrive a settled batch at a time (:class:`JobTally`): one
``inc(n)`` per (job, pool) and one locked histogram update per series per
batch, so they cost next to nothing per job. The ``job`` label is bounded: a
name the worker has not registered is counted as ``<unregistered>``.
"""

from __future__ import annotations

import collections
import operator
import threading
import time
from collections import deque
from collections.abc import Callable, Container, Iterable
from enum import StrEnum
from typing import Any

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

from queue_runtime._prometheus import BatchHistogram
from queue_runtime.store import ClaimedJob, PoolStats

THROUGHPUT_WINDOW = 60.0  # seconds
UNREGISTERED = "<unregistered>"  # the job label of every name the worker does not know
MAX_JOB_LABELS = 1000  # without a bound registry: distinct names kept before UNREGISTERED
# Run time: no-op jobs in milliseconds up to the hour-long timeouts of batch jobs.
DURATION_BUCKETS = (
    *(0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5),
    *(1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0, 900.0, 3600.0),
)
# Pickup: NOTIFY-driven pickup is milliseconds; a backlog is seconds to hours.
PICKUP_BUCKETS = (
    *(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5),
    *(1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0, 900.0, 3600.0),
)


Timing = tuple[float, float]  # (seconds an attempt ran, epoch seconds it started at)
_NAME_POOL = operator.attrgetter("name", "pool")


class Settled(StrEnum):
    """What a per-job counter counts."""

    COMPLETED = "completed"
    FAILED = "failed"  # every failed attempt that was stored: RETRIED + DEAD
    RETRIED = "retried"
    DEAD = "dead_lettered"
    CANCELLED = "cancelled"  # ended on a cancel request (running, or prefetched and never started)


class JobTally:
    """What one settled batch adds to the per-job metrics (:meth:`WorkerMetrics.record`).

    Adding is a list append, or one ``extend`` per batch; grouping by (job,
    pool) happens once per batch, in :meth:`counts` and :meth:`timed`.
    """

    __slots__ = ("settled", "timings")

    def __init__(self) -> None:
        self.settled: dict[Settled, list[ClaimedJob]] = {}
        self.timings: list[tuple[ClaimedJob, Timing]] = []

    def count(self, kind: Settled, job: ClaimedJob) -> None:
        self.settled.setdefault(kind, []).append(job)

    def count_many(self, kind: Settled, jobs: Iterable[ClaimedJob]) -> None:
        self.settled.setdefault(kind, []).extend(jobs)

    def ran(self, job: ClaimedJob, duration: float, started: float) -> None:
        """An attempt that ran ``duration`` s and started at ``started`` (epoch seconds)."""
        self.timings.append((job, (duration, started)))

    def ran_many(self, attempts: Iterable[tuple[ClaimedJob, Timing]]) -> None:
        self.timings.extend(attempts)

    def counts(self) -> dict[tuple[Settled, str, str], int]:
        return {
            (kind, name, pool): n
            for kind, jobs in self.settled.items()
            for (name, pool), n in collections.Counter(map(_NAME_POOL, jobs)).items()
        }

    def timed(self) -> tuple[dict[tuple[str, str], list[float]], dict[str, list[float]]]:
        """Run times by (job, pool) and pickup latencies by pool, in one pass."""
        durations: dict[tuple[str, str], list[float]] = {}
        pickups: dict[str, list[float]] = {}
        for job, (took, started) in self.timings:
            key = (job.name, job.pool)
            found = durations.get(key)
            if found is None:
                found = durations[key] = []
                pickups.setdefault(job.pool, [])
            found.append(took)
            due = job.due  # epoch seconds, from the claim itself (no datetime work per job)
            pickup = started - (job.enqueued_at.timestamp() if due is None else due)
            pickups[job.pool].append(pickup if pickup > 0.0 else 0.0)
        return durations, pickups


class _NoTally(JobTally):
    """Per-job metrics turned off (``WorkerMetrics(per_job=False)``): nothing is kept."""

    __slots__ = ()

    def count(self, kind: Settled, job: ClaimedJob) -> None:
        pass

    def count_many(self, kind: Settled, jobs: Iterable[ClaimedJob]) -> None:
        pass

    def ran(self, job: ClaimedJob, duration: float, started: float) -> None:
        pass

    def ran_many(self, attempts: Iterable[tuple[ClaimedJob, Timing]]) -> None:
        pass


class _JobLabels:
    """Job name -> its ``job`` label value: a registered name as is, any other UNREGISTERED."""

    def __init__(self) -> None:
        self.known: Container[str] | None = None  # the worker's registry, once bound
        self._seen: set[str] = set()
        self._lock = threading.Lock()

    def label(self, name: str) -> str:
        if self.known is not None:
            return name if name in self.known else UNREGISTERED
        if name in self._seen:
            return name
        with self._lock:  # no registry bound (a bare WorkerMetrics): a hard cap instead
            if len(self._seen) < MAX_JOB_LABELS:
                self._seen.add(name)
                return name
        return UNREGISTERED


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

    def __init__(
        self, clock: Callable[[], float] = time.monotonic, *, per_job: bool = True
    ) -> None:
        self.registry = CollectorRegistry()
        self._window = _Window(clock)
        self.per_job = per_job  # False only to measure what per-job metrics cost (bench/)
        self._jobs = _JobLabels()
        self._children: dict[tuple[Settled, str, str], Any] = {}
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
        self.unknown_job_deferrals = Counter(
            "unknown_job_deferrals",
            "Jobs handed back because this worker has not registered their name.",
            labels,
            registry=r,
        )
        # By job, not pool: an SLO is a job's, and so is its rollback to inline.
        self.slo_rollbacks = Counter(
            "queue_runtime_slo_rollbacks",
            "Jobs this worker rolled back to inline on an SLO breach.",
            ["job"],
            registry=r,
        )
        self._per_job_metrics()

    def _per_job_metrics(self) -> None:
        by_job, r = ["job", "pool"], self.registry
        self.by_job = {
            Settled.COMPLETED: Counter(
                "queue_runtime_jobs_completed", "Jobs completed, by job.", by_job, registry=r
            ),
            Settled.FAILED: Counter(
                "queue_runtime_jobs_failed",
                "Failed attempts (raised, timed out, rejected), by job: retried + dead-lettered.",
                by_job,
                registry=r,
            ),
            Settled.RETRIED: Counter(
                "queue_runtime_jobs_retried",
                "Failed attempts scheduled again, by job.",
                by_job,
                registry=r,
            ),
            Settled.DEAD: Counter(
                "queue_runtime_jobs_dead_lettered",
                "Jobs sent to the DLQ by this worker, by job.",
                by_job,
                registry=r,
            ),
            Settled.CANCELLED: Counter(
                "queue_runtime_jobs_cancelled",
                "Jobs this worker ended on a cancel request, by job.",
                by_job,
                registry=r,
            ),
        }
        self.job_duration = BatchHistogram(
            "queue_runtime_job_duration_seconds",
            "Run time of one attempt, by job.",
            by_job,
            DURATION_BUCKETS,
            r,
        )
        self.pickup_latency = BatchHistogram(
            "queue_runtime_pickup_latency_seconds",
            "From due (enqueued, or run_at) to started.",
            ["pool"],
            PICKUP_BUCKETS,
            r,
        )

    def bind_jobs(self, registered: Container[str]) -> None:
        """Label per-job figures by these names only (the worker's registry); others UNREGISTERED."""
        self._jobs.known = registered

    def tally(self) -> JobTally:
        """An empty tally for one batch (a no-op one when per-job metrics are off)."""
        return JobTally() if self.per_job else _NoTally()

    def record(self, tally: JobTally) -> None:
        """Add a batch's per-job figures: one increment per counter series, one per histogram."""
        if not tally.settled and not tally.timings:
            return
        for (kind, name, pool), count in tally.counts().items():
            self._child(kind, self._jobs.label(name), pool).inc(count)
        durations, pickups = tally.timed()
        for (name, pool), took in durations.items():
            self.job_duration.observe_many((self._jobs.label(name), pool), took)
        for pool, waited in pickups.items():
            self.pickup_latency.observe_many((pool,), waited)

    def _child(self, kind: Settled, job: str, pool: str) -> Any:
        key = (kind, job, pool)
        child = self._children.get(key)
        if child is None:
            child = self._children[key] = self.by_job[kind].labels(job, pool)
        return child

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

    def value(self, name: str, pool: str, job: str | None = None) -> float:
        """A sample's current value (tests and the status command read it)."""
        labels = {"pool": pool} if job is None else {"job": job, "pool": pool}
        sample = self.registry.get_sample_value(name, labels)
        return 0.0 if sample is None else sample
