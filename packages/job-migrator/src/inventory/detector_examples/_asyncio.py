"""asyncio tasks, run_in_executor and to_thread."""

from __future__ import annotations

from inventory.detector_examples._model import B, C, D, F, L, P, example
from inventory.models import Pattern

ASYNCIO = [
    example(
        Pattern.ASYNCIO_TASK,
        "create_task, fire and forget",
        [("app.send_push", C)],
        "The task runs on after the handler returns; the job is the coroutine function.",
        """
import asyncio

async def send_push(user_id): ...

async def like(user_id):
    asyncio.create_task(send_push(user_id))
""",
    ),
    example(
        Pattern.ASYNCIO_TASK,
        "Aliased ensure_future",
        [("app.audit", C)],
        "from asyncio import ensure_future as spawn is resolved.",
        """
from asyncio import ensure_future as spawn

async def audit(event): ...

async def handle(event):
    spawn(audit(event))
""",
    ),
    example(
        Pattern.ASYNCIO_TASK,
        "loop.create_task on a method",
        [("app.Cache.refresh", C)],
        "The running loop, and self.refresh resolved in its class.",
        """
import asyncio

class Cache:
    async def refresh(self, key): ...

    async def get(self, key):
        loop = asyncio.get_running_loop()
        loop.create_task(self.refresh(key))
""",
    ),
    example(
        Pattern.ASYNCIO_TASK,
        "Task kept in a set",
        [("app.audit", C)],
        "Keeping a reference (the documented idiom) is not waiting for it.",
        """
import asyncio

background = set()

async def audit(event): ...

async def handle(event):
    task = asyncio.create_task(audit(event))
    background.add(task)
    task.add_done_callback(background.discard)
""",
    ),
    example(
        Pattern.ASYNCIO_TASK,
        "Coroutine made elsewhere",
        [(None, D)],
        "The coroutine object comes from a parameter: only known at run time.",
        """
import asyncio

def schedule(coro):
    asyncio.create_task(coro)
""",
    ),
    example(
        Pattern.ASYNCIO_TASK,
        "INVALID: awaited, gathered, or collected in a list then waited for",
        [],
        "Awaiting the task waits for it; gather waits for every task; appending a task to a "
        "list that asyncio.wait (or gather) is given waits for it too: a fan-out raced in the "
        "same call, not background work.",
        """
import asyncio

async def fetch(url): ...

async def ask(model, prompt): ...

async def page(url):
    task = asyncio.create_task(fetch(url))
    return await task

async def pages(urls):
    tasks = [asyncio.create_task(fetch(u)) for u in urls]
    return await asyncio.gather(*tasks)

async def fastest(models, prompt):
    pending = []
    for model in models:
        task = asyncio.create_task(ask(model, prompt))
        pending.append(task)
    done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
    return done.pop().result()
""",
    ),
    example(
        Pattern.ASYNCIO_TASK,
        "INVALID: a task serving until the process stops",
        [],
        "A task reading a stream again each time it ends (`while True:` around `async for "
        "message in pubsub.listen()`), or looping on a stop flag and waiting each round, is "
        "the process's own machinery, as the same loop in a thread is: no worker could finish "
        "it. Read wherever the loop is defined, in this module or another.",
        """
import asyncio

async def handle(message): ...

async def listen(redis):
    while True:
        pubsub = redis.pubsub()
        await pubsub.subscribe("commands")
        async for message in pubsub.listen():
            await handle(message)

class Peers:
    def __init__(self):
        self.closing = False

    async def maintain(self, peer):
        while not self.closing:
            await peer.connect()
            await peer.wait()

    def start(self, peer):
        asyncio.create_task(self.maintain(peer))

async def lifespan(redis):
    asyncio.create_task(listen(redis))
""",
    ),
    example(
        Pattern.ASYNCIO_TASK,
        "INVALID: a task made to memoise an awaitable",
        [],
        "A task returned from a cached function, or stored in a cache, is there to be awaited "
        "many times by the callers that need the value, not to run in the background.",
        """
import asyncio
from functools import lru_cache

async def load_config(name): ...

@lru_cache(maxsize=32)
def config(name):
    return asyncio.create_task(load_config(name))

_config_cache = {}

def shared_config(name):
    _config_cache[name] = asyncio.create_task(load_config(name))
    return _config_cache[name]
""",
    ),
    example(
        Pattern.ASYNCIO_TASK,
        "create_task on a loop reached through a call",
        [("app.persist", C)],
        "A receiver named like an event loop (loop, event_loop) whose type is not known here "
        "is taken for one, however it is reached.",
        """
from .context import current_session

async def persist(step): ...

def on_event_start(step):
    current_session.get().loop.create_task(persist(step))
""",
    ),
    example(
        Pattern.ASYNCIO_TASK,
        "INVALID: TaskGroup",
        [],
        "A TaskGroup waits for its tasks when the async with block exits.",
        """
import asyncio

async def fetch(url): ...

async def pages(urls):
    async with asyncio.TaskGroup() as tg:
        for url in urls:
            tg.create_task(fetch(url))
""",
    ),
    example(
        Pattern.ASYNCIO_TASK,
        "A task the request waits on until it is ready",
        [("app.hold_link", C), ("app.warm", C)],
        "The function makes an Event, starts a task that can set it (passed to the coroutine, "
        "or seen by a coroutine defined inside the function) and then waits on it: the task "
        "holds a connection for the request and says when it is open; plumbing, not a job "
        "(open_link, open_session: not reported). Handing the task an Event nobody waits on "
        "here (keep_link), or waiting on an Event the task was not given (open_other), "
        "leaves a job.",
        """
import asyncio

async def hold_link(url, ready, stop): ...

async def open_link(url):
    ready = asyncio.Event()
    stop = asyncio.Event()
    task = asyncio.create_task(hold_link(url, ready, stop))
    await ready.wait()
    return task, stop

async def open_session(url):
    ready = asyncio.Event()

    async def runner():
        ready.set()

    task = asyncio.create_task(runner())
    await asyncio.wait_for(ready.wait(), timeout=10)
    return task

async def keep_link(url):
    ready = asyncio.Event()
    asyncio.create_task(hold_link(url, ready, None))
    return ready

async def warm(url): ...

async def open_other(url, other: asyncio.Event):
    asyncio.create_task(warm(url))
    await other.wait()
""",
    ),
    example(
        Pattern.ASYNCIO_TASK,
        "loop.call_later and call_soon",
        [("app.expire_cart", F), ("app.expire_cart", F)],
        "The event loop runs the callback after the handler returns, like a threading.Timer.",
        """
import asyncio

def expire_cart(cart_id): ...

async def add_to_cart(cart_id):
    loop = asyncio.get_running_loop()
    loop.call_later(1800, expire_cart, cart_id)
    loop.call_soon(expire_cart, cart_id)
""",
    ),
]

