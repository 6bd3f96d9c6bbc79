"""The rollout audit and the SLO inputs: PostgreSQL and the in-memory stores answer alike.

``GateStore``: every rollout change is audited (from what to what, who, why),
``delete_rollout`` is the unset, ``rollback_to_inline`` makes one change even
when several workers call it at once. ``Inspector.job_health``: a job's runs,
failed attempts, dead letters and lag over a window.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import timedelta
from enum import StrEnum

import pytest

from queue_runtime.config import RolloutMode, Settings
from queue_runtime.pg.connect import open_pool
from queue_runtime.pg.gate import PgGateStore
from queue_runtime.pg.inspect import PgInspector
from queue_runtime.pg.store import PgJobStore
from queue_runtime.store import (
    ChangeCause,
    Completion,
    Failure,
    GateStore,
    Inspector,
    JobStore,
    NewJob,
    Rollout,
)
from queue_runtime.testing import MemoryGateStore, MemoryInspector, MemoryJobStore


class Backend(StrEnum):
    PG = "pg"
    MEMORY = "memory"


@pytest.fixture(params=list(Backend))
def gate(request: pytest.FixtureRequest) -> Iterator[GateStore]:
    if request.param is Backend.MEMORY:
        yield MemoryGateStore()
        return
    settings: Settings = request.getfixturevalue("settings")
    store = PgGateStore(open_pool(settings, max_size=4), settings.schema_name)
    try:
        yield store
    finally:
        store.close()


@pytest.fixture(params=list(Backend))
def health(request: pytest.FixtureRequest) -> Iterator[tuple[JobStore, Inspector]]:
    if request.param is Backend.MEMORY:
        jobs = MemoryJobStore()
        yield jobs, MemoryInspector(jobs)
        return
    settings: Settings = request.getfixturevalue("settings")
    pool = open_pool(settings, max_size=2)
    try:
        yield PgJobStore(pool, settings), PgInspector(pool, settings.schema_name)
    finally:
        pool.close()


def test_every_change_is_audited_from_what_to_what(gate: GateStore) -> None:
    gate.upsert_rollout("app.mail", RolloutMode.PERCENT, 25, "alice")
    gate.upsert_rollout("app.mail", RolloutMode.ASYNC, 100, "bob", "looks fine")
    gate.upsert_rollout("app.other", RolloutMode.INLINE, 0, None)
    changes = gate.rollout_changes("app.mail")
    assert [(c.before_label, c.after_label, c.changed_by, c.reason) for c in changes] == [
        ("25%", "async", "bob", "looks fine"),
        ("default", "25%", "alice", None),
    ]
    assert {c.cause for c in changes} == {ChangeCause.SET}
    assert changes[0].changed_at >= changes[1].changed_at
    assert [c.job for c in gate.rollout_changes(None)] == ["app.other", "app.mail", "app.mail"]
    assert len(gate.rollout_changes(None, limit=1)) == 1


def test_unset_removes_the_stored_mode_and_is_audited(gate: GateStore) -> None:
    gate.upsert_rollout("app.mail", RolloutMode.PERCENT, 10, "alice")
    removed = gate.delete_rollout("app.mail", "bob")
    assert removed is not None and (removed.mode, removed.percent) == (RolloutMode.PERCENT, 10)
    assert gate.rollouts() == [] and "app.mail" not in gate.snapshot().rollouts
    latest = gate.rollout_changes("app.mail")[0]
    assert (latest.cause, latest.before_label, latest.after_label, latest.changed_by) == (
        ChangeCause.UNSET,
        "10%",
        "default",
        "bob",
    )
    assert gate.delete_rollout("app.mail", "bob") is None  # nothing stored: nothing audited
    assert len(gate.rollout_changes("app.mail")) == 2


def test_slo_rollback_switches_to_inline_once(gate: GateStore) -> None:
    gate.upsert_rollout("app.mail", RolloutMode.ASYNC, 100, "alice")
    change = gate.rollback_to_inline("app.mail", "slo:w1", "failure rate 0.50 > 0.2")
    assert change is not None
    assert (change.cause, change.before_label, change.after_label, change.reason) == (
        ChangeCause.SLO,
        "async",
        "inline",
        "failure rate 0.50 > 0.2",
    )
    stored = gate.rollouts()
    assert [(r.job, r.mode, r.updated_by) for r in stored] == [
        ("app.mail", RolloutMode.INLINE, "slo:w1")
    ]
    assert gate.rollback_to_inline("app.mail", "slo:w2", "again") is None
    assert gate.rollout_changes("app.mail")[0].changed_by == "slo:w1"


def test_slo_rollback_of_a_job_without_a_stored_mode(gate: GateStore) -> None:
    change = gate.rollback_to_inline("app.fresh", "slo:w1", "lag 90s > 60s")
    assert change is not None and change.before is None
    assert change.after == Rollout("app.fresh", RolloutMode.INLINE, 0, change.changed_at, "slo:w1")


def test_workers_racing_to_roll_back_make_one_change(gate: GateStore) -> None:
    start, made = threading.Barrier(4), []

    def race(n: int) -> None:
        start.wait()
        made.append(gate.rollback_to_inline("app.race", f"slo:w{n}", "dead letters"))

    threads = [threading.Thread(target=race, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert sum(change is not None for change in made) == 1, made
    assert len(gate.rollout_changes("app.race")) == 1


def _job(n: int, name: str = "app.work", **fields: object) -> NewJob:
    return NewJob(name=name, pool="batch", args={"n": n}, **fields)  # type: ignore[arg-type]


def test_job_health_counts_runs_failures_and_dead_letters(
    health: tuple[JobStore, Inspector],
) -> None:
    jobs, inspector = health
    ids = jobs.enqueue_many([_job(1), _job(2), _job(3, max_attempts=1), _job(4, "app.other")])
    claimed = {c.id: c for c in jobs.claim("batch", 10, "w1")}
    ok, retried, dead, other = ids
    jobs.complete_many([Completion(ok, claimed[ok].attempt)])
    later = claimed[retried].enqueued_at + timedelta(hours=1)
    jobs.fail(Failure(retried, claimed[retried].attempt, "boom", retry_at=later))
    jobs.fail(Failure(dead, claimed[dead].attempt, "boom"))
    jobs.fail(Failure(other, claimed[other].attempt, "boom"))
    found = inspector.job_health("app.work", 300)
    assert (found.job, found.succeeded, found.failed_attempts, found.dead) == (
        "app.work",
        1,
        2,
        1,
    )
    assert found.attempts == 3 and found.failure_rate == pytest.approx(2 / 3)
    assert found.lag_seconds == 0.0  # the retry is not due: no lag
    quiet = inspector.job_health("app.none", 300)
    assert (quiet.attempts, quiet.dead, quiet.failure_rate, quiet.lag_seconds) == (0, 0, 0.0, 0.0)


def test_job_health_lag_is_the_oldest_due_pending_run(
    health: tuple[JobStore, Inspector],
) -> None:
    jobs, inspector = health
    jobs.enqueue(_job(1))
    lag = inspector.job_health("app.work", 300).lag_seconds
    assert 0.0 <= lag < 60.0
