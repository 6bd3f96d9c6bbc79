"""Detector examples: one source for the detectors' tests and for docs/scan.md.

Each example is a small module (scanned as module ``app``) and the sites the
extractor must report in it, as ``(job qualname or None, TargetKind)`` in
source order. An example with no expected sites is INVALID: a look-alike,
Celery (already out of process), or work the caller waits for in place.

Two decisions the examples pin down:

* ``with ThreadPoolExecutor() as ex:`` and ``async with asyncio.TaskGroup()
  as tg:`` wait for all their work when the block exits, so work started in
  them runs in parallel but not in the background: it is not reported. The
  same goes for futures and tasks the function waits for itself
  (``fut.result()``, ``as_completed``, ``wait``, ``await``, ``gather``).
* A thread that runs a server's accept loop or a ``while True`` queue
  consumer is infrastructure, not a job: it is not reported.

``direct_call`` has no examples here: the classifier finds those, from effects.
"""

from __future__ import annotations

from dataclasses import dataclass

from inventory.models import Pattern
from inventory.summary import TargetKind

__all__ = ["EXAMPLES", "DetectorExample", "examples_for"]

F, P, L, B = TargetKind.FUNCTION, TargetKind.PARTIAL, TargetKind.LAMBDA, TargetKind.BOUND_METHOD
C, S, D = TargetKind.CALL_RESULT, TargetKind.THREAD_SUBCLASS, TargetKind.DYNAMIC


@dataclass(frozen=True)
class DetectorExample:
    pattern: Pattern
    title: str
    source: str
    expected: list[tuple[str | None, TargetKind]]
    why: str

    @property
    def valid(self) -> bool:
        """True when the example must be reported."""
        return bool(self.expected)


def _ex(pattern: Pattern, title: str, expected: list[tuple[str | None, TargetKind]], why: str, source: str) -> DetectorExample:
    return DetectorExample(pattern, title, source.strip("\n") + "\n", expected, why)


_THREAD = [
    _ex(Pattern.THREAD, "Thread with a target function", [("app.send_receipt", F)],
        "The request returns while send_receipt still runs in a thread of the web process.", """
import threading

def send_receipt(order_id): ...

def checkout(request, order_id):
    threading.Thread(target=send_receipt, args=(order_id,)).start()
"""),
    _ex(Pattern.THREAD, "Aliased import, relative import, bound then started", [("mail.send_welcome", F)],
        "Aliases and relative imports are resolved; the thread is started through its variable.", """
from threading import Thread as T
from .mail import send_welcome

def signup(user_id):
    worker = T(target=send_welcome, kwargs={"user_id": user_id}, daemon=True)
    worker.start()
"""),
    _ex(Pattern.THREAD, "functools.partial target", [("app.resize", P)],
        "The job is the function the partial wraps; its bound arguments are the job's arguments.", """
import threading
from functools import partial

def resize(path, width): ...

def upload(path):
    threading.Thread(target=partial(resize, path, width=200)).start()
"""),
    _ex(Pattern.THREAD, "Lambda target", [("app.notify", L)],
        "A lambda that makes one call: the job is the called function.", """
import threading

def notify(user_id): ...

def follow(user_id):
    threading.Thread(target=lambda: notify(user_id)).start()
"""),
    _ex(Pattern.THREAD, "Bound method target", [("app.Exporter.run_export", B)],
        "self.method resolves to the method of the enclosing class.", """
import threading

class Exporter:
    def run_export(self): ...

    def start(self):
        threading.Thread(target=self.run_export).start()
"""),
    _ex(Pattern.THREAD, "Thread subclass started", [("app.Mailer.run", S)],
        "Starting a Thread subclass runs its run() method in the background.", """
import threading

class Mailer(threading.Thread):
    def run(self): ...

def contact(request):
    Mailer().start()
"""),
    _ex(Pattern.THREAD, "threading.Timer", [("app.expire_cart", F)],
        "A Timer is a thread that runs its function later.", """
from threading import Timer

def expire_cart(cart_id): ...

def add_to_cart(cart_id):
    Timer(1800, expire_cart, args=(cart_id,)).start()
"""),
    _ex(Pattern.THREAD, "Target from a parameter", [(None, D)],
        "Which function runs is only known at run time: reported as dynamic, with the reason.", """
import threading

def spawn(hook):
    threading.Thread(target=hook).start()
"""),
    _ex(Pattern.THREAD, "INVALID: a server's accept loop", [],
        "serve_forever is infrastructure, not a job.", """
import threading

def serve(server):
    threading.Thread(target=server.serve_forever, daemon=True).start()
"""),
    _ex(Pattern.THREAD, "INVALID: a while-True queue consumer", [],
        "A thread looping forever over a queue is an in-process worker, not a job.", """
import queue
import threading

jobs = queue.Queue()

def consume():
    while True:
        item = jobs.get()
        print(item)

threading.Thread(target=consume, daemon=True).start()
"""),
    _ex(Pattern.THREAD, "INVALID: wait primitives", [],
        "Waiting on an Event or joining is not starting work.", """
import threading

done = threading.Event()

def wait_for(worker):
    done.wait(5)
    worker.join()
"""),
]

