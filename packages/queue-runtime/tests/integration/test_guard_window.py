"""Chaos: a worker SIGKILLed exactly between a keyed job's effect and its acknowledgement.

No timing luck: the job (``guard_window_app.charge``) commits its effect, then
writes its pid into a hook file and blocks; the test waits for that file,
checks the effect is committed and the job still running, and SIGKILLs that
worker. A second worker gets the job once its lease expires, and the test
shows what the execution guard does with the redelivery:

- effect and key in two commits (the default): the killed attempt left the
  key ``in_progress``; the redelivery takes it over and runs the body again:
  the effect happens twice. This is the window docs/runtime.md states.
- ``complete_in(conn, result)`` in the effect's transaction: the key completed
  with the effect; the redelivery returns the stored result and the body does
  not run again: the effect happens once.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from queue_runtime import JobStatus, Settings, configure
from queue_runtime.gate import key_state
from queue_runtime.runtime import Runtime
from queue_runtime.store import JobRecord, KeyState, KeyStatus
from tests.integration import guard_window_app as app
from tests.integration.workers import Spawner
from tests.support import wait_until

pytestmark = [pytest.mark.pg, pytest.mark.redis, pytest.mark.slow]

KEY = "order-42"


@dataclass(frozen=True)
class Crash:
    """What the test saw at the kill and after the redelivery."""

    victim: int  # the killed worker's pid
    at_kill: KeyState | None  # the key as the killed attempt left it
    redelivered_by: int  # the pid of the worker that finished the job
    record: JobRecord
    charges: list[tuple[int, int, int]]
    hooks: list[str]  # the hook files written: one per run of the body


@pytest.fixture
def workers(tmp_path: Path) -> Iterator[Spawner]:
    spawned = Spawner(tmp_path, app="tests.integration.guard_window_app")
    try:
        yield spawned
    finally:
        spawned.stop_all()


@pytest.fixture
def tuned(settings: Settings) -> Iterator[Runtime]:
    """A short lease, so the killed attempt is redelivered within seconds."""
    fast = settings.model_copy(update={"lease_ttl": 2.0, "poll_interval": 0.1})
    app.create_table(fast.database_url or "", fast.schema_name)
    runtime = configure(fast)
    try:
        yield runtime
    finally:
        runtime.close()


def _kill_between_effect_and_ack(rt: Runtime, workers: Spawner, hook: Path, atomic: bool) -> Crash:
    dsn, schema = rt.settings.database_url or "", rt.settings.schema_name
    hook.mkdir()
    handle = app.charge.enqueue(42, str(hook), atomic=atomic, idempotency_key=KEY)
    victim = workers.start(rt.settings, "--pool", "batch", "--concurrency", "1")
    signalled = hook / "attempt-1"
    wait_until(signalled.exists, timeout=30, message="the job's effect and its signal")
    assert int(signalled.read_text()) == victim.pid  # the job runs in the process we kill
    assert app.charges(dsn, schema) == [(42, victim.pid, 1)]  # the effect is committed
    assert _status(rt, handle.id) is JobStatus.RUNNING  # and not acknowledged
    at_kill = key_state(rt, KEY)
    workers.kill(victim)
    assert victim.returncode == -9
    survivor = workers.start(rt.settings, "--pool", "batch", "--concurrency", "1")
    wait_until(
        lambda: _status(rt, handle.id) is JobStatus.SUCCEEDED,
        timeout=60,
        message="the redelivered job to succeed",
    )
    record = rt.store.get(handle.id)
    assert record is not None
    hooks = sorted(p.name for p in hook.iterdir())
    return Crash(victim.pid, at_kill, _pid(survivor), record, app.charges(dsn, schema), hooks)


def _status(rt: Runtime, job_id: int) -> JobStatus | None:
    record = rt.store.get(job_id)
    return None if record is None else record.status


def _pid(proc: subprocess.Popen[bytes]) -> int:
    assert proc.poll() is None, "the second worker is still running"
    return proc.pid


def test_effect_and_key_in_two_commits_the_redelivery_runs_the_body_again(
    tuned: Runtime, workers: Spawner, tmp_path: Path
) -> None:
    crash = _kill_between_effect_and_ack(tuned, workers, tmp_path / "hook", atomic=False)
    assert crash.at_kill is not None and crash.at_kill.state is KeyStatus.IN_PROGRESS
    # The guard cannot tell "died before the effect" from "died after it": it takes the
    # key over and runs the body again. The non-idempotent effect happens twice.
    assert crash.charges == [(42, crash.victim, 1), (42, crash.redelivered_by, 2)]
    assert crash.hooks == ["attempt-1", "attempt-2"]
    assert crash.record.attempt == 2
    assert crash.record.result == {"charged": 42, "attempt": 2}
    after = key_state(tuned, KEY)
    assert after is not None and after.state is KeyStatus.COMPLETED
    assert after.result == {"charged": 42, "attempt": 2}


def test_key_completed_with_the_effect_the_redelivery_returns_the_stored_result(
    tuned: Runtime, workers: Spawner, tmp_path: Path
) -> None:
    crash = _kill_between_effect_and_ack(tuned, workers, tmp_path / "hook", atomic=True)
    assert crash.at_kill is not None and crash.at_kill.state is KeyStatus.COMPLETED
    # The redelivery finds the key completed: the body does not run, the effect stays once,
    # and the job's result is the one the killed attempt committed with its effect.
    assert crash.charges == [(42, crash.victim, 1)]
    assert crash.hooks == ["attempt-1"]
    assert crash.record.attempt == 2
    assert crash.record.result == {"charged": 42, "attempt": 1}
