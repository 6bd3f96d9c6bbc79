"""Spawn wrappers of any shape: functions and methods (a module-level object's included),
the callable in any parameter position or keyword, called, in a partial or a lambda, and
wrappers of wrappers; decoys stay out when reached through a wrapper.

Each source is a small reproduction written for the test (never a package's code).
"""

from __future__ import annotations

import textwrap
from pathlib import Path

from inventory import CallSite, Pattern, scan

BACKGROUND = """
import asyncio
import threading
from concurrent.futures import ThreadPoolExecutor
from functools import partial

_pool = ThreadPoolExecutor(4)


class TaskManager:
    def __init__(self):
        self._tasks = set()

    def create_task(self, coro, *, name=None):
        task = asyncio.create_task(coro, name=name)
        self._tasks.add(task)
        return task

    def run_later(self, delay, *, callback):
        threading.Timer(delay, callback).start()


task_manager = TaskManager()


def spawn(fn, *args, **kwargs):
    threading.Thread(target=fn, args=args, kwargs=kwargs, daemon=True).start()


def submit_job(label, func, *args):
    return _pool.submit(func, *args)


def in_background(fn, *args):
    spawn(partial(fn, *args))


def fire(coro_fn, *args):
    asyncio.ensure_future(coro_fn(*args))


def run_and_wait(fn):
    worker = threading.Thread(target=fn)
    worker.start()
    worker.join()


def all_at_once(fns):
    with ThreadPoolExecutor() as ex:
        for fn in fns:
            ex.submit(fn)
"""


def _scan(tmp_path: Path, files: dict[str, str]) -> list[CallSite]:
    """The sites outside ``app/background.py`` (whose wrappers not called in a test keep
    their own site, unknown)."""
    for rel, text in {"app/__init__.py": "", "app/background.py": BACKGROUND, **files}.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    inventory = scan(tmp_path, use_cache=False, jobs=1)
    return [s for s in inventory.sites if s.location.path != "app/background.py"]


def _sites(tmp_path: Path, files: dict[str, str]) -> list[tuple[str, int, Pattern, str]]:
    return [(s.location.path, s.location.line, s.pattern, s.job) for s in _scan(tmp_path, files)]


def test_every_shape_of_wrapper_is_a_spawn_primitive_for_its_callers(tmp_path: Path) -> None:
    views = """
    from app.background import fire, in_background, spawn, submit_job, task_manager

    async def notify(user_id): ...

    def cleanup(path): ...

    async def signup(request, user_id):
        task_manager.create_task(notify(user_id), name="n")
        task_manager.run_later(5, callback=cleanup)
        spawn(cleanup, "/tmp")
        submit_job("c", cleanup, "/tmp")
        in_background(cleanup, "/x")
        fire(notify, user_id)
    """
    sites = _scan(tmp_path, {"app/views.py": views})
    found = [(s.location.path, s.location.line, s.pattern, s.job) for s in sites]
    assert not sites[0].result_used  # the wrapper keeps the task; this caller drops it
    assert found == [
        ("app/views.py", 9, Pattern.ASYNCIO_TASK, "app.views.notify"),  # a singleton's method
        ("app/views.py", 10, Pattern.THREAD, "app.views.cleanup"),  # keyword-only parameter
        ("app/views.py", 11, Pattern.THREAD, "app.views.cleanup"),
        ("app/views.py", 12, Pattern.EXECUTOR_SUBMIT, "app.views.cleanup"),  # second place
        ("app/views.py", 13, Pattern.THREAD, "app.views.cleanup"),  # partial into a wrapper
        ("app/views.py", 14, Pattern.ASYNCIO_TASK, "app.views.notify"),  # called in the wrapper
    ]


def test_a_method_handed_as_self_attribute_is_the_job(tmp_path: Path) -> None:
    views = """
    from app.background import spawn

    class Export:
        def write(self): ...

        def post(self, request):
            spawn(self.write)
            spawn(lambda: self.write())
    """
    found = _sites(tmp_path, {"app/views.py": views})
    assert [(line, job) for _, line, _, job in found] == [
        (8, "app.views.Export.write"),
        (9, "app.views.Export.write"),  # the function a lambda calls
    ]


def test_wrappers_of_wrappers_are_followed_to_depth_four(tmp_path: Path) -> None:
    chain = """
    import threading

    def level1(fn):
        threading.Thread(target=fn).start()

    def level2(job):
        level1(job)

    def level3(callback, delay=0):
        level2(callback)

    def level4(*, work):
        level3(work)

    def purge(): ...

    def view(request):
        level4(work=purge)
    """
    assert _sites(tmp_path, {"app/chain.py": chain}) == [
        ("app/chain.py", 19, Pattern.THREAD, "app.chain.purge")
    ]


