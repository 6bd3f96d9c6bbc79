"""Django's task API on the runtime: enqueue, a real worker, get_result with every field.

Real PostgreSQL and Redis; real ``queue-runtime worker --django-settings`` processes
that import no task module up front (the backend finds tasks by module path).
"""

from __future__ import annotations

import asyncio
import json
import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from queue_runtime import JobStatus, job
from queue_runtime.runtime import Runtime
from queue_runtime.testing import WorkerSpawner
from tests.integration.django_tasks.conftest import start_worker
from tests.support import wait_until

pytestmark = [pytest.mark.pg, pytest.mark.redis, pytest.mark.slow]


def _finished(task: Any, result_id: str, timeout: float = 30) -> Any:
    found: list[Any] = []

    def done() -> bool:
        found[:] = [task.get_result(result_id)]
        return bool(found[0].is_finished)

    wait_until(done, timeout=timeout, message=f"task result {result_id} finished")
    return found[0]


def _signals(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_a_task_enqueued_runs_in_a_worker_and_its_result_has_every_field(
    runtime: Runtime, workers: WorkerSpawner, worker_env: dict[str, str]
) -> None:
    from djtasks.tasks import add

    from queue_runtime.django._compat import TaskResultStatus

    enqueued = add.enqueue(2, b=3)
    assert enqueued.status == TaskResultStatus.READY and enqueued.id.isdigit()
    assert (enqueued.args, enqueued.kwargs, enqueued.backend) == ([2], {"b": 3}, "default")
    record = runtime.store.get(int(enqueued.id))
    assert record is not None and record.name == "djtasks.tasks.add" and record.pool == "batch"
    assert record.args == {"args": [2], "kwargs": {"b": 3}}

    start_worker(workers, runtime.settings)
    result = _finished(add, enqueued.id)
    assert result.status == TaskResultStatus.SUCCESSFUL, workers.logs()
    assert result.return_value == 5
    assert (result.args, result.kwargs, result.errors) == ([2], {"b": 3}, [])
    assert len(result.worker_ids) == 1 and result.worker_ids[0].count(":") == 2
    assert result.enqueued_at <= result.started_at <= result.finished_at
    assert result.last_attempted_at == result.started_at
    enqueued.refresh()
    assert enqueued.status == TaskResultStatus.SUCCESSFUL and enqueued.return_value == 5
    seen = [(s["signal"], s["status"]) for s in _signals(Path(worker_env["DJTASKS_SIGNALS"]))]
    assert seen == [("started", "RUNNING"), ("finished", "SUCCESSFUL")]


def test_retries_leave_one_worker_id_and_one_error_with_its_traceback_per_attempt(
    runtime: Runtime, workers: WorkerSpawner, worker_env: dict[str, str]
) -> None:
    from djtasks.tasks import always_fails

    from queue_runtime.django._compat import TaskResultStatus

    enqueued = always_fails.enqueue("x")
    start_worker(workers, runtime.settings)
    result = _finished(always_fails, enqueued.id)
    assert result.status == TaskResultStatus.FAILED, workers.logs()
    assert result.attempts == 3 == len(result.errors)  # retries=2
    assert {e.exception_class_path for e in result.errors} == {"djtasks.tasks.Refused"}
    assert all("refused: x" in e.traceback and "Traceback" in e.traceback for e in result.errors)
    # As django-tasks-db's worker test_failing_task: the traceback ends with the exception line.
    assert result.errors[-1].traceback.endswith("djtasks.tasks.Refused: refused: x\n")
    assert result.errors[0].exception_class.__name__ == "Refused"
    assert result.started_at < result.last_attempted_at <= result.finished_at
    with pytest.raises(ValueError, match="Task failed"):
        _ = result.return_value
    signals = _signals(Path(worker_env["DJTASKS_SIGNALS"]))
    assert [s["signal"] for s in signals] == ["started", "started", "started", "finished"]
    assert signals[-1]["status"] == "FAILED" and signals[-1]["attempts"] == 3


def test_a_task_that_takes_context_sees_its_attempt_and_the_earlier_workers(
    runtime: Runtime, workers: WorkerSpawner
) -> None:
    from djtasks.tasks import fails_once

    from queue_runtime.django._compat import TaskResultStatus

    enqueued = fails_once.enqueue("m")
    start_worker(workers, runtime.settings)
    result = _finished(fails_once, enqueued.id)
    assert result.status == TaskResultStatus.SUCCESSFUL, workers.logs()
    assert result.return_value["attempt"] == 2
    assert result.return_value["worker_ids"] == result.worker_ids and result.attempts == 2
    assert [e.exception_class_path for e in result.errors] == ["builtins.ValueError"]


def test_async_tasks_and_the_async_api(runtime: Runtime, workers: WorkerSpawner) -> None:
    from djtasks.tasks import async_double

    from queue_runtime.django._compat import TaskResultStatus

    async def enqueue_then_read() -> tuple[Any, Any]:
        enqueued = await async_double.aenqueue(21)
        return enqueued, await async_double.aget_result(enqueued.id)

    enqueued, read = asyncio.run(enqueue_then_read())
    assert read.status == TaskResultStatus.READY and read.args == [21]
    start_worker(workers, runtime.settings)
    result = _finished(async_double, enqueued.id)
    assert result.status == TaskResultStatus.SUCCESSFUL, workers.logs()
    assert result.return_value == 42


class NoThreads(ThreadPoolExecutor):
    """A loop's default executor that refuses work: ``to_thread`` and ``sync_to_async`` fail."""

    def submit(self, *args: Any, **kwargs: Any) -> Any:
        raise AssertionError("went to a worker thread")


def test_many_concurrent_aenqueues_from_one_loop_use_no_thread_and_all_land(
    settings: Any,
) -> None:
    from djtasks.tasks import add

    from queue_runtime import configure
    from queue_runtime.django._compat import TaskResultStatus

    # The gate's tables are read once here (the first aenqueue, in a thread) and not again.
    rt = configure(settings.model_copy(update={"rollout_refresh": 600.0}))

    async def enqueue_all() -> tuple[list[Any], set[threading.Thread], set[threading.Thread]]:
        await add.aenqueue(0, 0)  # opens this loop's pool, reads the gate's tables
        asyncio.get_running_loop().set_default_executor(NoThreads(max_workers=1))
        before = set(threading.enumerate())
        results = await asyncio.gather(*(add.aenqueue(i, 1) for i in range(300)))
        return list(results), before, set(threading.enumerate())

    try:
        results, before, after = asyncio.run(enqueue_all())
        # No thread started (one may have ended meanwhile), and nothing went to the loop's
        # executor. Django's own sync receiver of task_enqueued still runs through asend's
        # sync_to_async, on asgiref's one thread-sensitive thread (started by the warm-up).
        assert after <= before
        assert len({r.id for r in results}) == 300
        assert [r.args for r in results] == [[i, 1] for i in range(300)]
        for result in results:  # read back from the store, as a worker would claim them
            stored = add.get_result(result.id)
            assert stored.status == TaskResultStatus.READY and stored.args == result.args
    finally:
        rt.close()


def test_in_inline_mode_aenqueue_still_runs_the_task(settings: Any) -> None:
    from djtasks.tasks import add, always_fails

    from queue_runtime import Mode, configure
    from queue_runtime.django._compat import TaskResultStatus

    rt = configure(settings.model_copy(update={"mode": Mode.INLINE}))

    async def both() -> tuple[Any, Any]:
        return await add.aenqueue(20, 22), await always_fails.aenqueue("now")

    try:
        done, failed = asyncio.run(both())
        assert done.status == TaskResultStatus.SUCCESSFUL and done.return_value == 42
        assert done.id.startswith("inline")
        assert failed.status == TaskResultStatus.FAILED
        assert [e.exception_class_path for e in failed.errors] == ["djtasks.tasks.Refused"]
    finally:
        rt.close()


def test_priority_queue_and_run_after_are_stored_on_the_job(runtime: Runtime) -> None:
    from djtasks.tasks import echo

    later = datetime.now(UTC) + timedelta(hours=1)
    enqueued = echo.using(priority=-20, run_after=later).enqueue(1, k="v")
    row = runtime.store.get(int(enqueued.id))
    assert row is not None and row.pool == "batch" and row.status is JobStatus.QUEUED
    claimed = runtime.store.claim("batch", 10, "test-worker")
    assert claimed == []  # due in an hour: nothing to claim now
    stats = {s.pool: s for s in runtime.store.stats()}
    assert stats["batch"].scheduled == 1


def test_enqueue_sends_task_enqueued_with_the_stored_id(runtime: Runtime) -> None:
    from djtasks.tasks import add

    from queue_runtime.django._compat import task_enqueued

    seen: list[Any] = []

    def receive(sender: type, task_result: Any, **kwargs: Any) -> None:
        seen.append((sender.__name__, task_result.id))

    task_enqueued.connect(receive)
    try:
        result = add.enqueue(1, 1)
    finally:
        task_enqueued.disconnect(receive)
    assert seen == [("TaskBackend", result.id)]


def test_get_result_of_an_unknown_id_or_a_plain_job_does_not_exist(runtime: Runtime) -> None:
    from queue_runtime.django._compat import TaskResultDoesNotExist, task_backends

    @job(name="tests.django_tasks.plain", pool="batch")
    def plain() -> None:
        return None

    handle = plain.enqueue()
    for missing in ("999999999", "not-a-number", "-1", "9" * 30, str(handle.id)):
        with pytest.raises(TaskResultDoesNotExist):
            task_backends["default"].get_result(missing)


def module_level(x: int) -> int:
    return x + 1


def test_a_bad_runtime_option_is_invalid_task_naming_it(runtime: Runtime) -> None:
    from queue_runtime.django import task
    from queue_runtime.django._compat import InvalidTask

    for options, named in (({"retries": -1}, "retries"), ({"timeout": 0}, "timeout")):
        with pytest.raises(InvalidTask, match=named):
            task(**options)(module_level)
    with pytest.raises(InvalidTask, match="idempotency='sometimes'"):
        task(idempotency="sometimes")(module_level)


def test_check_reports_a_queue_without_a_pool(runtime: Runtime) -> None:
    from queue_runtime.django import TaskBackend

    backend = TaskBackend("other", {"QUEUES": ["default", "batch", "reports"]})
    assert [m.id for m in backend.check()] == ["queue_runtime.E001"]
    assert "reports" in backend.check()[0].msg
    assert TaskBackend("fine", {"QUEUES": ["default", "batch"]}).check() == []


def test_in_inline_mode_enqueue_runs_the_task_in_the_caller(settings: Any) -> None:
    from djtasks.tasks import add, always_fails

    from queue_runtime import Mode, configure
    from queue_runtime.django._compat import TaskResultStatus

    rt = configure(settings.model_copy(update={"mode": Mode.INLINE}))
    try:
        done = add.enqueue(20, 22)
        assert done.status == TaskResultStatus.SUCCESSFUL and done.return_value == 42
        failed = always_fails.enqueue("now")
        assert failed.status == TaskResultStatus.FAILED
        assert [e.exception_class_path for e in failed.errors] == ["djtasks.tasks.Refused"]
    finally:
        rt.close()


def test_a_return_value_that_is_not_json_fails_the_task_with_type_error(
    runtime: Runtime, workers: WorkerSpawner
) -> None:
    """As django-tasks-db's worker test_complex_return_value."""
    from djtasks.tasks import returns_a_function

    from queue_runtime.django._compat import TaskResultStatus

    enqueued = returns_a_function.enqueue()
    start_worker(workers, runtime.settings)
    result = _finished(returns_a_function, enqueued.id)
    assert result.status == TaskResultStatus.FAILED, workers.logs()
    assert result.errors[0].exception_class is TypeError
    assert "Unsupported type" in result.errors[0].traceback
    assert result.started_at <= result.finished_at


def test_a_worker_finds_a_task_its_modules_never_import(
    runtime: Runtime, workers: WorkerSpawner
) -> None:
    """djtasks.late is imported by no module of the worker: the backend's loader imports it."""
    from djtasks.late import imported_by_the_loader

    from queue_runtime.django._compat import TaskResultStatus

    enqueued = imported_by_the_loader.enqueue()
    start_worker(workers, runtime.settings)
    result = _finished(imported_by_the_loader, enqueued.id)
    assert result.status == TaskResultStatus.SUCCESSFUL, workers.logs()
    assert result.return_value is True
