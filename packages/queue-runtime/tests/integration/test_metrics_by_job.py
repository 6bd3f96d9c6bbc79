"""Per-job metrics of a real worker process, scraped from its ``--metrics-port`` over HTTP.

Two registered jobs (a success, a retry then success, a failure to the DLQ)
and two rows whose names the worker does not know: the counters and the
histograms by job must say exactly what happened, with one ``<unregistered>``
label for both unknown names.
"""

from __future__ import annotations

import urllib.request
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from queue_runtime import RetryPolicy, Settings, configure
from queue_runtime.metrics import UNREGISTERED
from queue_runtime.runtime import Runtime
from queue_runtime.store import NewJob
from tests.integration import metrics_by_job_app as app
from tests.integration.workers import Spawner
from tests.support import free_port, wait_until

pytestmark = [pytest.mark.pg, pytest.mark.redis]
ATTEMPTS = 3
SCHEDULED_IN = 5.0  # seconds: a pickup measured from enqueue instead of run_at would exceed it
Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


@pytest.fixture
def rt(settings: Settings) -> Iterator[Runtime]:
    fast = settings.model_copy(
        update={
            "lease_ttl": 2.0,
            "poll_interval": 0.1,
            "retry": RetryPolicy(max_attempts=ATTEMPTS, base_delay=0.01, max_delay=0.05),
            "unknown_job_deadline": 1.0,  # unknown names: handed back, then the DLQ after 1 s
        }
    )
    runtime = configure(fast)
    yield runtime
    runtime.close()


@pytest.fixture
def spawner(tmp_path: Path) -> Iterator[Spawner]:
    spawned = Spawner(tmp_path, app="tests.integration.metrics_by_job_app")
    try:
        yield spawned
    finally:
        spawned.stop_all()


def scrape(port: int) -> Samples | None:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=2) as response:
            text = response.read().decode()
    except OSError:
        return None
    return {
        (s.name, frozenset(s.labels.items())): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples.get((name, frozenset(labels.items())), 0.0)


def test_a_worker_process_exports_counts_and_histograms_by_job(
    rt: Runtime, spawner: Spawner
) -> None:
    port = free_port()
    spawner.start(rt.settings, "--pool", "batch", "--metrics-port", str(port))
    wait_until(lambda: scrape(port), timeout=30, message="the worker's /metrics")
    # Enqueued once the worker serves: every pickup is a NOTIFY or a poll away.
    for n in range(3):
        app.steady.enqueue(n)
    app.steady.enqueue(10, fail_first=True)
    app.broken.enqueue()
    for name in ("gone.job_a", "gone.job_b"):
        rt.store.enqueue(NewJob(name=name, pool="batch", args={}))
    steady, broken = app.steady.name, app.broken.name

    def settled() -> Samples | None:
        s = scrape(port)
        done = s is not None and value(s, "jobs_completed_total", pool="batch") >= 4
        return s if done and value(s, "dead_lettered_total", pool="batch") >= 3 else None

    s = wait_until(settled, timeout=60, message="every job finished")
    assert s is not None
    by = {"pool": "batch"}
    assert value(s, "queue_runtime_jobs_completed_total", job=steady, **by) == 4
    assert value(s, "queue_runtime_jobs_failed_total", job=steady, **by) == 1
    assert value(s, "queue_runtime_jobs_retried_total", job=steady, **by) == 1
    assert value(s, "queue_runtime_jobs_dead_lettered_total", job=steady, **by) == 0
    assert value(s, "queue_runtime_jobs_completed_total", job=broken, **by) == 0
    assert value(s, "queue_runtime_jobs_failed_total", job=broken, **by) == ATTEMPTS
    assert value(s, "queue_runtime_jobs_retried_total", job=broken, **by) == ATTEMPTS - 1
    assert value(s, "queue_runtime_jobs_dead_lettered_total", job=broken, **by) == 1
    # Both unknown names go to the DLQ past unknown_job_deadline, under one label value.
    assert value(s, "queue_runtime_jobs_failed_total", job=UNREGISTERED, **by) == 2
    assert value(s, "queue_runtime_jobs_dead_lettered_total", job=UNREGISTERED, **by) == 2
    jobs = {dict(labels).get("job") for name, labels in s if name.startswith("queue_runtime_job")}
    assert jobs == {steady, broken, UNREGISTERED}
    # Durations: one per attempt that ran (rejected rows never ran).
    duration = "queue_runtime_job_duration_seconds"
    assert value(s, duration + "_count", job=steady, **by) == 5
    assert value(s, duration + "_count", job=broken, **by) == ATTEMPTS
    assert value(s, duration + "_count", job=UNREGISTERED, **by) == 0
    assert value(s, duration + "_sum", job=steady, **by) >= 4 * app.STEADY_SECONDS
    # Only the failing first attempt of `steady` can be quicker than its sleep.
    assert value(s, duration + "_bucket", job=steady, le="0.01", **by) <= 1
    assert value(s, duration + "_bucket", job=steady, le="+Inf", **by) == 5
    pickup = "queue_runtime_pickup_latency_seconds"
    assert value(s, pickup + "_count", **by) == 5 + ATTEMPTS


def test_a_scheduled_job_is_picked_up_from_its_run_at(rt: Runtime, spawner: Spawner) -> None:
    port = free_port()
    spawner.start(rt.settings, "--pool", "batch", "--metrics-port", str(port))
    wait_until(lambda: scrape(port), timeout=30, message="the worker's /metrics")
    handle = app.steady.options(run_at=timedelta(seconds=SCHEDULED_IN)).enqueue(1)
    assert handle.result(timeout=SCHEDULED_IN + 30) == 1
    pickup = "queue_runtime_pickup_latency_seconds"

    def observed() -> Samples | None:
        s = scrape(port)
        return s if s is not None and value(s, pickup + "_count", pool="batch") == 1 else None

    s = wait_until(observed, timeout=10, message="the pickup observed")
    assert s is not None
    # Measured from enqueue it would be >= SCHEDULED_IN; from run_at it is a poll away.
    assert value(s, pickup + "_bucket", pool="batch", le="2.5") == 1
    assert value(s, pickup + "_sum", pool="batch") < SCHEDULED_IN / 2
