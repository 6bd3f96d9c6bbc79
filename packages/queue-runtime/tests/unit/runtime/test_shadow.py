"""The shadow recorder and the round trip, on the in-memory gate store (no server)."""

from __future__ import annotations

from datetime import UTC, datetime

from queue_runtime.errors import StoreError, Unencodable
from queue_runtime.shadow import ShadowRecorder
from queue_runtime.shadow_model import ShadowEvidence, ShadowFailure, promotion_refusal
from queue_runtime.store import GateStore
from queue_runtime.testing import MemoryGateStore


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_counts_are_flushed_every_n_calls_or_seconds() -> None:
    store, clock = MemoryGateStore(), Clock()
    recorder = ShadowRecorder(
        lambda: store, every_calls=3, every_seconds=10.0, clock=clock, background=False
    )
    recorder.checked("j", "fp")
    recorder.checked("j", "fp", ShadowFailure("x", "builtins.object", "why"))
    assert store.shadow_evidence() == []
    recorder.checked("j", "fp")  # the third call flushes
    (found,) = store.shadow_evidence()
    assert (found.checked, found.failed) == (3, 1)
    recorder.checked("j", "fp")
    clock.now = 10.0
    recorder.unencodable("j", "fp", _unencodable())  # ten seconds later: flushed too
    (found,) = store.shadow_evidence()
    assert (found.checked, found.unencodable) == (4, 1)
    assert found.examples[0].fallback and found.examples[1].reason == "why"


def _unencodable() -> Unencodable:
    error = Unencodable("j: parameter 'x': a lock", "_thread.lock", "no codec covers it")
    error.param = "x"
    return error


def test_a_failed_flush_keeps_the_counts_for_the_next() -> None:
    store = MemoryGateStore()
    down = iter([True, False])

    def opened() -> GateStore:
        if next(down):
            raise StoreError("the database is away")
        return store

    recorder = ShadowRecorder(opened, every_calls=100, background=False)
    recorder.checked("j", "fp")
    recorder.flush()  # fails: kept
    recorder.checked("j", "fp")
    recorder.flush()
    (found,) = store.shadow_evidence()
    assert found.checked == 2


def test_the_rule_names_the_numbers() -> None:
    clean = _evidence(checked=120)
    assert promotion_refusal(clean, "j", 100) is None
    assert "only 99 of 100" in (promotion_refusal(_evidence(checked=99), "j", 100) or "")
    failed = promotion_refusal(_evidence(checked=500, failed=1), "j", 100) or ""
    assert "1 failed round trip(s) and 0 unencodable" in failed
    assert promotion_refusal(None, "j", 0) is None  # shadow_min_calls = 0: no record needed
    assert "no shadow evidence" in (promotion_refusal(None, "j", 1) or "")


def _evidence(checked: int, failed: int = 0) -> ShadowEvidence:
    now = datetime.now(UTC)
    return ShadowEvidence("j", "fp", checked, failed, 0, (), now, now)
