"""Shadow round trips of inline runs on the real PostgreSQL: counted per job and code, flushed
in batches, kept across processes."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pytest

from queue_runtime import Settings, configure, job
from queue_runtime.config import RolloutMode
from queue_runtime.gate import fingerprint, set_rollout
from queue_runtime.handle import InlineHandle
from queue_runtime.registry import Registry
from queue_runtime.runtime import Runtime
from queue_runtime.shadow_model import ShadowEvidence

pytestmark = [pytest.mark.pg]

jobs = Registry()


@dataclass
class Doubling:
    n: int

    def __post_init__(self) -> None:  # rebuilt from its JSON it is not what was sent
        self.n *= 2


@job(name="tests.shadow.note", idempotent=True, registry=jobs)
def note(what, times=1):  # type: ignore[no-untyped-def]  # unannotated: the codecs carry it
    return None


@job(name="tests.shadow.charge", idempotency="non_idempotent", registry=jobs)
def charge(order: int) -> int:
    return order


def evidence(settings: Settings, name: str) -> ShadowEvidence | None:
    runtime = Runtime(settings)
    try:
        found = runtime.gate_store.shadow_evidence(name)
    finally:
        runtime.close()
    return found[0] if found else None


def test_inline_rollout_counts_each_call_and_flushes_at_close(settings: Settings) -> None:
    runtime = configure(settings)
    set_rollout(runtime, note.name, RolloutMode.INLINE, who="test")
    for i in range(3):
        assert isinstance(note.enqueue(i, times=2), InlineHandle)
    note.enqueue(Doubling(1))
    note.enqueue(object())  # no codec: runs as before, counted as a fallback
    assert evidence(settings, note.name) is None  # counted in memory, not flushed yet
    runtime.close()

    found = evidence(settings, note.name)
    assert found is not None
    assert (found.checked, found.failed, found.unencodable) == (4, 1, 1)
    assert found.fingerprint == fingerprint(note)
    fallback, failed = found.examples
    assert (fallback.param, fallback.type_name, fallback.fallback) == (
        "what",
        "builtins.object",
        True,
    )
    assert (failed.param, failed.reason) == (
        "what",
        "the decoded value re-encodes to different JSON",
    )
    assert failed.type_name.endswith("test_shadow_evidence.Doubling")


def test_a_gated_job_kept_inline_is_counted(settings: Settings) -> None:
    runtime = configure(settings)
    try:
        assert charge.enqueue(5).result() == 5  # not certified: the gate keeps it inline
    finally:
        runtime.close()
    found = evidence(settings, charge.name)
    assert found is not None and (found.checked, found.failed) == (1, 0)


def test_flushed_every_n_calls_without_waiting_for_exit(
    settings: Settings, wait_until: Callable[..., object]
) -> None:
    runtime = configure(settings.model_copy(update={"shadow_flush_calls": 2}))
    try:
        set_rollout(runtime, note.name, RolloutMode.INLINE, who="test")
        note.enqueue(1)
        assert evidence(settings, note.name) is None
        note.enqueue(2)  # wakes the recorder's thread, which flushes both

        def flushed() -> bool:
            found = evidence(settings, note.name)
            return found is not None and found.checked == 2

        wait_until(flushed, timeout=10, message="the second call's flush")
    finally:
        runtime.close()


def test_async_calls_are_not_counted(settings: Settings) -> None:
    runtime = configure(settings)
    try:
        set_rollout(runtime, note.name, RolloutMode.ASYNC, who="test")
        assert not isinstance(note.enqueue(1), InlineHandle)
    finally:
        runtime.close()
    assert evidence(settings, note.name) is None


def test_runtimes_of_two_processes_add_up(settings: Settings) -> None:
    for _ in range(2):  # one Runtime per process: each flushes its own counts
        runtime = configure(settings)
        set_rollout(runtime, note.name, RolloutMode.INLINE, who="test")
        note.enqueue(1)
        runtime.close()
    found = evidence(settings, note.name)
    assert found is not None and found.checked == 2


def test_the_inline_share_of_a_percentage_is_counted_one_by_one_and_in_batches(
    settings: Settings,
) -> None:
    runtime = configure(settings)
    try:
        set_rollout(runtime, note.name, RolloutMode.PERCENT, percent=0, who="test")
        note.enqueue(1)
        handles = note.enqueue_many([((i,), {}) for i in range(4)])
        assert all(isinstance(h, InlineHandle) for h in handles)
    finally:
        runtime.close()
    found = evidence(settings, note.name)
    assert found is not None and found.checked == 5
