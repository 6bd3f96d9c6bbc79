"""The load test's execution ledger and chaos probe: PostgreSQL and memory answer alike.

One test body, a parametrised backend (the ledger, with the job store and the
execution guard's keys it reads): rows of one run, the moments chaos looks for
(an execution that returned while its attempt is unacknowledged, with its key
completed or still open), and sessions ended by application-name prefix, after
which a writer reconnects and loses no row.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from enum import StrEnum

import pytest

from queue_runtime.config import Settings
from queue_runtime.pg.connect import open_pool
from queue_runtime.pg.gate import PgGateStore
from queue_runtime.pg.store import PgJobStore
from queue_runtime.store import Completion, JobStore, KeyStore, NewJob
from queue_runtime.testing import (
    ExecutionLedger,
    LedgerWriter,
    MemoryGateStore,
    MemoryJobStore,
    MemoryLedger,
    PgLedger,
    wait_until,
)

PID = 4242


class Backend(StrEnum):
    PG = "pg"
    MEMORY = "memory"


@dataclass(frozen=True)
class Stores:
    """A ledger and the job store and key store its probe reads."""

    ledger: ExecutionLedger
    jobs: JobStore
    keys: KeyStore
    names: str  # a prefix of application names no other test uses
    writers: list[LedgerWriter] = field(default_factory=list)

    def writer(self, run_id: str, name: str) -> LedgerWriter:
        """A writer of ``run_id`` under the application name ``names + name``, closed after the test."""
        self.writers.append(self.ledger.writer(run_id, self.names + name))
        return self.writers[-1]


@pytest.fixture(params=list(Backend))
def stores(request: pytest.FixtureRequest, unique_name: str) -> Iterator[Stores]:
    names = f"ledger-{unique_name}-"
    if request.param is Backend.MEMORY:
        jobs = MemoryJobStore(pools=list(Settings().pools))
        gate = MemoryGateStore()
        yield Stores(MemoryLedger(jobs, gate), jobs, gate, names)
        return
    settings: Settings = request.getfixturevalue("settings")
    pool = open_pool(settings, max_size=2)
    ledger = PgLedger(settings.database_url or "", settings.schema_name)
    pg = Stores(ledger, PgJobStore(pool, settings), PgGateStore(pool, settings.schema_name), names)
    try:
        yield pg
    finally:
        for writer in pg.writers:
            writer.close()
        pool.close()


def running_job(jobs: JobStore, key: str | None = None) -> int:
    """A job claimed now: its attempt 1 runs."""
    jobs.enqueue(NewJob(name="app.jobs.pay", pool="batch", args={}, idempotency_key=key))
    [claimed] = jobs.claim("batch", 1, "w1")
    return claimed.id


def test_rows_of_one_run_in_insertion_order(stores: Stores) -> None:
    ledger = stores.ledger
    ledger.create()
    ledger.create()  # idempotent
    writer = stores.writer("run-a", "w0")
    first = writer.start(11, 1, "k-11", PID)
    second = writer.start(12, 2, None, PID + 1)
    writer.finish(first, failed=False)
    writer.finish(second, failed=True)
    stores.writer("run-b", "w1").start(13, 1, None, PID)
    [one, two] = ledger.read("run-a")
    assert (one.job_id, one.attempt, one.pid, one.idempotency_key, one.failed) == (
        11,
        1,
        PID,
        "k-11",
        False,
    )
    assert (two.job_id, two.attempt, two.pid, two.idempotency_key, two.failed) == (
        12,
        2,
        PID + 1,
        None,
        True,
    )
    assert one.finished_at is not None and one.finished_at >= one.started_at
    ledger.delete_run("run-a")
    assert ledger.read("run-a") == []
    assert [r.job_id for r in ledger.read("run-b")] == [13]


def test_the_probe_finds_a_returned_execution_until_it_is_acknowledged(stores: Stores) -> None:
    stores.ledger.create()
    job_id = running_job(stores.jobs)
    writer = stores.writer("run", "w0")
    with_probe = stores.ledger.probe("run", f"{stores.names}control")
    try:
        entry = writer.start(job_id, 1, None, PID)
        assert (with_probe.running(PID), with_probe.returned(PID)) == (1, 0)
        writer.finish(entry, failed=False)
        assert (with_probe.running(PID), with_probe.returned(PID)) == (0, job_id)
        assert with_probe.returned(PID + 1) == 0  # another worker's pid
        assert with_probe.exposed(PID) == 0  # no key: nothing between return and record
        stores.jobs.complete_many([Completion(job_id, 1)])
        assert with_probe.returned(PID) == 0  # acknowledged
    finally:
        with_probe.close()


def test_a_failed_execution_is_not_a_returned_one(stores: Stores) -> None:
    stores.ledger.create()
    job_id = running_job(stores.jobs)
    writer = stores.writer("run", "w0")
    probe = stores.ledger.probe("run", f"{stores.names}control")
    try:
        writer.finish(writer.start(job_id, 1, None, PID), failed=True)
        assert (probe.returned(PID), probe.running(PID), probe.exposed(PID)) == (0, 0, 0)
    finally:
        probe.close()


def test_a_keyed_execution_is_exposed_until_the_guard_records_its_key(stores: Stores) -> None:
    stores.ledger.create()
    job_id = running_job(stores.jobs, key="order-7")
    writer = stores.writer("run", "w0")
    probe = stores.ledger.probe("run", f"{stores.names}control")
    try:
        assert stores.keys.begin_key("order-7", "app.jobs.pay", job_id) is None
        writer.finish(writer.start(job_id, 1, "order-7", PID), failed=False)
        assert (probe.returned(PID), probe.exposed(PID)) == (0, 1)
        stores.keys.complete_key("order-7", "app.jobs.pay", {"ok": True}, job_id)
        assert (probe.returned(PID), probe.exposed(PID)) == (job_id, 0)
    finally:
        probe.close()


def test_terminate_ends_the_sessions_of_a_prefix_and_a_writer_reconnects(stores: Stores) -> None:
    ledger = stores.ledger
    ledger.create()
    name = f"{stores.names}w0"
    writer = stores.writer("run", "w0")
    assert ledger.backends(name) == 0  # a writer connects on its first write
    writer.start(1, 1, None, PID)
    assert ledger.backends(name) == 1
    probe = ledger.probe("run", f"{stores.names}control")
    try:
        assert not probe.active(name)  # idle between writes
        assert probe.terminate(stores.names) == 1  # the writer's, never the probe's own
        wait_until(lambda: ledger.backends(name) == 0, 10.0, message="the backend to end")
        assert probe.running(PID) == 1  # the probe's session still answers
        writer.start(2, 1, None, PID)  # reconnects
        assert [r.job_id for r in ledger.read("run")] == [1, 2]
        assert ledger.backends(name) == 1
    finally:
        probe.close()