_PROCESS = [
    _ex(Pattern.PROCESS, "multiprocessing.Process", [("app.render_report", F)],
        "A child process runs the job while the request returns.", """
import multiprocessing

def render_report(report_id): ...

def export(report_id):
    multiprocessing.Process(target=render_report, args=(report_id,)).start()
"""),
    _ex(Pattern.PROCESS, "Aliased Process with a partial", [("app.render", P)],
        "The alias and the partial are both resolved.", """
from functools import partial
from multiprocessing import Process as P

def render(report_id, fmt): ...

def export(report_id):
    proc = P(target=partial(render, report_id, fmt="pdf"))
    proc.start()
"""),
    _ex(Pattern.PROCESS, "Pool.apply_async on a module-level pool", [("app.rebuild_index", F)],
        "apply_async returns at once; nobody waits for the result here.", """
import multiprocessing

pool = multiprocessing.Pool(4)

def rebuild_index(shop_id): ...

def save_shop(shop_id):
    pool.apply_async(rebuild_index, (shop_id,))
"""),
    _ex(Pattern.PROCESS, "Pool.map_async", [("app.thumbnail", F)],
        "map_async does not wait, and Pool's exit terminates rather than waits.", """
from multiprocessing import Pool

def thumbnail(path): ...

def upload(paths):
    with Pool() as pool:
        pool.map_async(thumbnail, paths)
"""),
    _ex(Pattern.PROCESS, "INVALID: apply_async whose result is read", [],
        "The caller waits for .get(): parallelism, not background work.", """
from multiprocessing import Pool

def square(x): ...

def compute(pool: Pool, x):
    result = pool.apply_async(square, (x,))
    return result.get(timeout=5)
"""),
    _ex(Pattern.PROCESS, "INVALID: Celery apply_async", [],
        "A Celery task's apply_async already leaves the process.", """
from .tasks import send_email

def signup(user_id):
    send_email.apply_async(args=[user_id])
"""),
    _ex(Pattern.PROCESS, "INVALID: Pool.map", [],
        "Pool.map blocks until every result is back.", """
from multiprocessing import Pool

def square(x): ...

def compute(xs):
    with Pool() as pool:
        return pool.map(square, xs)
"""),
]

