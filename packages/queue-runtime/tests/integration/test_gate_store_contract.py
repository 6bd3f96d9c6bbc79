"""The GateStore and Inspector contracts: PostgreSQL and the in-memory stores answer alike.

One test body, a parametrised fixture per seam (dramatiq's habit). What only
PostgreSQL has (an unmigrated schema, a missing table, the caller's
transaction) is tested on it alone, and says why.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

import psycopg
import pytest
from alembic.script import ScriptDirectory

from queue_runtime import migrations
from queue_runtime.config import RolloutMode, Settings
from queue_runtime.pg.connect import open_pool
from queue_runtime.pg.gate import PgGateStore
from queue_runtime.pg.inspect import PgInspector
from queue_runtime.pg.store import PgJobStore
from queue_runtime.store import (
    Completion,
    Failure,
    GateStore,
    Inspector,
    JobStatus,
    JobStore,
    KeyCounts,
    KeyStatus,
    NewJob,
)
from queue_runtime.testing import MemoryGateStore, MemoryInspector, MemoryJobStore


class Backend(StrEnum):
    PG = "pg"
    MEMORY = "memory"


@dataclass(frozen=True)
class Inspected:
    """An Inspector and the job store whose state it reads."""

    jobs: JobStore
    inspector: Inspector


@pytest.fixture
def pg_gate(settings: Settings) -> Iterator[PgGateStore]:
    store = PgGateStore(open_pool(settings, max_size=2), settings.schema_name)
    try:
        yield store
    finally:
        store.close()


@pytest.fixture(params=list(Backend))
def gate(request: pytest.FixtureRequest) -> Iterator[GateStore]:
    if request.param is Backend.MEMORY:
        yield MemoryGateStore()
        return
    yield request.getfixturevalue("pg_gate")


@pytest.fixture(params=list(Backend))
def inspected(request: pytest.FixtureRequest) -> Iterator[Inspected]:
    if request.param is Backend.MEMORY:
        jobs = MemoryJobStore()
        yield Inspected(jobs, MemoryInspector(jobs))
        return
    settings: Settings = request.getfixturevalue("settings")
    pool = open_pool(settings, max_size=2)
    try:
        yield Inspected(PgJobStore(pool, settings), PgInspector(pool, settings.schema_name))
    finally:
        pool.close()


def heads() -> list[str]:
    return list(ScriptDirectory(str(Path(migrations.__file__).parent)).get_heads())


# -- certifications --------------------------------------------------------------


def test_certification_is_stored_as_given(gate: GateStore) -> None:
    made = gate.insert_certification("app.pay", "fp1", {"p99_ms": 12.5}, "ci")
    assert (made.job, made.fingerprint, made.certified_by, made.figures) == (
        "app.pay",
        "fp1",
        "ci",
        {"p99_ms": 12.5},
    )
    assert made.valid and made.certified_at is not None
    assert gate.certifications("app.pay", None, valid_only=True) == [made]


def test_certifications_newest_first_and_filtered(gate: GateStore) -> None:
    first = gate.insert_certification("app.pay", "fp1", {}, "ci")
    second = gate.insert_certification("app.pay", "fp2", {}, "ci")
    other = gate.insert_certification("app.mail", "fp1", {}, "ci")
    assert gate.certifications(None, None, valid_only=False) == [other, second, first]
    assert gate.certifications("app.pay", None, valid_only=False) == [second, first]
    assert gate.certifications(None, "fp1", valid_only=False) == [other, first]
    assert gate.certifications("app.pay", "fp2", valid_only=False) == [second]


def test_revoke_by_fingerprint_or_all_of_a_job(gate: GateStore) -> None:
    gate.insert_certification("app.pay", "fp1", {}, "ci")
    gate.insert_certification("app.pay", "fp2", {}, "ci")
    gate.insert_certification("app.mail", "fp1", {}, "ci")
    assert gate.revoke_certifications("app.pay", "fp1") == 1
    assert [c.fingerprint for c in gate.certifications("app.pay", None, True)] == ["fp2"]
    assert gate.revoke_certifications("app.pay", None) == 1
    assert gate.revoke_certifications("app.pay", None) == 0  # already revoked
    assert gate.certifications("app.pay", None, valid_only=True) == []
    revoked = gate.certifications("app.pay", None, valid_only=False)
    assert len(revoked) == 2 and all(c.revoked_at is not None and not c.valid for c in revoked)
    assert len(gate.certifications("app.mail", None, valid_only=True)) == 1


# -- rollouts ----------------------------------------------------------------------


def test_rollout_upsert_replaces_and_lists_by_job(gate: GateStore) -> None:
    made = gate.upsert_rollout("app.pay", RolloutMode.PERCENT, 25, "alice")
    assert (made.job, made.mode, made.percent, made.updated_by) == (
        "app.pay",
        RolloutMode.PERCENT,
        25,
        "alice",
    )
    assert made.updated_at is not None
    gate.upsert_rollout("app.mail", RolloutMode.ASYNC, 100, None)
    changed = gate.upsert_rollout("app.pay", RolloutMode.INLINE, 0, "bob")
    assert [r.job for r in gate.rollouts()] == ["app.mail", "app.pay"]
    assert gate.rollouts()[1] == changed and changed.label == "inline"


def test_snapshot_has_rollouts_and_valid_certifications_only(gate: GateStore) -> None:
    gate.upsert_rollout("app.pay", RolloutMode.ASYNC, 100, None)
    gate.insert_certification("app.pay", "fp1", {}, "ci")
    gate.insert_certification("app.pay", "fp2", {}, "ci")
    gate.insert_certification("app.mail", "fp9", {}, "ci")
    gate.revoke_certifications("app.mail", None)
    snap = gate.snapshot()
    assert set(snap.rollouts) == {"app.pay"} and snap.rollouts["app.pay"].mode is RolloutMode.ASYNC
    assert snap.certified == {"app.pay": frozenset({"fp1", "fp2"})}


def test_empty_gate_store(gate: GateStore) -> None:
    assert gate.rollouts() == [] and gate.certifications(None, None, False) == []
    snap = gate.snapshot()
    assert (snap.rollouts, snap.certified) == ({}, {})
    assert gate.key_state("nothing") is None
    assert gate.key_counts("app.pay") == KeyCounts(completed=0, total=0)


# -- idempotency keys (the execution guard) --------------------------------------------


def test_a_key_is_taken_over_until_it_completes(gate: GateStore) -> None:
    assert gate.begin_key("order-1", "app.pay", 10) is None  # new: run the job
    assert gate.begin_key("order-1", "app.pay", 11) is None  # a previous attempt died: take over
    state = gate.key_state("order-1")
    assert state is not None
    assert (state.state, state.job_id, state.job, state.result) == (
        KeyStatus.IN_PROGRESS,
        11,
        "app.pay",
        None,
    )
    gate.complete_key("order-1", "app.pay", {"charged": 5}, 11)
    done = gate.begin_key("order-1", "app.pay", 12)
    assert done is not None  # completed: the stored result answers, the job does not run
    assert (done.state, done.result, done.job_id) == (KeyStatus.COMPLETED, {"charged": 5}, 11)


def test_a_completed_key_stays_as_it_is(gate: GateStore) -> None:
    gate.complete_key("order-2", "app.pay", "first", 20)  # completed without a begin
    gate.complete_key("order-2", "app.pay", "second", 21)
    state = gate.key_state("order-2")
    assert state is not None and (state.state, state.result, state.job_id) == (
        KeyStatus.COMPLETED,
        "first",
        20,
    )


def test_completion_keeps_the_job_id_when_none_is_given(gate: GateStore) -> None:
    gate.begin_key("order-3", "app.pay", 30)
    gate.complete_key("order-3", "app.pay", None, None)
    state = gate.key_state("order-3")
    assert state is not None and (state.state, state.job_id) == (KeyStatus.COMPLETED, 30)


def test_key_counts_per_job(gate: GateStore) -> None:
    gate.begin_key("a", "app.pay", 1)
    gate.begin_key("b", "app.pay", 2)
    gate.complete_key("b", "app.pay", 1, 2)
    gate.complete_key("c", "app.mail", 1, 3)
    assert gate.key_counts("app.pay") == KeyCounts(completed=1, total=2)
    assert gate.key_counts("app.mail") == KeyCounts(completed=1, total=1)


def test_a_key_taken_for_one_call_is_not_taken_or_completed_by_another(gate: GateStore) -> None:
    assert gate.begin_key("order-5", "app.pay", 50, "call-a") is None
    held = gate.begin_key("order-5", "app.pay", 51, "call-b")  # another call: not taken over
    assert held is not None and held.names_other_call("call-b")
    assert (held.state, held.job_id, held.args_digest) == (KeyStatus.IN_PROGRESS, 50, "call-a")
    gate.complete_key("order-5", "app.pay", "b's result", 51, "call-b")  # not recorded
    state = gate.key_state("order-5")
    assert state is not None and (state.state, state.result) == (KeyStatus.IN_PROGRESS, None)
    assert gate.begin_key("order-5", "app.pay", 52, "call-a") is None  # its own call takes over
    gate.complete_key("order-5", "app.pay", "a's result", 52, "call-a")
    done = gate.begin_key("order-5", "app.pay", 53, "call-b")
    assert done is not None and done.names_other_call("call-b") and done.result == "a's result"


def test_a_key_without_a_digest_matches_any_call(gate: GateStore) -> None:
    gate.begin_key("legacy", "app.pay", 1)  # taken by a caller that has no digest
    assert gate.begin_key("legacy", "app.pay", 2, "call-a") is None
    state = gate.key_state("legacy")
    assert state is not None and (state.job_id, state.args_digest) == (2, "call-a")
    assert not state.names_other_call(None)


def test_keys_expire_after_retention(gate: GateStore) -> None:
    gate.begin_key("k-old-1", "app.pay", 1, "a")
    gate.complete_key("k-old-2", "app.pay", "ok", 2, "b")
    assert gate.purge_keys(older_than_seconds=3600) == 0
    assert gate.purge_keys(older_than_seconds=0, batch=1) == 2  # batched, all of them
    assert gate.key_state("k-old-1") is None and gate.key_state("k-old-2") is None
    assert gate.begin_key("k-old-2", "app.pay", 3, "c") is None  # a new call now


# PostgreSQL only: a key completed inside the caller's transaction commits or rolls back
# with it (memory has no transaction to join: its complete_key_in records at once).
def test_key_completed_in_the_callers_transaction_rolls_back_with_it(
    pg_gate: PgGateStore, settings: Settings
) -> None:
    gate = pg_gate
    with psycopg.connect(settings.database_url or "") as conn:
        gate.complete_key_in(conn, "tx-1", "app.pay", "ok", 1)
        conn.rollback()
    assert gate.key_state("tx-1") is None
    with psycopg.connect(settings.database_url or "") as conn:
        gate.complete_key_in(conn, "tx-2", "app.pay", "ok", 2)
    state = gate.key_state("tx-2")
    assert state is not None and state.state is KeyStatus.COMPLETED


# -- the inspector --------------------------------------------------------------------


def _new(n: int, **fields: object) -> NewJob:
    return NewJob(name="app.jobs.work", pool="batch", args={"n": n}, **fields)  # type: ignore[arg-type]


def test_history_counts_and_unfinished(inspected: Inspected) -> None:
    jobs, inspector = inspected.jobs, inspected.inspector
    ok, dead, waiting = jobs.enqueue_many([_new(1), _new(2, max_attempts=1), _new(3)])
    claimed = {c.id: c for c in jobs.claim("batch", 2, "w1")}
    jobs.complete_many([Completion(ok, claimed[ok].attempt)])
    jobs.fail(Failure(dead, claimed[dead].attempt, "boom"))
    ids = [ok, dead, waiting, 999_999]
    history = {h.id: h for h in inspector.history(ids)}
    assert {i: h.status for i, h in history.items()} == {
        ok: JobStatus.SUCCEEDED,
        dead: JobStatus.DEAD,
    }
    assert history[ok].attempt == 1 and history[ok].finished_at >= history[ok].enqueued_at
    assert history[ok].errors is None
    assert [e["error"] for e in history[dead].errors or []] == ["boom"]
    assert inspector.finished_count(ids) == 2
    assert inspector.unfinished_ids(ids) == {waiting}
    assert inspector.dead_count() == 1


def test_a_migrated_schema_is_at_head_and_lacks_nothing(inspected: Inspected) -> None:
    inspector = inspected.inspector
    assert sorted(inspector.revisions() or []) == sorted(heads())
    assert inspector.missing(["jobs", "job_history", "job_keys"]) == []


# PostgreSQL only: memory has no schema to leave unmigrated or incomplete.
def test_unmigrated_schema_has_no_revision(bare_settings: Settings) -> None:
    pool = open_pool(bare_settings, max_size=1)
    inspector = PgInspector(pool, bare_settings.schema_name)
    try:
        assert inspector.revisions() is None
        assert inspector.missing(["jobs", "job_history"]) == ["jobs", "job_history"]
    finally:
        inspector.close()
