"""A call whose argument no codec covers runs the way the site ran it, and is counted.

In each inline shape (direct call, thread, executor, task), in inline mode and
when the job would go async, the job gets the caller's own objects (no round
trip); the fallback is counted per job, parameter, type and reason, on a
metric, and logged once per job and process. ``raise_instead`` (the pytest
plugin's switch) raises instead.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from prometheus_client import REGISTRY

from queue_runtime import InlineShape, Mode, Runtime, Settings, configure, job
from queue_runtime import runtime as runtime_module
from queue_runtime.errors import Unencodable
from queue_runtime.fallbacks import Fallback, fallback_counts, raise_instead
from queue_runtime.registry import Registry
from queue_runtime.store import JobQuery, JobStatus
from queue_runtime.testing import memory_stores

METRIC = "queue_runtime_unencodable_fallback"
jobs = Registry()
seen: list[tuple[Any, str]] = []


@job(name="tests.fallback.hold", pool="batch", registry=jobs)
def hold(lock, n: int = 0):  # type: ignore[no-untyped-def]
    seen.append((lock, threading.current_thread().name))
    return lock


@job(name="tests.fallback.coro", pool="batch", registry=jobs)
async def coro(lock):  # type: ignore[no-untyped-def]
    seen.append((lock, "task" if asyncio.current_task() is not None else "none"))
    return lock


@pytest.fixture(params=[Mode.INLINE, Mode.QUEUE], ids=["inline-mode", "queue-mode"])
def runtime(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[Runtime]:
    monkeypatch.setattr(runtime_module, "_current", None)
    seen.clear()
    settings = Settings(mode=request.param)
    rt = configure(settings, stores=memory_stores(settings))
    yield rt
    rt.close()


def _count(name: str) -> int:
    return sum(n for f, n in fallback_counts().items() if f.job == name)


def test_a_direct_call_runs_in_the_caller_with_the_original_object(runtime: Runtime) -> None:
    lock, before = threading.Lock(), _count(hold.name)
    handle = hold.enqueue(lock, n=1)
    assert handle.status() is JobStatus.SUCCEEDED and handle.result() is lock
    assert seen == [(lock, threading.current_thread().name)]
    assert _count(hold.name) == before + 1
    reason = "no codec covers this type (register one with register_codec)"
    assert Fallback(hold.name, "lock", "_thread.lock", reason) in fallback_counts()
    assert runtime.inspector.list_jobs(JobQuery()).jobs == ()  # nothing was stored


def test_a_structure_that_contains_itself_falls_back(runtime: Runtime) -> None:
    cyclic: list[Any] = []
    cyclic.append(cyclic)
    assert hold.enqueue(cyclic).result() is cyclic
    reason = "it contains itself: not JSON"
    assert Fallback(hold.name, "lock", "builtins.list", reason) in fallback_counts()


def test_a_thread_site_runs_in_a_thread_of_its_own(runtime: Runtime) -> None:
    lock = threading.Lock()
    handle = hold.options(inline=InlineShape.THREAD).enqueue(lock)
    assert handle.result(timeout=10) is lock
    assert seen[0][0] is lock and seen[0][1].startswith("inline tests.fallback.hold")


def test_an_executor_site_runs_on_its_executor(runtime: Runtime) -> None:
    lock = threading.Lock()
    with ThreadPoolExecutor(1, thread_name_prefix="site-pool") as pool:
        handle = hold.options(inline=InlineShape.EXECUTOR, executor=pool).enqueue(lock)
        assert handle.result(timeout=10) is lock
    assert seen[0][0] is lock and seen[0][1].startswith("site-pool")


def test_a_task_site_runs_as_a_task_on_the_running_loop(runtime: Runtime) -> None:
    lock = threading.Lock()

    async def request() -> Any:
        handle = coro.options(inline=InlineShape.TASK).enqueue(lock)
        assert handle.status() is JobStatus.RUNNING  # not run in the request
        await asyncio.sleep(0)
        return handle.result(timeout=10)

    assert asyncio.run(request()) is lock
    assert seen == [(lock, "task")]


def test_one_warning_per_job_and_a_metric(
    runtime: Runtime, caplog: pytest.LogCaptureFixture
) -> None:
    name = f"tests.fallback.once.{runtime.mode}"
    once = job(name=name, pool="batch", registry=Registry())(lambda value: None)
    with caplog.at_level(logging.WARNING, logger="queue_runtime"):
        for _ in range(3):
            once.enqueue(object())
    lines = [r for r in caplog.records if name in r.getMessage()]
    assert len(lines) == 1 and "runs in-process as before" in lines[0].getMessage()
    assert _count(name) == 3
    assert REGISTRY.get_sample_value(f"{METRIC}_total", {"job": name}) == 3


def test_raise_instead_raises_the_unencodable_error(runtime: Runtime) -> None:
    raise_instead(True)
    try:
        with pytest.raises(Unencodable, match="parameter 'lock'"):
            hold.enqueue(threading.Lock())
    finally:
        raise_instead(False)
    assert seen == []
