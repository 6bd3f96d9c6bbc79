"""``asyncio.run`` handed to a thread or an executor runs the coroutine it is given there.

CPython's docs: ``asyncio.run(coro)`` "executes the coroutine coro and returns the result",
on the thread that calls it. ``executor.submit(asyncio.run, self.refresh())`` (letta,
llama-stack in the census) and ``Thread(target=asyncio.run, args=(refresh(x),))`` make the
coroutine in the caller, but its body runs on the other thread: that coroutine function is
the job, with the call's arguments. Before, the job was ``asyncio.run`` itself."""

from __future__ import annotations

from collections.abc import Callable

from inventory import Inventory

Scanner = Callable[[dict[str, str]], Inventory]  # the scan_project fixture (conftest)

APP = """import asyncio
import threading
from concurrent.futures import ThreadPoolExecutor

import httpx

pool = ThreadPoolExecutor(2)


async def refresh(url):
    async with httpx.AsyncClient() as client:
        await client.post(url, json={})


def other_runner(coro):
    return coro


def submitted(request):
    pool.submit(asyncio.run, refresh("https://hooks.example.com/a"))
    return "ok"


def threaded(request):
    threading.Thread(target=asyncio.run, args=(refresh("https://hooks.example.com/b"),)).start()
    return "ok"


def blocking(request):
    asyncio.run(refresh("https://hooks.example.com/c"))  # runs here, in the request
    return "ok"


def keywords(request):
    pool.submit(asyncio.run, refresh(url="https://hooks.example.com/d"))
    return "ok"
"""


def _sites(scan_project: Scanner) -> dict[str, list[tuple[str, list[str]]]]:
    inventory = scan_project({"app.py": APP})
    found: dict[str, list[tuple[str, list[str]]]] = {}
    for site in inventory.sites:
        caller = site.enclosing_function or ""
        found.setdefault(caller.rpartition(".")[2], []).append(
            (site.job or "", [a.source for a in site.arguments])
        )
    return found


def test_the_coroutine_handed_to_asyncio_run_is_the_job(scan_project: Scanner) -> None:
    sites = _sites(scan_project)
    assert ("app.refresh", ['"https://hooks.example.com/a"']) in sites["submitted"]
    assert ("app.refresh", ['"https://hooks.example.com/b"']) in sites["threaded"]


def test_a_coroutine_run_in_place_or_with_keywords_is_not_unwrapped(
    scan_project: Scanner,
) -> None:
    sites = _sites(scan_project)
    # asyncio.run in the request blocks it: no spawn, no site of its own.
    assert all(job != "app.refresh" for job, _ in sites.get("blocking", []))
    # Keyword arguments are not read by position: the runner stays the job.
    assert all(job != "app.refresh" for job, _ in sites.get("keywords", []))
