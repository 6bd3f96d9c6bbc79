"""Per-job metrics without servers: the bounded job label, batch tallies, histograms, fallback."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from datetime import UTC, datetime, timedelta

import pytest
from prometheus_client import generate_latest

from queue_runtime.metrics import MAX_JOB_LABELS, UNREGISTERED, JobTally, Settled, WorkerMetrics
from queue_runtime.store import ClaimedJob, NewJob
from queue_runtime.testing import ManualClock, MemoryJobStore

ENQUEUED = datetime(2026, 1, 1, tzinfo=UTC)


def claimed(name: str, pool: str = "batch", due: float | None = None) -> ClaimedJob:
    return ClaimedJob(1, name, pool, {}, 1, 5, None, None, ENQUEUED, due)


def job_labels(m: WorkerMetrics) -> set[str]:
    return {
        s.labels["job"]
        for family in m.registry.collect()
        if family.name.startswith("queue_runtime_job")
        for s in family.samples
    }


def test_names_the_worker_did_not_register_share_one_label() -> None:
    m = WorkerMetrics()
    m.bind_jobs({"app.known"})
    tally = m.tally()
    for n in range(50):
        tally.count(Settled.DEAD, claimed(f"app.gone_{n}"))
        tally.ran(claimed(f"app.gone_{n}"), 0.1, ENQUEUED.timestamp())
    tally.count(Settled.COMPLETED, claimed("app.known"))
    m.record(tally)
    assert job_labels(m) == {"app.known", UNREGISTERED}
    assert m.value("queue_runtime_jobs_dead_lettered_total", "batch", job=UNREGISTERED) == 50
    assert m.value("queue_runtime_job_duration_seconds_count", "batch", job=UNREGISTERED) == 50


def test_without_a_registry_the_label_set_is_capped() -> None:
    m = WorkerMetrics()
    tally = m.tally()
    for n in range(MAX_JOB_LABELS + 20):
        tally.count(Settled.COMPLETED, claimed(f"app.job_{n}"))
    m.record(tally)
    assert len(job_labels(m)) == MAX_JOB_LABELS + 1
    assert m.value("queue_runtime_jobs_completed_total", "batch", job=UNREGISTERED) == 20


def test_a_batch_adds_its_counts_and_observations_per_series() -> None:
    m = WorkerMetrics()
    tally = m.tally()
    for _ in range(3):
        tally.count(Settled.COMPLETED, claimed("app.a"))
    tally.count(Settled.FAILED, claimed("app.a", pool="transactional"))
    for seconds in (0.001, 0.004, 7.0):
        tally.ran(claimed("app.a"), seconds, ENQUEUED.timestamp() + 0.02)
    m.record(tally)
    m.record(m.tally())  # an empty batch adds nothing
    assert tally.counts() == {
        (Settled.COMPLETED, "app.a", "batch"): 3,
        (Settled.FAILED, "app.a", "transactional"): 1,
    }
    assert m.value("queue_runtime_jobs_completed_total", "batch", job="app.a") == 3
    assert m.value("queue_runtime_jobs_failed_total", "transactional", job="app.a") == 1
    bucket = m.registry.get_sample_value
    name = "queue_runtime_job_duration_seconds_bucket"
    labels = {"job": "app.a", "pool": "batch"}
    assert bucket(name, {**labels, "le": "0.001"}) == 1  # a value on a bound is in its bucket
    assert bucket(name, {**labels, "le": "0.005"}) == 2
    assert bucket(name, {**labels, "le": "5.0"}) == 2
    assert bucket(name, {**labels, "le": "+Inf"}) == 3
    assert m.value("queue_runtime_job_duration_seconds_sum", "batch", job="app.a") == (
        pytest.approx(7.005)
    )
    pickup = "queue_runtime_pickup_latency_seconds_bucket"
    assert bucket(pickup, {"pool": "batch", "le": "0.025"}) == 3


def test_pickup_counts_from_when_the_claim_says_the_job_was_due() -> None:
    tally = JobTally()
    due = ENQUEUED.timestamp() + 60
    tally.ran(claimed("app.a", due=due), 0.1, due + 0.5)
    tally.ran(claimed("app.a"), 0.1, ENQUEUED.timestamp() + 2)  # no due: from enqueued_at
    tally.ran(claimed("app.a"), 0.1, ENQUEUED.timestamp() - 1)  # clocks apart: never negative
    assert tally.timed()[1] == {"batch": [pytest.approx(0.5), pytest.approx(2.0), 0.0]}


def test_the_memory_store_claims_with_the_later_of_enqueue_and_run_at() -> None:
    clock = ManualClock(ENQUEUED)
    store = MemoryJobStore(["batch"], clock)
    store.enqueue(NewJob("app.a", "batch", {}))
    store.enqueue(NewJob("app.a", "batch", {}, run_at=ENQUEUED + timedelta(seconds=30)))
    store.enqueue(NewJob("app.a", "batch", {}, run_at=ENQUEUED - timedelta(seconds=30)))
    clock.advance(60)
    dues = sorted(job.due or 0.0 for job in store.claim("batch", 10, "w"))
    base = ENQUEUED.timestamp()
    assert dues == [base, base, base + 30]


def test_per_job_metrics_off_keep_nothing_but_the_pool_counters() -> None:
    m = WorkerMetrics(per_job=False)
    tally = m.tally()
    tally.count(Settled.COMPLETED, claimed("app.a"))
    tally.ran(claimed("app.a"), 0.1, ENQUEUED.timestamp())
    m.record(tally)
    m.job_completed("batch", 1)
    assert job_labels(m) == set()
    assert m.value("jobs_completed_total", "batch") == 1


def test_the_exposition_has_every_per_job_family() -> None:
    m = WorkerMetrics()
    tally = m.tally()
    tally.count(Settled.RETRIED, claimed("app.a"))
    tally.ran(claimed("app.a"), 0.2, ENQUEUED.timestamp())
    m.record(tally)
    text = generate_latest(m.registry).decode()
    assert "# TYPE queue_runtime_job_duration_seconds histogram" in text
    assert 'queue_runtime_job_duration_seconds_bucket{job="app.a",le="0.25",pool="batch"} 1.0' in (
        text
    )
    assert 'queue_runtime_pickup_latency_seconds_count{pool="batch"} 1.0' in text
    assert 'queue_runtime_jobs_retried_total{job="app.a",pool="batch"} 1.0' in text


def test_the_fallback_classes_take_the_new_labels() -> None:
    script = "import sys; sys.modules['prometheus_client'] = None\n" + textwrap.dedent(
        """
        from datetime import UTC, datetime
        from queue_runtime import metrics
        from queue_runtime.store import ClaimedJob
        assert metrics.Counter.__name__ == "FallbackCounter"
        m = metrics.WorkerMetrics()
        m.bind_jobs({"app.a"})
        job = ClaimedJob(1, "app.a", "batch", {}, 1, 5, None, None, datetime.now(UTC))
        for name in ("app.a", "app.a", "app.gone"):
            tally = m.tally()
            tally.count(metrics.Settled.COMPLETED, job)
            tally.count(metrics.Settled.DEAD, ClaimedJob(2, name, "batch", {}, 1, 5, None, None,
                                                         datetime.now(UTC)))
            tally.ran(job, 0.3, datetime.now(UTC).timestamp())
            m.record(tally)
        counter = m.by_job[metrics.Settled.COMPLETED]
        assert counter.labels("app.a", "batch") is counter.labels(pool="batch", job="app.a")
        try:
            counter.labels("app.a")
        except ValueError:
            pass
        else:
            raise AssertionError("missing label accepted")
        get = m.registry.get_sample_value
        print(m.value("queue_runtime_jobs_completed_total", "batch", job="app.a"),
              m.value("queue_runtime_jobs_dead_lettered_total", "batch", job="app.a"),
              m.value("queue_runtime_jobs_dead_lettered_total", "batch", job="<unregistered>"),
              m.value("queue_runtime_job_duration_seconds_count", "batch", job="app.a"),
              get("queue_runtime_job_duration_seconds_bucket",
                  {"job": "app.a", "pool": "batch", "le": "0.25"}),
              get("queue_runtime_job_duration_seconds_bucket",
                  {"job": "app.a", "pool": "batch", "le": "0.5"}),
              m.value("queue_runtime_pickup_latency_seconds_count", "batch"))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["3.0", "2.0", "1.0", "3.0", "0.0", "3.0", "3.0"]
