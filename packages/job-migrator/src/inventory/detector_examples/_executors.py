"""Executors: submit and map."""

from __future__ import annotations

from inventory.detector_examples._model import B, D, F, L, P, example
from inventory.models import Pattern

EXECUTOR = [
    example(
        Pattern.EXECUTOR_SUBMIT,
        "submit on a module-level executor",
        [("app.send_sms", F)],
        "The future is dropped: the work runs after the request returns.",
        """
from concurrent.futures import ThreadPoolExecutor

executor = ThreadPoolExecutor(max_workers=4)

def send_sms(phone): ...

def verify(phone):
    executor.submit(send_sms, phone)
""",
    ),
    example(
        Pattern.EXECUTOR_SUBMIT,
        "submit on a self attribute, bound method",
        [("app.Service.crunch", B)],
        "self.pool is known to be an executor from __init__.",
        """
from concurrent.futures import ProcessPoolExecutor

class Service:
    def __init__(self):
        self.pool = ProcessPoolExecutor()

    def crunch(self, x): ...

    def handle(self, x):
        self.pool.submit(self.crunch, x)
""",
    ),
    example(
        Pattern.EXECUTOR_SUBMIT,
        "Executor from a parameter annotation, partial",
        [("app.charge", P)],
        "An annotated parameter types the executor.",
        """
from concurrent.futures import Executor
from functools import partial

def charge(order_id): ...

def pay(ex: Executor, order_id):
    ex.submit(partial(charge, order_id))
""",
    ),
    example(
        Pattern.EXECUTOR_SUBMIT,
        "map whose results are dropped",
        [("app.warm_cache", F)],
        "Executor.map submits everything at once; nobody iterates the results.",
        """
import concurrent.futures

executor = concurrent.futures.ThreadPoolExecutor()

def warm_cache(key): ...

def warm(keys):
    executor.map(warm_cache, keys)
""",
    ),
    example(
        Pattern.EXECUTOR_SUBMIT,
        "Future kept for a callback",
        [("app.sync", F)],
        "A done-callback is not waiting: the work is still in the background.",
        """
from concurrent.futures import ThreadPoolExecutor

executor = ThreadPoolExecutor()

def sync(item_id): ...

def save(item_id, log):
    fut = executor.submit(sync, item_id)
    fut.add_done_callback(log)
""",
    ),
    example(
        Pattern.EXECUTOR_SUBMIT,
        "INVALID: inside a with block",
        [],
        "The with block waits for the work at its exit: parallel, not background.",
        """
from concurrent.futures import ThreadPoolExecutor

def fetch(url): ...

def fetch_all(urls):
    with ThreadPoolExecutor() as ex:
        for url in urls:
            ex.submit(fetch, url)
""",
    ),
    example(
        Pattern.EXECUTOR_SUBMIT,
        "a local callable: partial, in a copied context",
        [("app.render", P), ("app.render", L), (None, D)],
        "A local variable assigned a partial (or a contextvars ctx.run of one) once, or always "
        "the same job, is that job; a library callable is named as such "
        "(functools.partial(lib.f, x) is lib.f). A name bound to different callables, or "
        "bound otherwise (a loop variable, a parameter), stays dynamic.",
        """
import contextvars
from concurrent.futures import ThreadPoolExecutor
from functools import partial

executor = ThreadPoolExecutor()

def render(report_id, fmt): ...

def archive(report_id, fmt): ...

def export(report_id, fmt):
    job = partial(render, report_id, fmt=fmt)
    ctx = contextvars.copy_context()
    executor.submit(partial(ctx.run, job))
    executor.submit(lambda: ctx.run(render, report_id, fmt))
    task = partial(render, report_id)
    if fmt == "zip":
        task = partial(archive, report_id)
    executor.submit(task, fmt)
""",
    ),
    example(
        Pattern.EXECUTOR_SUBMIT,
        "INVALID: results consumed in place",
        [],
        "list(ex.map(...)) and as_completed wait for the work before returning.",
        """
from concurrent.futures import ThreadPoolExecutor, as_completed

executor = ThreadPoolExecutor()

def fetch(url): ...

def fetch_all(urls):
    pages = list(executor.map(fetch, urls))
    futures = [executor.submit(fetch, u) for u in urls]
    for done in as_completed(futures):
        pages.append(done.result())
    return pages
""",
    ),
    example(
        Pattern.EXECUTOR_SUBMIT,
        "INVALID: future.result()",
        [],
        "The caller waits for the result.",
        """
from concurrent.futures import ThreadPoolExecutor

executor = ThreadPoolExecutor()

def price(sku): ...

def quote(sku):
    fut = executor.submit(price, sku)
    return fut.result(timeout=2)
""",
    ),
    example(
        Pattern.EXECUTOR_SUBMIT,
        "INVALID: look-alikes",
        [],
        "submit() and add_job() on objects that are not executors.",
        """
def save(form, board):
    form.submit()
    board.add_job("title")
""",
    ),
    example(
        Pattern.EXECUTOR_SUBMIT,
        "Flask-Executor",
        [("app.send_sms", F), ("app.send_sms", F), ("app.send_sms_job", F)],
        "Flask-Executor wraps a thread pool: submit, submit_stored (the function comes second) "
        "and .submit() on an @executor.job function.",
        """
from flask import Flask
from flask_executor import Executor

app = Flask(__name__)
executor = Executor(app)

def send_sms(phone): ...

@executor.job
def send_sms_job(phone): ...

def verify():
    executor.submit(send_sms, "123")
    executor.submit_stored("sms-123", send_sms, "123")
    send_sms_job.submit("123")
""",
    ),
    example(
        Pattern.EXECUTOR_SUBMIT,
        "INVALID: the function is called before the hand-off",
        [],
        "`pool.submit(log_success(messages))` runs `log_success` in the caller at once and hands "
        "the pool only its result (usually None); so does `Thread(target=f(x))`. Nothing runs "
        "in the background: a look-alike (`partial(f, x)` is the hand-off).",
        """
import threading
from concurrent.futures import ThreadPoolExecutor

executor = ThreadPoolExecutor()

def log_success(messages): ...

def finish(messages):
    executor.submit(log_success(messages))
    threading.Thread(target=log_success(messages)).start()
""",
    ),
]
