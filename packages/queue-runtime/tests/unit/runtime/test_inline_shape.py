"""An inline run keeps the call site's old shape (``.options(inline=InlineShape...)``).

While a job runs inline (inline mode, or the gate keeps a gated job inline),
a site that used to start a thread, submit to an executor or create a task
still runs the job in the background, never in the request; a direct call
stays a direct call. Arguments are validated before anything runs.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest

from queue_runtime import InlineShape, Mode, Runtime, Settings, configure, job
from queue_runtime import runtime as runtime_module
from queue_runtime.errors import ConfigError, JobTimeout, PayloadError
from queue_runtime.registry import Registry
from queue_runtime.store import JobStatus
from queue_runtime.testing import memory_stores

jobs = Registry()
release = threading.Event()
ran_in: list[str] = []


@job(name="tests.shape.wait", pool="batch", registry=jobs)
def wait_for_release(n: int) -> int:
    ran_in.append(threading.current_thread().name)
    assert release.wait(10)
    return n * 2


@job(name="tests.shape.guarded", pool="batch", registry=jobs, idempotent=False)
def guarded(n: int) -> int:
    ran_in.append(threading.current_thread().name)
    assert release.wait(10)
    return n + 1


@job(name="tests.shape.boom", pool="batch", registry=jobs)
def boom(n: int) -> int:
    raise ValueError(f"boom {n}")


@job(name="tests.shape.coro", pool="batch", registry=jobs)
async def coro(n: int) -> int:
    ran_in.append("task" if asyncio.current_task() is not None else "none")
    await asyncio.sleep(0)
    return n * 3


def _runtime(monkeypatch: pytest.MonkeyPatch, mode: Mode) -> Iterator[Runtime]:
    monkeypatch.setattr(runtime_module, "_current", None)
    ran_in.clear()
    release.clear()
    settings = Settings(mode=mode)
    runtime = configure(settings, stores=memory_stores(settings))
    yield runtime
    release.set()
    runtime.close()


@pytest.fixture(name="inline")
def inline_runtime(monkeypatch: pytest.MonkeyPatch) -> Iterator[Runtime]:
    yield from _runtime(monkeypatch, Mode.INLINE)


@pytest.fixture(name="queued")
def queue_runtime(monkeypatch: pytest.MonkeyPatch) -> Iterator[Runtime]:
    yield from _runtime(monkeypatch, Mode.QUEUE)


def test_a_thread_site_runs_in_a_thread_and_enqueue_returns_at_once(inline: Runtime) -> None:
    handle = wait_for_release.options(inline=InlineShape.THREAD).enqueue(21)
    assert handle.status() is JobStatus.RUNNING  # the job waits: enqueue did not
    with pytest.raises(JobTimeout):
        handle.wait(timeout=0.01)
    release.set()
    assert handle.result(timeout=5) == 42
    assert ran_in == ["inline tests.shape.wait"]
    assert handle.status() is JobStatus.SUCCEEDED


def test_a_direct_call_stays_a_direct_call(inline: Runtime) -> None:
    release.set()
    handle = wait_for_release.enqueue(1)
    assert handle.status() is JobStatus.SUCCEEDED
    assert ran_in == [threading.current_thread().name]


def test_an_executor_site_goes_through_its_executor(inline: Runtime) -> None:
    with ThreadPoolExecutor(1, thread_name_prefix="site-pool") as pool:
        handle = wait_for_release.options(inline=InlineShape.EXECUTOR, executor=pool).enqueue(2)
        release.set()
        assert handle.result(timeout=5) == 4
    assert ran_in[0].startswith("site-pool")


def test_executor_without_one_uses_the_running_loops_default(inline: Runtime) -> None:
    async def handler() -> int:
        handle = wait_for_release.options(inline=InlineShape.EXECUTOR).enqueue(5)
        release.set()
        await asyncio.to_thread(handle.wait, 5)
        return int(handle.result())

    assert asyncio.run(handler()) == 10
    assert ran_in[0].startswith("asyncio")


def test_a_task_site_runs_a_coroutine_job_on_the_loop(inline: Runtime) -> None:
    async def handler() -> int:
        handle = coro.options(inline=InlineShape.TASK).enqueue(2)
        assert handle.status() is JobStatus.RUNNING
        for _ in range(100):
            if handle.status() is not JobStatus.RUNNING:
                break
            await asyncio.sleep(0)
        return int(handle.result(timeout=0))

    assert asyncio.run(handler()) == 6
    assert ran_in == ["task"]


def test_arguments_are_validated_before_anything_runs(inline: Runtime) -> None:
    with pytest.raises(PayloadError):
        wait_for_release.options(inline=InlineShape.THREAD).enqueue(object())  # type: ignore[arg-type]
    assert ran_in == []


def test_a_background_failure_is_logged_and_is_the_handles_outcome(
    inline: Runtime, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.ERROR, logger="queue_runtime"):
        handle = boom.options(inline=InlineShape.THREAD).enqueue(7)
        assert handle.wait(timeout=5) is JobStatus.DEAD
    assert "job tests.shape.boom failed inline: boom 7" in caplog.text
    error = handle.record().error
    assert error is not None and "ValueError: boom 7" in error


def test_the_gate_keeps_a_gated_job_inline_in_its_old_shape(queued: Runtime) -> None:
    handle = guarded.options(inline=InlineShape.THREAD).enqueue(1)
    assert handle.status() is JobStatus.RUNNING and handle.id < 0  # not stored: inline
    release.set()
    assert handle.result(timeout=5) == 2
    assert ran_in == ["inline tests.shape.guarded"]


def test_an_executor_goes_only_with_the_executor_shape() -> None:
    with ThreadPoolExecutor(1) as pool, pytest.raises(ConfigError):
        wait_for_release.options(inline=InlineShape.THREAD, executor=pool)
