"""JobHandle polling, with a 30-line in-memory store double and a fake clock."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from queue_runtime.errors import JobFailed, JobNotFound, JobTimeout
from queue_runtime.handle import InlineHandle, JobHandle
from queue_runtime.store import JobRecord, JobStatus


@dataclass
class ScriptedStore:
    """``get`` answers the next status of a script (the last one repeats)."""

    statuses: list[JobStatus]
    result: object = None
    calls: int = 0

    def get(self, job_id: int) -> JobRecord | None:
        if not self.statuses:
            return None
        status = self.statuses[min(self.calls, len(self.statuses) - 1)]
        self.calls += 1
        return JobRecord(
            id=job_id,
            name="app.j",
            pool="batch",
            status=status,
            args={},
            attempt=1,
            max_attempts=3,
            result=self.result,
            error="ValueError: x" if status is JobStatus.DEAD else None,
        )


@dataclass
class FakeRuntime:
    store: ScriptedStore
    slept: list[float] = field(default_factory=list)


def handle_for(*statuses: JobStatus, result: object = None) -> tuple[JobHandle, FakeRuntime]:
    runtime = FakeRuntime(ScriptedStore(list(statuses), result))
    return JobHandle(7, runtime), runtime  # type: ignore[arg-type]


def test_wait_polls_with_a_growing_interval_until_final() -> None:
    running = [JobStatus.QUEUED] + [JobStatus.RUNNING] * 8
    handle, runtime = handle_for(*running, JobStatus.SUCCEEDED, result={"ok": 1})
    assert handle.wait(timeout=None, sleep=runtime.slept.append) is JobStatus.SUCCEEDED
    assert runtime.slept[:4] == [0.01, 0.02, 0.04, 0.08]
    assert max(runtime.slept) == 0.5 and len(runtime.slept) == 9
    assert handle.result() == {"ok": 1}


def test_wait_times_out_with_the_last_status() -> None:
    handle, _ = handle_for(JobStatus.RUNNING)
    with pytest.raises(JobTimeout, match=r"job 7 is still running after 0\.05s"):
        handle.wait(timeout=0.05)


def test_dead_and_missing_jobs() -> None:
    dead, _ = handle_for(JobStatus.DEAD)
    with pytest.raises(JobFailed, match=r"job 7 \(app.j\) is dead: ValueError: x"):
        dead.result(timeout=1)
    gone, _ = handle_for()
    with pytest.raises(JobNotFound, match="7"):
        gone.status()


def test_inline_handles_carry_their_outcome() -> None:
    ok = InlineHandle("app.j", result=3)
    failed = InlineHandle("app.j", error=KeyError("k"))
    assert (ok.status(), ok.result(), ok.record().result) == (JobStatus.SUCCEEDED, 3, 3)
    assert ok.id < 0 and failed.id < ok.id  # never a stored id
    assert failed.wait() is JobStatus.DEAD and failed.record().error == "KeyError: 'k'"
    with pytest.raises(JobFailed, match="KeyError"):
        failed.result()
