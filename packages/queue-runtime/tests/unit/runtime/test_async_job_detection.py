"""An ``async def`` job is still a coroutine function to whoever asks.

Frameworks decide how to run a callable by asking whether it is a coroutine
function: Starlette's ``BackgroundTasks`` awaits it or runs it in a thread, Django
dispatches an async signal receiver or view differently, asyncio's own helpers too.
A site apply left alone may hand the same function to one of them after another site
moved; if ``@job`` hid that the function is ``async``, the framework would call it in a
thread, get a coroutine nobody awaits, and the work would silently not happen.
"""

from __future__ import annotations

import asyncio
import inspect
import sys
import warnings
from dataclasses import dataclass

import pytest

from queue_runtime import job
from queue_runtime.registry import Registry

jobs = Registry()
done: list[str] = []


@job(name="tests.asyncjobs.notify", pool="batch", registry=jobs, idempotent=True)
async def notify(user: str) -> str:
    await asyncio.sleep(0)
    done.append(user)
    return user


@job(name="tests.asyncjobs.plain", pool="batch", registry=jobs, idempotent=True)
def plain(user: str) -> str:
    return user


@dataclass
class Inbox:
    owner: str

    @job(name="tests.asyncjobs.Inbox.ping", pool="batch", registry=jobs, idempotent=True)
    async def ping(self, n: int) -> str:
        return f"{self.owner}:{n}"


def test_an_async_job_says_it_is_a_coroutine_function() -> None:
    if sys.version_info >= (3, 12):  # inspect reads a marker on objects from 3.12 on
        assert inspect.iscoroutinefunction(notify)
        assert inspect.iscoroutinefunction(Inbox("a").ping)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # asyncio's, deprecated in 3.14
        assert asyncio.iscoroutinefunction(notify)
        assert asyncio.iscoroutinefunction(Inbox("a").ping)
        assert not asyncio.iscoroutinefunction(plain)
    assert inspect.iscoroutinefunction(type(notify).__call__)
    assert not inspect.iscoroutinefunction(plain)


def test_calling_an_async_job_still_gives_what_awaiting_the_function_gave() -> None:
    assert asyncio.run(notify("ann")) == "ann"
    assert asyncio.run(Inbox("bo").ping(3)) == "bo:3"


@pytest.mark.parametrize("target", ["notify", "bound"])
def test_starlette_background_tasks_await_it_and_the_work_happens(target: str) -> None:
    background = pytest.importorskip("starlette.background", reason="starlette (FastAPI's)")
    utils = pytest.importorskip("starlette._utils", reason="starlette (FastAPI's)")
    assert utils.is_async_callable(notify) and utils.is_async_callable(Inbox("a").ping)
    assert not utils.is_async_callable(plain)
    done.clear()
    tasks = background.BackgroundTasks()
    if target == "notify":
        tasks.add_task(notify, "cy")
    else:
        tasks.add_task(Inbox("cy").ping, 1)
        tasks.add_task(notify, "cy")
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # "coroutine ... was never awaited"
        asyncio.run(tasks())
    assert done == ["cy"]


def test_django_awaits_it_as_a_signal_receiver() -> None:
    """Django (5.0+) sends to async receivers by awaiting them; a receiver it took for
    sync would be called and its coroutine dropped."""
    dispatch = pytest.importorskip("django.dispatch", reason="Django (the test-frameworks extra)")
    signal = dispatch.Signal()
    received: list[object] = []

    @job(name="tests.asyncjobs.on_signal", pool="batch", registry=jobs, idempotent=True)
    async def on_signal(sender: object, **kwargs: object) -> None:
        await asyncio.sleep(0)
        received.append(sender)

    signal.connect(on_signal, weak=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        asyncio.run(signal.asend(sender="order"))
    assert received == ["order"]
