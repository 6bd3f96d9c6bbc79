"""Threads, Thread subclasses, processes and pools."""

from __future__ import annotations

from inventory.detector_examples._model import B, D, F, L, P, S, example
from inventory.models import Pattern

THREAD = [
    example(
        Pattern.THREAD,
        "Thread with a target function",
        [("app.send_receipt", F)],
        "The request returns while send_receipt still runs in a thread of the web process.",
        """
import threading

def send_receipt(order_id): ...

def checkout(request, order_id):
    threading.Thread(target=send_receipt, args=(order_id,)).start()
""",
    ),
    example(
        Pattern.THREAD,
        "Aliased import, relative import, bound then started",
        [("mail.send_welcome", F)],
        "Aliases and relative imports are resolved; the thread is started through its variable.",
        """
from threading import Thread as T
from .mail import send_welcome

def signup(user_id):
    worker = T(target=send_welcome, kwargs={"user_id": user_id}, daemon=True)
    worker.start()
""",
    ),
    example(
        Pattern.THREAD,
        "functools.partial target",
        [("app.resize", P)],
        "The job is the function the partial wraps; its bound arguments are the job's arguments.",
        """
import threading
from functools import partial

def resize(path, width): ...

def upload(path):
    threading.Thread(target=partial(resize, path, width=200)).start()
""",
    ),
    example(
        Pattern.THREAD,
        "Lambda target",
        [("app.notify", L)],
        "A lambda that makes one call: the job is the called function.",
        """
import threading

def notify(user_id): ...

def follow(user_id):
    threading.Thread(target=lambda: notify(user_id)).start()
""",
    ),
    example(
        Pattern.THREAD,
        "Bound method target",
        [("app.Exporter.run_export", B)],
        "self.method resolves to the method of the enclosing class.",
        """
import threading

class Exporter:
    def run_export(self): ...

    def start(self):
        threading.Thread(target=self.run_export).start()
""",
    ),
    example(
        Pattern.THREAD,
        "Thread subclass started",
        [("app.Mailer.run", S)],
        "Starting a Thread subclass runs its run() method in the background.",
        """
import threading

class Mailer(threading.Thread):
    def run(self): ...

def contact(request):
    Mailer().start()
""",
    ),
    example(
        Pattern.THREAD,
        "threading.Timer",
        [("app.expire_cart", F)],
        "A Timer is a thread that runs its function later.",
        """
from threading import Timer

def expire_cart(cart_id): ...

def add_to_cart(cart_id):
    Timer(1800, expire_cart, args=(cart_id,)).start()
""",
    ),
    example(
        Pattern.THREAD,
        "Target from a parameter",
        [(None, D)],
        "Which function runs is only known at run time: reported as dynamic, with the reason.",
        """
import threading

def spawn(hook):
    threading.Thread(target=hook).start()
""",
    ),
    example(
        Pattern.THREAD,
        "A thread looping forever: reported, never moved",
        [("app.ping_forever", F)],
        "An unbroken `while True` that sleeps between rounds is a monitor or a hand-made "
        "scheduler: its rounds may be work, so the site is reported, but the job never "
        "returns: the job's `endless_loop` names the loop, and `migrator apply` leaves the "
        "site (a periodic job can run one round instead).",
        """
import threading
import time

import requests

def ping_forever():
    while True:
        requests.post("https://hc.example.com/ping", timeout=5)
        time.sleep(60)

def start():
    threading.Thread(target=ping_forever, daemon=True).start()
""",
    ),
    example(
        Pattern.THREAD,
        "INVALID: a server's accept loop, a while-True queue consumer",
        [],
        "serve_forever is infrastructure, not a job; a thread looping forever over a queue is "
        "an in-process worker, not a job.",
        """
import queue
import threading

jobs = queue.Queue()

def serve(server):
    threading.Thread(target=server.serve_forever, daemon=True).start()

def consume():
    while True:
        item = jobs.get()
        print(item)

threading.Thread(target=consume, daemon=True).start()
""",
    ),
    example(
        Pattern.THREAD,
        "INVALID: service loops, watchdogs, threads waited on through an Event",
        [],
        "A thread looping until a stop Event is set and waiting each round lives as long as the "
        "process (a flusher, a scheduler); a Timer that interrupts the process is a timeout; a "
        "function waiting on the Event (or queue) it handed to the thread runs it in parallel, "
        "not in the background.",
        """
import _thread
import threading

class Flusher:
    def __init__(self):
        self._stop = threading.Event()

    def start(self):
        threading.Thread(target=self._run, daemon=True).start()

    def _run(self):
        while not self._stop.is_set():
            self._stop.wait(10)
            self.flush()

    def flush(self): ...

def with_timeout(seconds, work):
    timer = threading.Timer(seconds, _thread.interrupt_main)
    timer.start()
    try:
        return work()
    finally:
        timer.cancel()

def execute(results, done): ...

def run_query(sql):
    results = {}
    done = threading.Event()
    threading.Thread(target=execute, args=(results, done)).start()
    done.wait()
    return results
""",
    ),
    example(
        Pattern.THREAD,
        "INVALID: wait primitives",
        [],
        "Waiting on an Event or joining is not starting work.",
        """
import threading

done = threading.Event()

def wait_for(worker):
    done.wait(5)
    worker.join()
""",
    ),
]