RUN_IN_EXECUTOR = [
    example(
        Pattern.RUN_IN_EXECUTOR,
        "A producer whose items the function reads right below",
        [("app.pump", F)],
        "A thread that fills a queue of this function (seen by a nested function, or passed "
        "to it) which the function then reads (`rows.get()`, `run_in_executor(None, q.get)`) "
        "is the producer half of a streamed response: request plumbing, not reported. A "
        "queue handed over and never read here (fill_cache) leaves a job.",
        """
import asyncio
import queue

def fetch(query): ...

def pump(query, out): ...

def stream_rows(loop, query):
    rows = queue.Queue()

    def produce():
        for row in fetch(query):
            rows.put(row)
        rows.put(None)

    loop.run_in_executor(None, produce)
    while (row := rows.get()) is not None:
        yield row

def stream_pumped(loop, query):
    out = queue.Queue()
    loop.run_in_executor(None, pump, query, out)
    return out.get()

def fill_cache(loop, query):
    out = queue.Queue()
    loop.run_in_executor(None, pump, query, out)
    return out
""",
    ),
    example(
        Pattern.RUN_IN_EXECUTOR,
        "Awaited run_in_executor",
        [("app.resize", F)],
        "Still a site: the blocking work could move to a queue, though the request waits for it.",
        """
import asyncio

def resize(path): ...

async def upload(path):
    loop = asyncio.get_running_loop()
    await loop.run_in_executor(None, resize, path)
""",
    ),
    example(
        Pattern.RUN_IN_EXECUTOR,
        "to_thread with a partial",
        [("app.render", P)],
        "asyncio.to_thread runs the partial's function in a thread.",
        """
import asyncio
import functools

def render(report_id, fmt): ...

async def export(report_id):
    await asyncio.to_thread(functools.partial(render, report_id, fmt="pdf"))
""",
    ),
    example(
        Pattern.RUN_IN_EXECUTOR,
        "to_thread of a method, value used",
        [("app.Store.load", B)],
        "The caller uses the result: reported with result_used.",
        """
import asyncio

class Store:
    def load(self, key): ...

    async def get(self, key):
        data = await asyncio.to_thread(self.load, key)
        return data
""",
    ),
    example(
        Pattern.ASYNCIO_TASK,
        "Task handle kept on the instance",
        [("app.expire_sessions", C)],
        "The handle is kept in `self._task`, where other methods cancel or check it: the "
        "result is used (result_used, result_kept_in), whatever this function does next. "
        "Likewise a value or handle bound to an attribute, an item or a `global` name.",
        """
import asyncio

async def expire_sessions(): ...

class Sessions:
    def ensure_expiry(self):
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(expire_sessions())

    def close(self):
        self._task.cancel()
""",
    ),
    example(
        Pattern.RUN_IN_EXECUTOR,
        "Not awaited, lambda",
        [("app.index", L)],
        "The future is dropped: background work.",
        """
def index(doc_id): ...

def save(loop, pool, doc_id):
    loop.run_in_executor(pool, lambda: index(doc_id))
""",
    ),
    example(
        Pattern.RUN_IN_EXECUTOR,
        "INVALID: running the loop",
        [],
        "run_until_complete and asyncio.run are not handing work to a thread.",
        """
import asyncio

async def main(): ...

def cli(loop):
    loop.run_until_complete(main())
    asyncio.run(main())
""",
    ),
    example(
        Pattern.RUN_IN_EXECUTOR,
        "Starlette run_in_threadpool and anyio to_thread",
        [("app.send_receipt", F), ("app.send_receipt", F)],
        "FastAPI and Starlette apps run blocking functions in the thread pool the same way.",
        """
import anyio
from starlette.concurrency import run_in_threadpool

def send_receipt(order_id): ...

async def pay(order_id):
    await run_in_threadpool(send_receipt, order_id)
    await anyio.to_thread.run_sync(send_receipt, order_id)
""",
    ),
    example(
        Pattern.RUN_IN_EXECUTOR,
        "sync_to_async in a Django async view",
        [("app.send_receipt", F)],
        "asgiref runs the sync function in a thread, like asyncio.to_thread.",
        """
from asgiref.sync import sync_to_async

def send_receipt(order_id): ...

async def pay(request, order_id):
    await sync_to_async(send_receipt)(order_id)
""",
    ),
    example(
        Pattern.RUN_IN_EXECUTOR,
        "A function chosen in branches of an if",
        [(None, D), (None, D)],
        "Each branch binds another function, so which one runs is only known at run time: "
        "dynamic, never the last one written (the rewrite would run that one for every "
        "request). A name bound to None first and to a function in an if is dynamic too: "
        "`Thread(target=None)` runs nothing.",
        """
import asyncio

def to_csv(rows): ...

def to_tsv(rows): ...

async def export(fmt, rows):
    if fmt == "csv":
        writer = to_csv
    elif fmt == "tsv":
        writer = to_tsv
    else:
        raise ValueError(fmt)
    await asyncio.to_thread(writer, rows)

async def export_tsv(rows):
    writer = None
    if rows:
        writer = to_tsv
    await asyncio.to_thread(writer, rows)
""",
    ),
    example(
        Pattern.RUN_IN_EXECUTOR,
        "A module global a set-up function rebinds",
        [(None, D), ("app.to_tsv", F)],
        "`global writer; writer = to_csv` in a function makes the module's `writer` whatever "
        "the last set-up chose: dynamic. A global nobody rebinds is the function it names.",
        """
import asyncio

def to_csv(rows): ...

def to_tsv(rows): ...

writer = to_tsv
reader = to_tsv

def configure(fmt):
    global writer
    if fmt == "csv":
        writer = to_csv

async def export(rows):
    await asyncio.to_thread(writer, rows)

async def export_fixed(rows):
    await asyncio.to_thread(reader, rows)
""",
    ),
    example(
        Pattern.RUN_IN_EXECUTOR,
        "A function the module binds in a try or an if",
        [(None, D), (None, D), ("app.archive", F)],
        "`try: from fastmail import send` / `except ImportError: from .mail import send`, "
        "or a `def` in each branch of an if: which one the module holds is decided when it is "
        "imported, so the spawn is dynamic (rewritten as the project's one, it would break "
        "where the other is loaded). A name bound twice at the top level is the last one.",
        """
import asyncio
import sys

try:
    from fastmail import send
except ImportError:
    from .mail import send

if sys.platform == "win32":
    def notify(to): ...
else:
    def notify(to): ...

def archive(to): ...

def archive(to): ...

async def signup(to):
    await asyncio.to_thread(send, to)
    await asyncio.to_thread(notify, to)
    await asyncio.to_thread(archive, to)
""",
    ),
]
