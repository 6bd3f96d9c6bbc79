"""A worker's per-pool totals never run ahead of the per-job figures they count.

The settler stores a batch's outcomes, releases its leases (a Redis round trip), then adds the
batch's metrics. A scrape can fall anywhere in between: an operator (or a test) that waits on
``dead_lettered_total{pool}`` must then find each job's own ``jobs_dead_lettered_total``. Once a
pool's total moved before the per-job figures, and a scrape in that window saw a job
dead-lettered in the pool and in no job (the workers suite's metrics test failed so in CI).
"""

from __future__ import annotations

from queue_runtime.config import RetryPolicy, Settings
from queue_runtime.metrics import WorkerMetrics
from queue_runtime.retry import Backoff
from queue_runtime.store import JobStatus, NewJob
from queue_runtime.testing import MemoryJobStore, MemoryLeaseStore
from queue_runtime.worker._outcome import Outcome, OutcomeKind
from queue_runtime.worker._settle import Settlement, Settler

POOL = "batch"


def pool_and_jobs(m: WorkerMetrics, pool_total: str, per_job: str) -> tuple[float, float]:
    """A pool's total, and the sum of the per-job series of the same figure, as scraped."""
    pool = m.registry.get_sample_value(pool_total, {"pool": POOL}) or 0.0
    jobs = sum(
        s.value
        for family in m.registry.collect()
        for s in family.samples
        if s.name == per_job and s.labels.get("pool") == POOL
    )
    return pool, jobs


class WatchedLeases(MemoryLeaseStore):
    """Reads the worker's metrics while the settler releases a batch's leases: the moment
    between storing the outcomes and adding the metrics, where a scrape may land."""

    def __init__(self, metrics: WorkerMetrics) -> None:
        super().__init__()
        self.metrics = metrics
        self.seen: list[tuple[tuple[float, float], tuple[float, float]]] = []

    def release(self, tokens: list[str], worker_id: str) -> None:
        self.seen.append(
            (
                pool_and_jobs(
                    self.metrics, "dead_lettered_total", "queue_runtime_jobs_dead_lettered_total"
                ),
                pool_and_jobs(
                    self.metrics, "jobs_completed_total", "queue_runtime_jobs_completed_total"
                ),
            )
        )
        super().release(tokens, worker_id)


def test_a_scrape_between_storing_and_counting_never_sees_a_pool_total_ahead_of_its_jobs() -> None:
    store = MemoryJobStore(pools=list(Settings().pools))
    for name in ("gone.job_a", "app.jobs.work"):
        store.enqueue(NewJob(name, POOL, {}))
    gone, work = store.claim(POOL, 2, "w1")
    metrics = WorkerMetrics()
    metrics.bind_jobs({"app.jobs.work"})
    leases = WatchedLeases(metrics)
    settler = Settler(store, leases, "w1", metrics, Backoff())
    settler.start()
    settler.submit(Settlement(gone, Outcome.rejected("unknown job"), RetryPolicy(), False))
    settler.submit(Settlement(work, Outcome(OutcomeKind.SUCCEEDED), RetryPolicy(), False))
    settler.close(timeout=5)

    rejected, done = store.get(gone.id), store.get(work.id)
    assert rejected is not None and rejected.status is JobStatus.DEAD
    assert done is not None and done.status is JobStatus.SUCCEEDED
    assert leases.seen, "the settler released no lease"
    for dead, completed in leases.seen:
        assert dead[0] <= dead[1], f"dead_lettered_total {dead[0]} ahead of the jobs' {dead[1]}"
        assert completed[0] <= completed[1], f"completed {completed[0]} ahead of {completed[1]}"
    assert pool_and_jobs(
        metrics, "dead_lettered_total", "queue_runtime_jobs_dead_lettered_total"
    ) == (
        1.0,
        1.0,
    )
    assert pool_and_jobs(metrics, "jobs_completed_total", "queue_runtime_jobs_completed_total") == (
        1.0,
        1.0,
    )
