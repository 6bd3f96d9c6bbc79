"""``done, pending = await asyncio.wait(tasks)`` binds two sets of tasks; ``concurrent.futures
.wait(futures)`` two sets of futures (as their documentation says): ``for t in pending:
t.cancel()`` is then a task's own method, bookkeeping in the process, not an unknown call.

Adversaries: the same unpacking of a project function's result, three names, a starred
name, and a name rebound after the wait stay undecided.
"""

from __future__ import annotations

from inventory import Idempotency
from tests.unit.inventory.conftest import Verdicts, thread_views

JOBS = (
    "import asyncio\n"
    "import concurrent.futures\n"
    "from concurrent.futures import ThreadPoolExecutor, wait\n\n"
    "from app.helpers import split\n\n\n"
    "async def _fetch(n):\n"
    "    return n\n\n\n"
    "async def _first_of(ns):\n"
    "    tasks = [asyncio.create_task(_fetch(n)) for n in ns]\n"
    "    done, pending = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)\n"
    "    for task in pending:\n"
    "        task.cancel()\n"
    "    return [task.result() for task in done]\n\n\n"
    "def first_of(ns):\n"
    "    return asyncio.run(_first_of(ns))\n\n\n"
    "def threads(ns):\n"
    "    with ThreadPoolExecutor() as pool:\n"
    "        futures = [pool.submit(len, n) for n in ns]\n"
    "        finished, late = wait(futures, timeout=1)\n"
    "        for future in late:\n"
    "            future.cancel()\n"
    "        return [f.result() for f in finished]\n\n\n"
    "def dotted(ns):\n"
    "    done, not_done = concurrent.futures.wait([])\n"
    "    for future in not_done:\n"
    "        future.cancel()\n\n\n"
    "def project_pair(ns):\n"
    "    done, pending = split(ns)\n"
    "    for task in pending:\n"
    "        task.cancel()\n\n\n"
    "async def _rebound(ns):\n"
    "    done, pending = await asyncio.wait([])\n"
    "    pending = split(ns)\n"
    "    for task in pending:\n"
    "        task.cancel()\n\n\n"
    "def rebound(ns):\n"
    "    asyncio.run(_rebound(ns))\n\n\n"
    "async def _starred(ns):\n"
    "    *done, pending = await asyncio.wait([])\n"
    "    pending.cancel()\n\n\n"
    "def starred(ns):\n"
    "    asyncio.run(_starred(ns))\n"
)
HELPERS = "def split(ns):\n    return ns.first, ns.rest\n"
NAMES = ("first_of", "threads", "dotted", "project_pair", "rebound", "starred")


def test_the_sets_a_wait_returns_hold_tasks_and_futures(app_verdicts: Verdicts) -> None:
    verdicts = app_verdicts(jobs=JOBS, helpers=HELPERS, views=thread_views(NAMES))
    assert {name: verdicts[name] for name in NAMES} == {
        "first_of": Idempotency.IDEMPOTENT,
        "threads": Idempotency.IDEMPOTENT,
        "dotted": Idempotency.IDEMPOTENT,
        "project_pair": Idempotency.UNKNOWN,
        "rebound": Idempotency.UNKNOWN,
        "starred": Idempotency.UNKNOWN,
    }


MADE = (
    "import asyncio\n"
    "from concurrent.futures import ThreadPoolExecutor\n\n"
    "from app.helpers import Mailbox\n\n\n"
    "async def _fetch(n):\n"
    "    return n\n\n\n"
    "async def _cancel_all(ns):\n"
    "    tasks = [asyncio.create_task(_fetch(n)) for n in ns]\n"
    "    for task in tasks:\n"
    "        task.cancel()\n\n\n"
    "def cancel_all(ns):\n"
    "    asyncio.run(_cancel_all(ns))\n\n\n"
    "def listed(a, b):\n"
    "    with ThreadPoolExecutor() as pool:\n"
    "        futures = [pool.submit(len, a), pool.submit(len, b)]\n"
    "        for future in futures:\n"
    "            future.cancel()\n\n\n"
    "def by_loop_variable(boxes):\n"
    "    made = [box.open() for box in boxes]\n"
    "    for item in made:\n"
    "        item.cancel()\n\n\n"
    "async def _mixed(ns):\n"
    "    made = [asyncio.create_task(_fetch(1)), Mailbox()]\n"
    "    for item in made:\n"
    "        item.cancel()\n\n\n"
    "def mixed(ns):\n"
    "    asyncio.run(_mixed(ns))\n"
)
MAILBOX = (
    "import smtplib\n\n\n"
    "class Mailbox:\n"
    "    def cancel(self):\n"
    "        smtplib.SMTP('localhost').sendmail('a@example.com', ['b@example.com'], 'x')\n"
)
MADE_NAMES = ("cancel_all", "listed", "by_loop_variable", "mixed")


def test_a_list_made_of_one_kind_of_call_holds_what_it_returns(app_verdicts: Verdicts) -> None:
    verdicts = app_verdicts(jobs=MADE, helpers=MAILBOX, views=thread_views(MADE_NAMES))
    assert {name: verdicts[name] for name in MADE_NAMES} == {
        "cancel_all": Idempotency.IDEMPOTENT,
        "listed": Idempotency.IDEMPOTENT,
        "by_loop_variable": Idempotency.UNKNOWN,
        "mixed": Idempotency.UNKNOWN,
    }