_EXECUTOR = [
    _ex(Pattern.EXECUTOR_SUBMIT, "submit on a module-level executor", [("app.send_sms", F)],
        "The future is dropped: the work runs after the request returns.", """
from concurrent.futures import ThreadPoolExecutor

executor = ThreadPoolExecutor(max_workers=4)

def send_sms(phone): ...

def verify(phone):
    executor.submit(send_sms, phone)
"""),
    _ex(Pattern.EXECUTOR_SUBMIT, "submit on a self attribute, bound method", [("app.Service.crunch", B)],
        "self.pool is known to be an executor from __init__.", """
from concurrent.futures import ProcessPoolExecutor

class Service:
    def __init__(self):
        self.pool = ProcessPoolExecutor()

    def crunch(self, x): ...

    def handle(self, x):
        self.pool.submit(self.crunch, x)
"""),
    _ex(Pattern.EXECUTOR_SUBMIT, "Executor from a parameter annotation, partial", [("app.charge", P)],
        "An annotated parameter types the executor.", """
from concurrent.futures import Executor
from functools import partial

def charge(order_id): ...

def pay(ex: Executor, order_id):
    ex.submit(partial(charge, order_id))
"""),
    _ex(Pattern.EXECUTOR_SUBMIT, "map whose results are dropped", [("app.warm_cache", F)],
        "Executor.map submits everything at once; nobody iterates the results.", """
import concurrent.futures

executor = concurrent.futures.ThreadPoolExecutor()

def warm_cache(key): ...

def warm(keys):
    executor.map(warm_cache, keys)
"""),
    _ex(Pattern.EXECUTOR_SUBMIT, "Future kept for a callback", [("app.sync", F)],
        "A done-callback is not waiting: the work is still in the background.", """
from concurrent.futures import ThreadPoolExecutor

executor = ThreadPoolExecutor()

def sync(item_id): ...

def save(item_id, log):
    fut = executor.submit(sync, item_id)
    fut.add_done_callback(log)
"""),
    _ex(Pattern.EXECUTOR_SUBMIT, "INVALID: inside a with block", [],
        "The with block waits for the work at its exit: parallel, not background.", """
from concurrent.futures import ThreadPoolExecutor

def fetch(url): ...

def fetch_all(urls):
    with ThreadPoolExecutor() as ex:
        for url in urls:
            ex.submit(fetch, url)
"""),
    _ex(Pattern.EXECUTOR_SUBMIT, "INVALID: results consumed in place", [],
        "list(ex.map(...)) and as_completed wait for the work before returning.", """
from concurrent.futures import ThreadPoolExecutor, as_completed

executor = ThreadPoolExecutor()

def fetch(url): ...

def fetch_all(urls):
    pages = list(executor.map(fetch, urls))
    futures = [executor.submit(fetch, u) for u in urls]
    for done in as_completed(futures):
        pages.append(done.result())
    return pages
"""),
    _ex(Pattern.EXECUTOR_SUBMIT, "INVALID: future.result()", [],
        "The caller waits for the result.", """
from concurrent.futures import ThreadPoolExecutor

executor = ThreadPoolExecutor()

def price(sku): ...

def quote(sku):
    fut = executor.submit(price, sku)
    return fut.result(timeout=2)
"""),
    _ex(Pattern.EXECUTOR_SUBMIT, "INVALID: look-alikes", [],
        "submit() and add_job() on objects that are not executors.", """
def save(form, board):
    form.submit()
    board.add_job("title")
"""),
]