PROCESS = [
    example(
        Pattern.PROCESS,
        "multiprocessing.Process",
        [("app.render_report", F)],
        "A child process runs the job while the request returns.",
        """
import multiprocessing

def render_report(report_id): ...

def export(report_id):
    multiprocessing.Process(target=render_report, args=(report_id,)).start()
""",
    ),
    example(
        Pattern.PROCESS,
        "Aliased Process with a partial",
        [("app.render", P)],
        "The alias and the partial are both resolved.",
        """
from functools import partial
from multiprocessing import Process as P

def render(report_id, fmt): ...

def export(report_id):
    proc = P(target=partial(render, report_id, fmt="pdf"))
    proc.start()
""",
    ),
    example(
        Pattern.PROCESS,
        "Process of a start-method context",
        [("app.render_report", F), ("app.render_report", F)],
        "get_context() returns an object with the multiprocessing module's API: "
        "its Process and Pool are the module's.",
        """
import multiprocessing

def render_report(report_id): ...

def export(report_id):
    ctx = multiprocessing.get_context("spawn")
    ctx.Process(target=render_report, args=(report_id,)).start()
    multiprocessing.get_context().Process(target=render_report, args=(report_id,)).start()
""",
    ),
    example(
        Pattern.PROCESS,
        "Pool.apply_async on a module-level pool",
        [("app.rebuild_index", F)],
        "apply_async returns at once; nobody waits for the result here.",
        """
import multiprocessing

pool = multiprocessing.Pool(4)

def rebuild_index(shop_id): ...

def save_shop(shop_id):
    pool.apply_async(rebuild_index, (shop_id,))
""",
    ),
    example(
        Pattern.PROCESS,
        "Pool.map_async",
        [("app.thumbnail", F)],
        "map_async does not wait, and Pool's exit terminates rather than waits.",
        """
from multiprocessing import Pool

def thumbnail(path): ...

def upload(paths):
    with Pool() as pool:
        pool.map_async(thumbnail, paths)
""",
    ),
    example(
        Pattern.PROCESS,
        "INVALID: apply_async whose result is read",
        [],
        "The caller waits for .get(): parallelism, not background work.",
        """
from multiprocessing import Pool

def square(x): ...

def compute(pool: Pool, x):
    result = pool.apply_async(square, (x,))
    return result.get(timeout=5)
""",
    ),
    example(
        Pattern.PROCESS,
        "INVALID: Celery apply_async",
        [],
        "A Celery task's apply_async already leaves the process.",
        """
from .tasks import send_email

def signup(user_id):
    send_email.apply_async(args=[user_id])
""",
    ),
    example(
        Pattern.PROCESS,
        "INVALID: Pool.map",
        [],
        "Pool.map blocks until every result is back.",
        """
from multiprocessing import Pool

def square(x): ...

def compute(xs):
    with Pool() as pool:
        return pool.map(square, xs)
""",
    ),
    example(
        Pattern.PROCESS,
        "INVALID: servers in a process or thread, heartbeats",
        [],
        "A loop whose condition waits on a stop Event each round (`while not stop.wait(30)`) "
        "is a heartbeat; a thread or process running a web server (a function calling "
        "`uvicorn.run`, or `self.run` inherited from `uvicorn.Server`) is infrastructure; so "
        "is a watcher, a thread whose function starts by waiting on the process it was "
        "handed (`code = proc.wait()`).",
        """
import multiprocessing
import threading

import uvicorn

def renew(lease_id): ...

def hold_lease(lease_id):
    stop = threading.Event()
    def beat():
        while not stop.wait(30):
            renew(lease_id)
    threading.Thread(target=beat, daemon=True).start()
    return stop

def serve_static(port):
    uvicorn.run("static:app", port=port)

def start_static(ports):
    for port in ports:
        multiprocessing.Process(target=serve_static, args=(port,), daemon=True).start()

def watch(proc, server):
    code = proc.wait()
    if code != 0:
        server.terminate()

def supervise(proc, server):
    threading.Thread(target=watch, args=(proc, server), daemon=True).start()

class Server(uvicorn.Server):
    def start_in_thread(self):
        threading.Thread(target=self.run, daemon=True).start()
""",
    ),
    example(
        Pattern.PROCESS,
        "Servers of an app whose type is not known here",
        [("app.Dashboard.export", B)],
        "`self.app.run(host=..., port=...)` on an object named app or server, of a type not "
        "known in the file, runs a development server: a thread running it is infrastructure "
        "(so is `Thread(target=lambda: uvicorn.run(app))`). The name alone is not enough: "
        "`self.app.run(report)` without a host or port is ordinary work, and stays a job.",
        """
import multiprocessing
import threading

import uvicorn

class Dashboard:
    def __init__(self, app):
        self.app = app

    def serve(self):
        self.app.run(host="0.0.0.0", port=8050, debug=False)

    def export(self, report):
        self.app.run(report)

    def start(self, report):
        threading.Thread(target=self.serve, daemon=True).start()
        threading.Thread(target=lambda: uvicorn.run(self.app), daemon=True).start()
        multiprocessing.Process(target=self.export, args=(report,)).start()
""",
    ),
]
