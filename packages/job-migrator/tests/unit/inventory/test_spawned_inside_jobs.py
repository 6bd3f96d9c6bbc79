"""Work a job spawns or awaits inside itself is the job's work (issue 26): the spawn API is
no gap (the whole census's ``asyncio.AbstractEventLoop.run_in_executor`` / ``.create_task``
and ``asyncio.Task`` blocked 99 verdicts), the callable it is handed is followed like a
direct call, and a callable the scan cannot name stays a gap that names it."""

from __future__ import annotations

import textwrap
from pathlib import Path

from inventory import scan
from inventory.models import EffectKind, Idempotency, Job

JOBS = """
import asyncio
import functools
import threading
from concurrent.futures import ThreadPoolExecutor

import anyio
import requests
from starlette.concurrency import run_in_threadpool


def resize(photo_id, width=64):
    return photo_id * width


async def describe(photo_id):
    return str(photo_id)


def publish(photo_id):
    requests.post("https://feed.example.com", json={"photo": photo_id})


async def awaited(photo_id):
    loop = asyncio.get_running_loop()
    await loop.run_in_executor(None, resize, photo_id)
    await loop.run_in_executor(None, functools.partial(resize, photo_id, width=32))
    await asyncio.to_thread(resize, photo_id)
    await anyio.to_thread.run_sync(resize, photo_id)
    await run_in_threadpool(resize, photo_id)
    await asyncio.Task(describe(photo_id))
    await loop.create_task(describe(photo_id))
    await asyncio.ensure_future(describe(photo_id))
    await asyncio.gather(describe(photo_id), describe(photo_id))
    await asyncio.wait_for(describe(photo_id), timeout=5)
    async with asyncio.TaskGroup() as group:
        group.create_task(describe(photo_id))


def drained(photo_id):
    with ThreadPoolExecutor() as pool:
        pool.submit(publish, photo_id).result()


def drained_library(url):
    with ThreadPoolExecutor() as pool:
        future = pool.submit(requests.post, url, json={})
        return future.result()


def drained_lambda(photo_id):
    with ThreadPoolExecutor() as pool:
        return pool.submit(lambda: publish(photo_id)).result()


def handed(photo_id, hook):
    with ThreadPoolExecutor() as pool:
        return pool.submit(hook, photo_id).result()


class Worker:
    async def run(self, photo_id):
        await self._loop.create_task(describe(photo_id))
        self._loop.stop()


async def view(request):
    uid = request.user.id
    asyncio.create_task(awaited(uid))
    asyncio.create_task(Worker().run(uid))
    threading.Thread(target=drained, args=(uid,)).start()
    threading.Thread(target=drained_library, args=(request.url,)).start()
    threading.Thread(target=drained_lambda, args=(uid,)).start()
    threading.Thread(target=handed, args=(uid, request.hook)).start()
"""


def _jobs(tmp_path: Path) -> dict[str, Job]:
    for rel, text in {"app/__init__.py": "", "app/jobs.py": JOBS}.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    return {j.qualname: j for j in scan(tmp_path, use_cache=False, jobs=1).jobs}


def _messages(job: Job) -> str:
    return "\n".join(e.message for e in job.evidence)


def test_awaited_spawn_apis_are_no_gap_and_their_work_is_followed(tmp_path: Path) -> None:
    job = _jobs(tmp_path)["app.jobs.awaited"]
    assert job.idempotency == Idempotency.IDEMPOTENT, _messages(job)
    assert job.effects == []


def test_a_future_waited_for_in_place_runs_its_callable_for_the_job(tmp_path: Path) -> None:
    """No site (the job waits for it), yet ``publish``'s POST is the job's."""
    jobs = _jobs(tmp_path)
    for name in ("drained", "drained_lambda"):
        job = jobs[f"app.jobs.{name}"]
        assert job.idempotency == Idempotency.NON_IDEMPOTENT, _messages(job)
        posts = [e for e in job.effects if e.kind == EffectKind.HTTP_POST]
        assert [e.chain for e in posts] == [[f"app.jobs.{name}", "app.jobs.publish"]]


def test_a_library_callable_is_matched_as_if_called_there(tmp_path: Path) -> None:
    job = _jobs(tmp_path)["app.jobs.drained_library"]
    assert job.idempotency == Idempotency.NON_IDEMPOTENT, _messages(job)
    assert [e.api for e in job.effects] == ["requests.post"]
    assert "unresolved" not in _messages(job)


def test_a_callable_the_scan_cannot_name_stays_a_gap_naming_it(tmp_path: Path) -> None:
    job = _jobs(tmp_path)["app.jobs.handed"]
    assert job.idempotency == Idempotency.UNKNOWN
    messages = _messages(job)
    assert "hook" in messages
    assert "submit" not in messages.replace("handed to submit", "")


def test_a_loop_named_receiver_is_an_event_loop_only_for_spawn_methods(tmp_path: Path) -> None:
    """``self._loop.create_task(coro)`` is explained; ``self._loop.stop()`` stays a gap."""
    job = _jobs(tmp_path)["app.jobs.Worker.run"]
    messages = _messages(job)
    assert "self._loop.stop" in messages
    assert "create_task" not in messages
