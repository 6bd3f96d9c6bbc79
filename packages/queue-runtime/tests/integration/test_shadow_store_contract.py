"""The shadow evidence contract: PostgreSQL and the in-memory gate store answer alike.

Plus what only PostgreSQL can show: concurrent flushers (threads, processes)
add up exactly, with no count lost.
"""

from __future__ import annotations

import multiprocessing
import threading
from collections.abc import Iterator
from enum import StrEnum

import pytest

from queue_runtime.config import Settings
from queue_runtime.pg.connect import open_pool
from queue_runtime.pg.gate import PgGateStore
from queue_runtime.shadow_model import KEPT_EXAMPLES, ShadowDelta, ShadowFailure
from queue_runtime.store import GateStore
from queue_runtime.testing import MemoryGateStore

pytestmark = [pytest.mark.pg]


class Backend(StrEnum):
    PG = "pg"
    MEMORY = "memory"


@pytest.fixture
def pg_gate(settings: Settings) -> Iterator[PgGateStore]:
    store = PgGateStore(open_pool(settings, max_size=4), settings.schema_name)
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


def failure(n: int) -> ShadowFailure:
    return ShadowFailure(f"p{n}", "builtins.object", f"reason {n}")


def test_flushes_add_up_per_job_and_fingerprint(gate: GateStore) -> None:
    gate.add_shadow([ShadowDelta("a", "fp1", checked=3), ShadowDelta("b", "fp1", checked=1)])
    gate.add_shadow([ShadowDelta("a", "fp1", checked=2, failed=1, examples=(failure(1),))])
    gate.add_shadow([ShadowDelta("a", "fp2", unencodable=1)])

    found = {(e.job, e.fingerprint): e for e in gate.shadow_evidence()}
    a1 = found[("a", "fp1")]
    assert (a1.checked, a1.failed, a1.unencodable) == (5, 1, 0)
    assert a1.examples == (failure(1),)
    assert not a1.clean and found[("b", "fp1")].clean
    assert (found[("a", "fp2")].unencodable, found[("a", "fp2")].checked) == (1, 0)
    assert {e.job for e in gate.shadow_evidence("b")} == {"b"}
    assert gate.shadow_evidence("nope") == []


def test_keeps_the_newest_examples_only(gate: GateStore) -> None:
    for n in range(KEPT_EXAMPLES + 3):
        gate.add_shadow([ShadowDelta("a", "fp", checked=1, failed=1, examples=(failure(n),))])
    (record,) = gate.shadow_evidence("a")
    newest = tuple(failure(n) for n in reversed(range(3, KEPT_EXAMPLES + 3)))
    assert record.examples == newest
    assert record.failed == KEPT_EXAMPLES + 3


def test_newest_seen_first(gate: GateStore) -> None:
    gate.add_shadow([ShadowDelta("a", "old", checked=1)])
    gate.add_shadow([ShadowDelta("a", "new", checked=1)])
    assert gate.shadow_evidence("a")[0].fingerprint == "new"
    gate.add_shadow([ShadowDelta("a", "old", checked=1)])
    assert gate.shadow_evidence("a")[0].fingerprint == "old"


def test_an_empty_flush_writes_nothing(gate: GateStore) -> None:
    gate.add_shadow([])
    assert gate.shadow_evidence() == []


FLUSHES = 50


def _flush_many(settings: Settings) -> None:
    store = PgGateStore(open_pool(settings, max_size=1), settings.schema_name)
    try:
        for _ in range(FLUSHES):
            deltas = [ShadowDelta("b", "fp", checked=2), ShadowDelta("a", "fp", checked=1)]
            store.add_shadow(deltas)
    finally:
        store.close()


def test_concurrent_threads_lose_no_count(settings: Settings, pg_gate: PgGateStore) -> None:
    threads = [threading.Thread(target=_flush_many, args=(settings,)) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    found = {e.job: e.checked for e in pg_gate.shadow_evidence()}
    assert found == {"a": 4 * FLUSHES, "b": 8 * FLUSHES}


def test_concurrent_processes_lose_no_count(settings: Settings, pg_gate: PgGateStore) -> None:
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_flush_many, args=(settings,)) for _ in range(2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=120)
    assert [p.exitcode for p in procs] == [0, 0]
    found = {e.job: e.checked for e in pg_gate.shadow_evidence()}
    assert found == {"a": 2 * FLUSHES, "b": 4 * FLUSHES}