_ASYNCIO = [
    _ex(Pattern.ASYNCIO_TASK, "create_task, fire and forget", [("app.send_push", C)],
        "The task runs on after the handler returns; the job is the coroutine function.", """
import asyncio

async def send_push(user_id): ...

async def like(user_id):
    asyncio.create_task(send_push(user_id))
"""),
    _ex(Pattern.ASYNCIO_TASK, "Aliased ensure_future", [("app.audit", C)],
        "from asyncio import ensure_future as spawn is resolved.", """
from asyncio import ensure_future as spawn

async def audit(event): ...

async def handle(event):
    spawn(audit(event))
"""),
    _ex(Pattern.ASYNCIO_TASK, "loop.create_task on a method", [("app.Cache.refresh", C)],
        "The running loop, and self.refresh resolved in its class.", """
import asyncio

class Cache:
    async def refresh(self, key): ...

    async def get(self, key):
        loop = asyncio.get_running_loop()
        loop.create_task(self.refresh(key))
"""),
    _ex(Pattern.ASYNCIO_TASK, "Task kept in a set", [("app.audit", C)],
        "Keeping a reference (the documented idiom) is not waiting for it.", """
import asyncio

background = set()

async def audit(event): ...

async def handle(event):
    task = asyncio.create_task(audit(event))
    background.add(task)
    task.add_done_callback(background.discard)
"""),
    _ex(Pattern.ASYNCIO_TASK, "Coroutine made elsewhere", [(None, D)],
        "The coroutine object comes from a parameter: only known at run time.", """
import asyncio

def schedule(coro):
    asyncio.create_task(coro)
"""),
    _ex(Pattern.ASYNCIO_TASK, "INVALID: awaited task", [],
        "Awaiting the task waits for it.", """
import asyncio

async def fetch(url): ...

async def page(url):
    task = asyncio.create_task(fetch(url))
    return await task
"""),
    _ex(Pattern.ASYNCIO_TASK, "INVALID: gathered tasks", [],
        "gather waits for every task.", """
import asyncio

async def fetch(url): ...

async def pages(urls):
    tasks = [asyncio.create_task(fetch(u)) for u in urls]
    return await asyncio.gather(*tasks)
"""),
    _ex(Pattern.ASYNCIO_TASK, "INVALID: TaskGroup", [],
        "A TaskGroup waits for its tasks when the async with block exits.", """
import asyncio

async def fetch(url): ...

async def pages(urls):
    async with asyncio.TaskGroup() as tg:
        for url in urls:
            tg.create_task(fetch(url))
"""),
]

_RUN_IN_EXECUTOR = [
    _ex(Pattern.RUN_IN_EXECUTOR, "Awaited run_in_executor", [("app.resize", F)],
        "Still a site: the blocking work could move to a queue, though the request waits for it.", """
import asyncio

def resize(path): ...

async def upload(path):
    loop = asyncio.get_running_loop()
    await loop.run_in_executor(None, resize, path)
"""),
    _ex(Pattern.RUN_IN_EXECUTOR, "to_thread with a partial", [("app.render", P)],
        "asyncio.to_thread runs the partial's function in a thread.", """
import asyncio
import functools

def render(report_id, fmt): ...

async def export(report_id):
    await asyncio.to_thread(functools.partial(render, report_id, fmt="pdf"))
"""),
    _ex(Pattern.RUN_IN_EXECUTOR, "to_thread of a method, value used", [("app.Store.load", B)],
        "The caller uses the result: reported with result_used.", """
import asyncio

class Store:
    def load(self, key): ...

    async def get(self, key):
        data = await asyncio.to_thread(self.load, key)
        return data
"""),
    _ex(Pattern.RUN_IN_EXECUTOR, "Not awaited, lambda", [("app.index", L)],
        "The future is dropped: background work.", """
def index(doc_id): ...

def save(loop, pool, doc_id):
    loop.run_in_executor(pool, lambda: index(doc_id))
"""),
    _ex(Pattern.RUN_IN_EXECUTOR, "INVALID: running the loop", [],
        "run_until_complete and asyncio.run are not handing work to a thread.", """
import asyncio

async def main(): ...

def cli(loop):
    loop.run_until_complete(main())
    asyncio.run(main())
"""),
]