def test_decoys_stay_out_when_reached_through_a_wrapper(tmp_path: Path) -> None:
    """A monitor's ``while True``, a server's accept loop, a wrapper that drains its
    executor, a future the caller waits for: no site. A wrapper that joins its thread gives sites whose
    result is used, as a thread joined in place does."""
    views = """
    from http.server import HTTPServer

    from app.background import all_at_once, run_and_wait, spawn, submit_job

    def heartbeat():
        while True:
            report()

    def report(): ...

    def boot(server: HTTPServer):
        spawn(heartbeat)
        spawn(server.serve_forever)
        all_at_once([report])
        submit_job("r", report).result()
        pending = submit_job("r", report)
        pending.result(timeout=5)
        run_and_wait(report)
    """
    found = _scan(tmp_path, {"app/views.py": views})
    assert [(s.location.line, s.job, s.result_used) for s in found] == [
        (19, "app.views.report", True)
    ]


TASKS = """
import asyncio


class Task:
    def __init__(self, coro, name=None):
        self.coro = coro
        self.task = asyncio.create_task(self.coro, name=name)


class Manager:
    def create_task(self, coro, name=None):
        return Task(coro=coro, name=name)

    async def _guarded(self, func):
        try:
            await func()
        except Exception:
            pass

    def create_permanent_task(self, func, name=None, interval=0):
        async def loop():
            while True:
                await self._guarded(func)
                await asyncio.sleep(interval)

        return self.create_task(coro=loop(), name=name)

    def every(self, interval, func):
        async def tick():
            await func()
            await asyncio.sleep(interval)

        return asyncio.ensure_future(tick())


manager = Manager()
"""


def test_a_spawn_inside_a_constructor_through_an_attribute_and_looping_closures(
    tmp_path: Path,
) -> None:
    """``Task(coro)`` whose ``__init__`` spawns ``self.coro`` (set from the parameter) is a
    wrapper; ``manager.create_task`` built on it, and ``create_permanent_task`` /
    ``every`` that spawn a closure of their own calling ``func`` (directly or through a
    helper that calls it) are wrappers too: each call names the job handed in."""
    views = """
    from app.tasks import Task, manager

    class Rates:
        async def refresh(self): ...

    rates = Rates()

    async def send_receipt(order_id): ...

    async def refund(order_id): ...

    async def checkout(request, order_id):
        manager.create_task(send_receipt(order_id), "receipt")
        Task(refund(order_id))

    def register():
        manager.create_permanent_task(rates.refresh, interval=10)
        manager.every(60, send_receipt)
    """
    found = _scan(tmp_path, {"app/tasks.py": TASKS, "app/views.py": views})
    assert [(s.location.path, s.location.line, s.pattern, s.job) for s in found] == [
        ("app/views.py", 14, Pattern.ASYNCIO_TASK, "app.views.send_receipt"),
        ("app/views.py", 15, Pattern.ASYNCIO_TASK, "app.views.refund"),
        ("app/views.py", 18, Pattern.ASYNCIO_TASK, "app.views.Rates.refresh"),
        ("app/views.py", 19, Pattern.ASYNCIO_TASK, "app.views.send_receipt"),
    ]
    assert all(s.location.path != "app/tasks.py" for s in found)


def test_a_closure_doing_work_of_its_own_is_the_job(tmp_path: Path) -> None:
    """A spawned closure that only logs the parameter, or does work of its own with the
    parameter as a callback (``download(path, open_file)``), is the job itself."""
    source = """
    import asyncio
    import threading

    def download(path, open_file):
        with open(path, "wb") as out:
            out.write(open_file(path).read())

    def start(label):
        async def run():
            print(label)

        asyncio.create_task(run())

    def fill_cache(path, open_file):
        def run():
            download(path, open_file)

        threading.Thread(target=run).start()

    def view(request):
        start("x")
        fill_cache("/tmp/x", open)
    """
    sites = _scan(tmp_path, {"app/start.py": source})
    assert [(s.location.line, s.job) for s in sites] == [
        (13, "app.start.start.<locals>.run"),
        (19, "app.start.fill_cache.<locals>.run"),
    ]


def test_a_managers_own_machinery_and_queue_consumers_are_not_sites(tmp_path: Path) -> None:
    """Through a wrapper that runs its job over and over, a job that starts by waiting on a
    queue, or reads a stream to its end, is that queue's or stream's consumer loop; the manager starting its own private methods or
    trackers (``self.create_permanent_task(self._heart_beat)``) is its plumbing."""
    manager = TASKS.replace(
        "manager = Manager()",
        """
    def _heart_beat(self):
        print(len(asyncio.all_tasks()))

    def init(self):
        self.create_permanent_task(self._heart_beat, interval=60)


manager = Manager()
""",
    )
    views = """
    import asyncio

    from app.tasks import manager

    entries = asyncio.Queue()

    async def process_next_entry():
        entry = await entries.get()
        print(entry)

    async def expire_entries(): ...

    async def invoice_producer(source):
        async for paid in source.paid_invoices_stream():
            await entries.put(paid)

    def register():
        manager.create_permanent_task(process_next_entry)
        manager.create_permanent_task(expire_entries, interval=3600)
        manager.create_permanent_task(invoice_producer)
    """
    found = _scan(tmp_path, {"app/tasks.py": manager, "app/views.py": views})
    assert [(s.location.line, s.job) for s in found if s.location.path == "app/views.py"] == [
        (20, "app.views.expire_entries"),
    ]
    # ``every`` is called nowhere here: its own site stays, naming its closure
    assert [s.job for s in found if s.location.path == "app/tasks.py"] == [
        "app.tasks.Manager.every.<locals>.tick"
    ]


