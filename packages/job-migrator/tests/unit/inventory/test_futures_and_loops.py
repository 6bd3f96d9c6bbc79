"""Futures, tasks and event loops inside a job (issue 26): the whole census's top verdict
blockers at 89a0611 were asyncio's own machinery (``task.add_done_callback`` 47 jobs,
``asyncio.run`` 18, ``asyncio.set_event_loop`` 16, ``task.cancel`` 13, ``new_event_loop``
13, ``run_until_complete`` 13). What asyncio documents them to do decides: a future's
methods run nothing, ``add_done_callback(fn)`` calls ``fn`` later (followed like any
handed callable), ``asyncio.run(coro(a))`` runs a coroutine made by a call of its own,
and making, setting or closing a loop is in-process bookkeeping. A ``cancel`` of anything
else keeps its own meaning."""

from __future__ import annotations

import textwrap
from pathlib import Path

from inventory import scan
from inventory.models import EffectKind, Idempotency, Job

JOBS = """
import asyncio
from concurrent.futures import ThreadPoolExecutor

import requests


async def describe(photo_id):
    return str(photo_id)


async def post_later(photo_id):
    requests.post("https://feed.example.com", json={"photo": photo_id})


def publish(photo_id):
    requests.post("https://feed.example.com", json={"photo": photo_id})


def forget(task):
    return task


class Hub:
    def __init__(self):
        self.loop = asyncio.get_event_loop()
        self._tasks = set()

    def track(self, photo_id):
        task = self.loop.create_task(describe(photo_id))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        task.set_name(f"describe-{photo_id}")
        task_bucket = self._tasks if photo_id else set()
        task_bucket.add(task)
        task.add_done_callback(task_bucket.remove)
        return task

    def stop(self):
        for task in list(self._tasks):
            task.cancel()


async def tracked(photo_id):
    task = asyncio.create_task(describe(photo_id))
    task.add_done_callback(forget)
    await task
    if not task.done():
        task.cancel()
    return task.result()


async def announced(photo_id):
    task = asyncio.create_task(describe(photo_id))
    task.add_done_callback(lambda _: publish(photo_id))


def in_a_loop_of_its_own(photo_id):
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    try:
        return loop.run_until_complete(describe(photo_id))
    finally:
        loop.close()


def run_to_completion(photo_id):
    return asyncio.run(describe(photo_id))


def run_posts(photo_id):
    asyncio.run(post_later(photo_id))


def pooled(photo_id):
    with ThreadPoolExecutor() as pool:
        future = pool.submit(len, str(photo_id))
        future.add_done_callback(forget)
        return future.result()


def handed(future, hook):
    future.add_done_callback(hook)


class Upload:
    def cancel(self):
        requests.post("https://storage.example.com/abort", json={})


def abort(upload: Upload):
    upload.cancel()


def view(request):
    uid = request.user.id
    pool = ThreadPoolExecutor()
    hub = Hub()
    asyncio.create_task(tracked(uid))
    asyncio.create_task(announced(uid))
    pool.submit(hub.track, uid)
    pool.submit(hub.stop)
    pool.submit(in_a_loop_of_its_own, uid)
    pool.submit(run_to_completion, uid)
    pool.submit(run_posts, uid)
    pool.submit(pooled, uid)
    pool.submit(handed, request.future, request.hook)
    pool.submit(abort, request.upload)
"""


def _jobs(tmp_path: Path) -> dict[str, Job]:
    return _scan_source(tmp_path, JOBS)


def _scan_source(root: Path, source: str) -> dict[str, Job]:
    for rel, text in {"app/__init__.py": "", "app/jobs.py": source}.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    return {j.qualname: j for j in scan(root, use_cache=False, jobs=1).jobs}


def _messages(job: Job) -> str:
    return "\n".join(e.message for e in job.evidence)


def test_a_future_s_own_methods_and_loop_bookkeeping_block_no_verdict(tmp_path: Path) -> None:
    jobs = _jobs(tmp_path)
    for name in ("Hub.track", "tracked", "in_a_loop_of_its_own", "pooled"):
        job = jobs[f"app.jobs.{name}"]
        assert job.idempotency == Idempotency.IDEMPOTENT, (name, _messages(job))
        assert job.effects == [], name


def test_asyncio_run_runs_the_coroutine_s_work_for_the_job(tmp_path: Path) -> None:
    jobs = _jobs(tmp_path)
    assert jobs["app.jobs.run_to_completion"].idempotency == Idempotency.IDEMPOTENT
    posts = jobs["app.jobs.run_posts"]
    assert posts.idempotency == Idempotency.NON_IDEMPOTENT, _messages(posts)
    assert [e.kind for e in posts.effects] == [EffectKind.HTTP_POST]


def test_a_done_callback_is_the_job_s_work(tmp_path: Path) -> None:
    """``publish`` runs once the task is done: its POST is the job's."""
    job = _jobs(tmp_path)["app.jobs.announced"]
    assert job.idempotency == Idempotency.NON_IDEMPOTENT, _messages(job)
    assert [e.chain for e in job.effects if e.kind == EffectKind.HTTP_POST] == [
        ["app.jobs.announced", "app.jobs.publish"]
    ]


def test_a_callback_the_scan_cannot_name_stays_a_gap_that_names_it(tmp_path: Path) -> None:
    job = _jobs(tmp_path)["app.jobs.handed"]
    assert job.idempotency == Idempotency.UNKNOWN
    assert "hook" in _messages(job)


