"""Automatic rollback on an SLO breach: real PostgreSQL, real Redis, real workers.

A failure burst of a job with ``slo = {max_failure_rate = 0.2, ...}`` rolls it
back to inline by itself: two workers check at once and make one change, the
audit says why, ``queue_runtime_slo_rollbacks_total{job}`` counts it, one line
is logged, and the next enqueue runs in-process.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest

from queue_runtime import RetryPolicy, Settings, configure, job
from queue_runtime.config import JobConfig, RolloutMode, SloPolicy
from queue_runtime.gate import ChangeCause, get_rollout, rollout_history, set_rollout
from queue_runtime.handle import InlineHandle
from queue_runtime.runtime import Runtime
from queue_runtime.worker import Worker
from tests.support import wait_until

pytestmark = [pytest.mark.pg, pytest.mark.redis]

FLAKY = "tests.slo.flaky"
METRIC = "queue_runtime_slo_rollbacks_total"


@job(name=FLAKY, idempotent=True)
def flaky(n: int) -> int:
    if n >= 0:
        raise RuntimeError(f"induced failure {n}")
    return n


@pytest.fixture
def rt(settings: Settings) -> Iterator[Runtime]:
    policy = SloPolicy(max_failure_rate=0.2, max_dead=50, window_seconds=120, min_attempts=5)
    once = RetryPolicy(max_attempts=1)
    runtime = configure(
        settings,
        lease_ttl=1.0,
        poll_interval=0.1,
        shutdown_grace=2.0,
        rollout_refresh=0.2,
        jobs={FLAKY: JobConfig(retry=once, slo=policy)},
    )
    yield runtime
    runtime.close()


@pytest.fixture
def workers(rt: Runtime) -> Iterator[list[Worker]]:
    started = [Worker(rt, worker_id=f"slo-w{n}").start() for n in range(2)]
    yield started
    for worker in started:
        worker.stop()


def test_a_failure_burst_rolls_the_job_back_to_inline(
    rt: Runtime, workers: list[Worker], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="queue_runtime.worker")
    set_rollout(rt, FLAKY, "async", who="alice")
    handles = [flaky.enqueue(n) for n in range(12)]
    assert not any(isinstance(h, InlineHandle) for h in handles)
    wait_until(
        lambda: get_rollout(rt, FLAKY).mode is RolloutMode.INLINE,
        timeout=30,
        message="the SLO rollback",
    )
    latest = rollout_history(rt, FLAKY)
    assert [(c.cause, c.before_label, c.after_label) for c in latest] == [
        (ChangeCause.SLO, "async", "inline"),
        (ChangeCause.SET, "default", "async"),
    ]
    rollback = latest[0]
    assert rollback.changed_by in {"slo:slo-w0", "slo:slo-w1"}
    assert rollback.reason is not None and rollback.reason.startswith("failure rate ")
    counted = [w.metrics.registry.get_sample_value(METRIC, {"job": FLAKY}) or 0 for w in workers]
    assert sum(counted) == 1  # two workers checked; one change between them
    lines = [r.getMessage() for r in caplog.records if "SLO breach" in r.getMessage()]
    assert lines == [f"SLO breach: {FLAKY} rolled back to inline: {rollback.reason}"]
    handle = flaky.enqueue(-1)
    assert isinstance(handle, InlineHandle) and handle.result() == -1


def test_a_healthy_job_is_left_alone(rt: Runtime, workers: list[Worker]) -> None:
    set_rollout(rt, FLAKY, "async", who="alice")
    handles = [flaky.enqueue(-n - 1) for n in range(8)]
    for handle in handles:
        assert handle.result(timeout=20) is not None
    for worker in workers:
        assert worker.metrics.registry.get_sample_value(METRIC, {"job": FLAKY}) is None
    assert get_rollout(rt, FLAKY).mode is RolloutMode.ASYNC
    assert [c.cause for c in rollout_history(rt, FLAKY)] == [ChangeCause.SET]