def test_a_monitor_loop_is_infrastructure_by_its_loop_and_private_one_shot_work_is_a_site(
    tmp_path: Path,
) -> None:
    """A tracker whose ``run`` loops on a liveness check and waits each round (``while
    is_active(): ... await asyncio.sleep(5)``) never returns: started through the manager's
    wrapper, directly or by a method that awaits it, it is infrastructure, not a job. A
    private coroutine that does one piece of work (``self._publish(msg)``, handed once per
    message) is the application's work: a site, whatever its leading underscore."""
    monitors = """
    import asyncio

    import requests

    from app.tasks import Manager


    class Tracker:
        async def run(self, on_event, is_active):
            while is_active():
                on_event(requests.get("https://chain.example.com/tip").json())
                await asyncio.sleep(5)


    class Hub(Manager):
        def __init__(self):
            self._tracker = Tracker()
            self.running = True

        def watch(self):
            self.create_task(self._tracker.run(print, lambda: self.running))
            self.create_task(self._follow(self._tracker))

        async def _follow(self, tracker: "Tracker"):
            await tracker.run(print, lambda: self.running)

        def on_message(self, msg):
            self.create_task(self._publish(msg))

        async def _publish(self, msg):
            requests.post("https://feed.example.com", json={"msg": msg})
    """
    found = _scan(tmp_path, {"app/tasks.py": TASKS, "app/monitors.py": monitors})
    assert [(s.location.line, s.job) for s in found if s.location.path == "app/monitors.py"] == [
        (29, "app.monitors.Hub._publish")
    ]


def test_what_a_wrapper_is_handed_is_looked_up_as_python_looks_it_up(tmp_path: Path) -> None:
    """The callable handed to a wrapper is found where Python would find it: a ``def``
    nested in the caller (or in a function enclosing it) first, then a name of the module,
    imports included. A library callable (``shutil.rmtree``) is a job of its own, analysed
    from the catalogue with what the wrapper is handed beside it, as at a direct site; a
    parameter, or a method of one, is only known at run time, and the reason says which."""
    views = """
    import shutil
    from functools import partial

    import requests

    from app.background import spawn, submit_job, task_manager

    def upload(request, url):
        def _post():
            requests.post(url, data=b"x")

        spawn(_post)

    def outer(url):
        def _ping():
            requests.get(url)

        def inner():
            submit_job("p", _ping)

        inner()

    async def clear(request, path):
        spawn(shutil.rmtree, path)
        spawn(partial(shutil.rmtree, path, ignore_errors=True))

    def through(request, client, callback):
        spawn(client.fetch)
        spawn(callback)
    """
    sites = _scan(tmp_path, {"app/views.py": views})
    found = [(s.location.line, s.job, s.idempotency, s.unresolved_reason) for s in sites]
    nested = [f for f in found if f[0] in (13, 20)]
    assert [(line, job, verdict) for line, job, verdict, _ in nested] == [
        (13, "app.views.upload.<locals>._post", "non_idempotent"),  # requests.post
        (20, "app.views.outer.<locals>._ping", "idempotent"),  # a GET, from an enclosing def
    ]
    assert [(line, job) for line, job, _, _ in found if line in (25, 26)] == [
        (25, "shutil.rmtree"),
        (26, "shutil.rmtree"),
    ]
    assert all("only known at run time" not in r for line, _, _, r in found if line < 29)
    reasons = {line: reason for line, job, _, reason in found if job == "unknown"}
    assert reasons == {
        29: "'client.fetch' is a method of the parameter 'client' of app.views.through: "
        "only known at run time",
        30: "'callback' is the parameter of app.views.through: only known at run time",
    }


def test_a_builtin_handed_over_is_no_job_of_its_own(tmp_path: Path) -> None:
    """``run_in_executor(None, next, rows)`` or ``spawn(list, rows)`` applies a builtin to a
    value the caller holds: a repeat advances the iterator again, so it is not analysed as a
    one-line job (whose verdict would say "no effect"), at a direct site as through a
    wrapper; the reason says why."""
    views = """
    import asyncio

    from app.background import spawn

    async def stream(request, rows):
        loop = asyncio.get_running_loop()
        first = await loop.run_in_executor(None, next, rows)
        spawn(list, rows)
        return first
    """
    sites = _scan(tmp_path, {"app/views.py": views})
    assert [(s.location.line, s.job) for s in sites] == [(8, "unknown"), (9, "unknown")]
    for site in sites:
        assert "a builtin applied to values the caller holds" in site.unresolved_reason