_BACKGROUND = [
    _ex(Pattern.BACKGROUND_TASKS, "FastAPI BackgroundTasks parameter", [("app.send_welcome", F)],
        "Runs after the response is sent, in the web process.", """
from fastapi import BackgroundTasks, FastAPI

app = FastAPI()

def send_welcome(email): ...

@app.post("/signup")
async def signup(email: str, background_tasks: BackgroundTasks):
    background_tasks.add_task(send_welcome, email)
"""),
    _ex(Pattern.BACKGROUND_TASKS, "Starlette BackgroundTask object", [("app.audit", F)],
        "A BackgroundTask attached to a response is the same pattern.", """
from starlette.background import BackgroundTask
from starlette.responses import JSONResponse

def audit(user_id): ...

async def profile(request):
    user_id = request.path_params["user_id"]
    return JSONResponse({}, background=BackgroundTask(audit, user_id))
"""),
    _ex(Pattern.BACKGROUND_TASKS, "Relative import and partial", [("mail.send", P)],
        "from .mail import send is resolved against the module.", """
from functools import partial

from fastapi import BackgroundTasks

from .mail import send

def invite(email: str, tasks: BackgroundTasks):
    tasks.add_task(partial(send, to=email))
"""),
    _ex(Pattern.BACKGROUND_TASKS, "Constructed BackgroundTasks", [("app.cleanup", F)],
        "An instance built in the function is typed by its constructor.", """
from starlette.background import BackgroundTasks

def cleanup(path): ...

def download(path):
    tasks = BackgroundTasks()
    tasks.add_task(cleanup, path)
    return tasks
"""),
    _ex(Pattern.BACKGROUND_TASKS, "INVALID: add_task on an unknown object", [],
        "Without a BackgroundTasks type, add_task is a look-alike.", """
def plan(todo, title):
    todo.add_task(title)
"""),
    _ex(Pattern.BACKGROUND_TASKS, "INVALID: Celery delay", [],
        "Celery already runs the work out of process.", """
from .tasks import notify

def follow(user_id):
    notify.delay(user_id)
"""),
]

_ON_COMMIT = [
    _ex(Pattern.ON_COMMIT, "on_commit with a lambda", [("app.send_confirmation", L)],
        "Runs after the transaction commits, still inside the request.", """
from django.db import transaction

def send_confirmation(order_id): ...

def place(order):
    transaction.on_commit(lambda: send_confirmation(order.id))
"""),
    _ex(Pattern.ON_COMMIT, "Imported on_commit with a partial", [("app.reindex", P)],
        "from django.db.transaction import on_commit is resolved.", """
from functools import partial

from django.db.transaction import on_commit

def reindex(product_id): ...

def save_product(product_id):
    on_commit(partial(reindex, product_id))
"""),
    _ex(Pattern.ON_COMMIT, "on_commit with a function", [("app.clear_cache", F)],
        "A plain function reference.", """
from django.db import transaction

def clear_cache(): ...

def update_prices():
    transaction.on_commit(clear_cache)
"""),
    _ex(Pattern.ON_COMMIT, "on_commit with a bound method", [("app.Checkout.notify", B)],
        "self.notify resolves to the method.", """
import django.db.transaction

class Checkout:
    def notify(self): ...

    def done(self):
        django.db.transaction.on_commit(self.notify)
"""),
    _ex(Pattern.ON_COMMIT, "INVALID: Celery delay_on_commit", [],
        "Celery's delay_on_commit is already out of process.", """
from .tasks import send_confirmation

def place(order_id):
    send_confirmation.delay_on_commit(order_id)
"""),
    _ex(Pattern.ON_COMMIT, "INVALID: on_commit of another library", [],
        "Only django.db.transaction.on_commit is this pattern.", """
def save(hooks, f):
    hooks.on_commit(f)
"""),
]