def test_cancel_of_something_else_keeps_its_meaning(tmp_path: Path) -> None:
    """``upload.cancel()`` is the project's POST; and ``task.cancel()`` on an element of a
    set the scan cannot type may be that same method, so it stays a gap naming it."""
    jobs = _jobs(tmp_path)
    job = jobs["app.jobs.abort"]
    assert job.idempotency == Idempotency.NON_IDEMPOTENT, _messages(job)
    assert [e.kind for e in job.effects] == [EffectKind.HTTP_POST]
    stop = jobs["app.jobs.Hub.stop"]
    assert stop.idempotency == Idempotency.UNKNOWN
    assert "task.cancel" in _messages(stop) and "Upload.cancel" in _messages(stop)


def test_a_project_class_with_the_future_protocol_s_name_keeps_a_guess_a_gap(
    tmp_path: Path,
) -> None:
    """Taking ``x.add_done_callback(f)`` on a receiver of unknown type for a future's must not
    hide a project method of that name: here ``Order.add_done_callback`` posts and may be what
    runs for ``settle``'s parameter, so the guess by method name still follows it."""
    jobs = JOBS.replace(
        "def view(request):",
        """class Order:
    def add_done_callback(self, fn):
        requests.post("https://pay.example.com/hooks", json={})


def settle(thing):
    thing.add_done_callback(forget)


def view(request):
    ThreadPoolExecutor().submit(settle, request.thing)""",
    )
    for rel, text in {"app/__init__.py": "", "app/jobs.py": jobs}.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    found = {j.qualname: j for j in scan(tmp_path, use_cache=False, jobs=1).jobs}
    settle = found["app.jobs.settle"]
    assert settle.idempotency != Idempotency.IDEMPOTENT, _messages(settle)
    assert "Order" in _messages(settle)
    # a future the scan typed is still one: the project's Order does not change it
    assert found["app.jobs.tracked"].idempotency == Idempotency.IDEMPOTENT


LOADER = """
import asyncio
from concurrent.futures import ThreadPoolExecutor

import requests


class Loader:
    def start(self, loop):
        self._ready = loop.create_future()
        self._failed = loop.create_future()

    def finish(self, data):
        try:
            self._ready.set_result(data)
        except Exception as exc:
            self._failed.set_exception(exc)


class Payment:
    def set_result(self, outcome):
        requests.post("https://pay.example.com/result", json={"outcome": outcome})


def settle(payment, outcome):
    payment.set_result(outcome)


def view(request):
    pool = ThreadPoolExecutor()
    pool.submit(Loader().finish, request.body)
    pool.submit(settle, request.payment, "ok")
"""


def test_completing_a_future_of_unknown_type_runs_nothing(tmp_path: Path) -> None:
    """``set_result`` / ``set_exception`` are names only the future protocol has: on an
    attribute made in another method (``self._ready = loop.create_future()``), whose type
    the scan does not carry, completing the future wakes its waiter in this process and
    blocks no verdict."""
    without_payment = LOADER.replace('pool.submit(settle, request.payment, "ok")', "")
    without_payment = (
        without_payment.split("class Payment:")[0]
        + without_payment.split("payment.set_result(outcome)\n")[1]
    )
    finish = _scan_source(tmp_path, without_payment)["app.jobs.Loader.finish"]
    assert finish.idempotency == Idempotency.IDEMPOTENT, _messages(finish)
    assert finish.effects == []


def test_a_project_method_named_set_result_is_still_guessed(tmp_path: Path) -> None:
    """A project method of that name may be what runs for an untyped receiver: the guess by
    method name follows it, for a parameter and for the attribute alike."""
    found = _scan_source(tmp_path, LOADER)
    settle = found["app.jobs.settle"]
    assert settle.idempotency != Idempotency.IDEMPOTENT, _messages(settle)
    assert "Payment" in _messages(settle)
    finish = found["app.jobs.Loader.finish"]
    assert finish.idempotency != Idempotency.IDEMPOTENT, _messages(finish)
    assert "Payment.set_result" in _messages(finish)


CURRENT_TASK = """
import asyncio


async def labelled(name, coro):
    task = asyncio.current_task()
    if task is not None:
        task.set_name(f"bounded[{name}]")
    try:
        return await coro
    finally:
        if task is not None and task.cancelled():
            task.uncancel()


async def other(name, coro):
    task = current()
    task.set_name(name)
    return await coro


async def tick():
    return 1


async def view(request):
    asyncio.create_task(labelled("x", tick()))
    asyncio.create_task(other("x", tick()))
"""


def test_the_running_task_is_a_task(tmp_path: Path) -> None:
    """``asyncio.current_task()`` gives "the currently running Task instance, or None": its
    ``set_name`` and ``cancelled`` are the task's own bookkeeping. A ``task`` that some
    unknown call returned stays a gap. (``await coro`` runs the coroutine each caller
    hands: here a project one that does nothing.)"""
    jobs = _scan_source(tmp_path, CURRENT_TASK)
    labelled = jobs["app.jobs.labelled"]
    assert labelled.idempotency == Idempotency.IDEMPOTENT, _messages(labelled)
    assert "task.set_name" not in _messages(labelled)
    assert "task.set_name" in _messages(jobs["app.jobs.other"])
