"""Moved sites (``enqueue``): calls that already hand a ``queue_runtime`` job to the queue.

Checked through the classifier: whether the enqueued function carries
``queue_runtime``'s ``@job`` is known only once its module is resolved (re-exports
included), and the job's verdict comes from its body as for any other site.
"""

from __future__ import annotations

from inventory.detector_examples._model import F, example
from inventory.models import Pattern

_JOBS = """
from queue_runtime import job


@job(pool="batch", idempotent=True)
def warm(product_id: int) -> None:
    CACHE[product_id] = LOAD(product_id)
"""

MOVED = [
    example(
        Pattern.ENQUEUE,
        "a @job function of the same module, enqueued",
        [("app.send_digest", F)],
        "`migrator apply` wrote `send_digest.enqueue(...)` and decorated `send_digest` with "
        "`queue_runtime`'s `@job`: the site is moved, and the job stays in the inventory "
        "with its verdict (so `rollout set app.send_digest inline` and `plan --check` know it).",
        """
import smtplib

from queue_runtime import job


@job(pool="mail")
def send_digest(user_id: int) -> None:
    smtplib.SMTP("localhost").sendmail("a@example.com", [f"{user_id}@example.com"], "digest")


def subscribe(user_id: int) -> None:
    send_digest.enqueue(user_id)
""",
    ),
    example(
        Pattern.ENQUEUE,
        "an imported @job: options(...).enqueue and enqueue_many",
        [("jobs.warm", F), ("jobs.warm", F)],
        "`JobFunction.options(...)` binds queue options (`inline=`, `run_at=`, ...) and "
        "returns an object whose `.enqueue` takes the job's arguments; `enqueue_many` queues "
        "many runs at once. Both name the job `warm` of `jobs.py`, resolved through the import.",
        """
from queue_runtime import InlineShape

from jobs import warm


def update(product_id: int) -> None:
    warm.options(inline=InlineShape.THREAD).enqueue(product_id)


def update_all(ids: list[int]) -> None:
    warm.enqueue_many([((i,), {}) for i in ids])
""",
        {"jobs.py": _JOBS},
    ),
    example(
        Pattern.ENQUEUE,
        "a job reached through its module, and the wrapper apply writes for a Thread subclass",
        [("jobs.warm", F), ("app.run_warmer", F)],
        "`jobs.warm.enqueue(...)` resolves like any module attribute. For a `Thread` subclass "
        "`apply` writes a wrapper job (`run_warmer`) that calls `run()`: once moved, the site "
        "names the wrapper, the name the runtime registers (`module.function`).",
        """
from threading import Thread

from queue_runtime import InlineShape, job

import jobs


class Warmer(Thread):
    def __init__(self, product_id: int) -> None:
        super().__init__()
        self.product_id = product_id

    def run(self) -> None:
        jobs.CACHE[self.product_id] = jobs.LOAD(self.product_id)


@job(pool="batch", idempotent=True)
def run_warmer(product_id: int) -> None:
    Warmer(product_id=product_id).run()


def create(product_id: int) -> None:
    jobs.warm.enqueue(product_id)
    run_warmer.options(inline=InlineShape.THREAD).enqueue(product_id)
""",
        {"jobs.py": _JOBS},
    ),
    example(
        Pattern.ENQUEUE,
        "fn.enqueue handed on to run later: BackgroundTasks and on_commit",
        [("jobs.warm", F), ("jobs.warm", F)],
        "`apply` moves `background_tasks.add_task(warm, i)` to `add_task(warm.enqueue, i)` "
        "(queued after the response, as the task ran) and `on_commit(partial(warm, i))` to "
        "`on_commit(partial(warm.enqueue, i))`: what runs there is the enqueue, so the site "
        "is moved, like a call of `warm.enqueue(i)`.",
        """
from functools import partial

from django.db import transaction
from fastapi import BackgroundTasks

from jobs import warm


async def update(product_id: int, background_tasks: BackgroundTasks) -> None:
    background_tasks.add_task(warm.enqueue, product_id)


def save(product_id: int) -> None:
    transaction.on_commit(partial(warm.enqueue, product_id))
""",
        {"jobs.py": _JOBS},
    ),
    example(
        Pattern.ENQUEUE,
        "a job named by @job(name=...)",
        [("mail.digest", F)],
        "The runtime registers a job as `module.function` unless `@job(name=...)` says "
        "otherwise; the explicit name wins, so scan, plan and `migrator rollout set` use the "
        "name the workers and the dashboard know.",
        """
import smtplib

from queue_runtime import job


@job(name="mail.digest", pool="mail")
def send_digest(user_id: int) -> None:
    smtplib.SMTP("localhost").sendmail("a@example.com", [f"{user_id}@example.com"], "digest")


def subscribe(user_id: int) -> None:
    send_digest.enqueue(user_id)
""",
    ),
    example(
        Pattern.ENQUEUE,
        "a periodic @job: the scheduler site apply moved into the decorator",
        [("app.warm_all", F)],
        '`schedule.every(15).minutes.do(warm_all)` becomes `@job(every="15m")` on `warm_all` '
        "(`cron=` alike): the workers enqueue it once per tick and no call is left, so the "
        "decorated function is the moved site.",
        """
from queue_runtime import job


@job(pool="batch", idempotent=True, every="15m")
def warm_all() -> None:
    for product_id in IDS:
        CACHE[product_id] = LOAD(product_id)
""",
    ),
    example(
        Pattern.ENQUEUE,
        "INVALID: .enqueue of an RQ queue",
        [],
        "`Queue.enqueue(f, *args)` is RQ's: the work already leaves the process, and `q` is "
        "no `@job` function of the project.",
        """
from redis import Redis
from rq import Queue

from app_tasks import count_words

q = Queue(connection=Redis())


def submit(url: str) -> None:
    q.enqueue(count_words, url)
""",
    ),
    example(
        Pattern.ENQUEUE,
        "INVALID: .enqueue of a project object, and of another library's @job",
        [],
        "Only `queue_runtime`'s `@job` (`queue_runtime.job`) makes a moved site: an object's "
        "own `enqueue` method, or a decorator named `job` from elsewhere, is not one.",
        """
from myqueue import job


class Outbox:
    def enqueue(self, message: str) -> None:
        self.pending.append(message)


outbox = Outbox()


@job
def ping(host: str) -> None:
    print(host)


def notify(message: str) -> None:
    outbox.enqueue(message)
    ping.enqueue("example.com")
""",
    ),
]