_SIGNALS = [
    _ex(Pattern.SIGNAL_RECEIVER, "@receiver decorator", [("app.order_saved", F)],
        "Django calls the receiver synchronously inside save().", """
from django.db.models.signals import post_save
from django.dispatch import receiver

from .models import Order

@receiver(post_save, sender=Order)
def order_saved(sender, instance, created, **kwargs): ...
"""),
    _ex(Pattern.SIGNAL_RECEIVER, "signal.connect", [("app.index_product", F)],
        "connect() on a Django model signal.", """
from django.db.models import signals

def index_product(sender, instance, **kwargs): ...

signals.post_save.connect(index_product, sender="shop.Product")
"""),
    _ex(Pattern.SIGNAL_RECEIVER, "Custom Signal instance", [("app.send_invoice", F)],
        "A django.dispatch.Signal defined in the file.", """
from django.dispatch import Signal

order_paid = Signal()

def send_invoice(sender, order_id, **kwargs): ...

order_paid.connect(send_invoice)
"""),
    _ex(Pattern.SIGNAL_RECEIVER, "Core signal", [("app.flush_metrics", F)],
        "request_finished from django.core.signals.", """
from django.core.signals import request_finished

def flush_metrics(sender, **kwargs): ...

request_finished.connect(flush_metrics)
"""),
    _ex(Pattern.SIGNAL_RECEIVER, "INVALID: connect on other objects", [],
        "GUI signals and database connections are look-alikes.", """
def wire(button, db, handler):
    button.clicked.connect(handler)
    db.connect()
"""),
]

_SCHEDULER = [
    _ex(Pattern.SCHEDULER, "APScheduler add_job", [("app.purge_sessions", F)],
        "An in-process scheduler runs the job in the web process.", """
from apscheduler.schedulers.background import BackgroundScheduler

scheduler = BackgroundScheduler()

def purge_sessions(): ...

scheduler.add_job(purge_sessions, "interval", hours=1)
"""),
    _ex(Pattern.SCHEDULER, "@scheduled_job decorator", [("app.nightly_report", F)],
        "The decorated function is the job.", """
from apscheduler.schedulers.blocking import BlockingScheduler

scheduler = BlockingScheduler()

@scheduler.scheduled_job("cron", hour=3)
def nightly_report(): ...
"""),
    _ex(Pattern.SCHEDULER, "schedule.every().do()", [("app.sync_inventory", F)],
        "The schedule package's fluent API.", """
import schedule

def sync_inventory(region): ...

schedule.every(10).minutes.do(sync_inventory, "eu")
"""),
    _ex(Pattern.SCHEDULER, "Text reference to the job", [("app.tasks.rebuild", F)],
        "APScheduler accepts 'module:function' strings.", """
from apscheduler.schedulers.background import BackgroundScheduler

def start():
    scheduler = BackgroundScheduler()
    scheduler.add_job("app.tasks:rebuild", "cron", hour=1)
    scheduler.start()
"""),
    _ex(Pattern.SCHEDULER, "add_job with a partial", [("app.send_digest", P)],
        "The partial's bound arguments become the job's arguments.", """
from functools import partial

from apscheduler.schedulers.asyncio import AsyncIOScheduler

def send_digest(weekly): ...

def setup(scheduler: AsyncIOScheduler):
    scheduler.add_job(partial(send_digest, weekly=True), "cron", day_of_week="mon")
"""),
    _ex(Pattern.SCHEDULER, "INVALID: add_job look-alike", [],
        "add_job on an object that is not an APScheduler scheduler.", """
def post(board, title):
    board.add_job(title)
"""),
]

EXAMPLES: dict[Pattern, list[DetectorExample]] = {
    Pattern.THREAD: _THREAD,
    Pattern.PROCESS: _PROCESS,
    Pattern.EXECUTOR_SUBMIT: _EXECUTOR,
    Pattern.ASYNCIO_TASK: _ASYNCIO,
    Pattern.RUN_IN_EXECUTOR: _RUN_IN_EXECUTOR,
    Pattern.BACKGROUND_TASKS: _BACKGROUND,
    Pattern.ON_COMMIT: _ON_COMMIT,
    Pattern.SIGNAL_RECEIVER: _SIGNALS,
    Pattern.SCHEDULER: _SCHEDULER,
}


def examples_for(pattern: Pattern) -> list[DetectorExample]:
    return EXAMPLES.get(pattern, [])
