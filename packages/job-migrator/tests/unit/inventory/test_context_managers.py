"""A project class used as a ``with`` statement's context manager: its ``__enter__`` and
``__exit__`` run there (the data model: ``with Audit(order):`` calls
``type(mgr).__enter__(mgr)``, then ``__exit__``; ``async with``, ``__aenter__`` and
``__aexit__``), and one a ``for`` loop iterates runs its ``__iter__`` and ``__next__``. The
scan followed the constructor only, so a job whose lock, audit trail or unit of work posts
or commits on entry or exit, or whose feed acknowledges as it is read, was `idempotent`.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from inventory import Idempotency, Inventory

Scanner = Callable[[dict[str, str]], Inventory]

JOBS = """import threading

import requests


class Audit:
    def __init__(self, name):
        self.name = name

    def __enter__(self):
        requests.post("https://audit.example/start", json={"n": self.name})
        return self

    def __exit__(self, *exc):
        return False


class Scope:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        requests.post("https://audit.example/commit")


class NamedScope(Scope):
    pass


class Remote:
    async def __aenter__(self):
        return self

    async def __aexit__(self, *exc):
        requests.post("https://audit.example/close")


def audited(x):
    with Audit("x") as audit:
        return audit.name


def inherited_exit(x):
    with NamedScope():
        pass


async def async_exit(x):
    async with Remote():
        pass


class Feed:
    def __iter__(self):
        return self

    def __next__(self):
        requests.post("https://feed.example/ack")
        raise StopIteration


def iterated(x):
    for entry in Feed():
        print(entry)


def read_file(path):
    with open(path) as f:
        return f.read()


def view(request):
    threading.Thread(target=audited, args=(1,)).start()
    threading.Thread(target=inherited_exit, args=(1,)).start()
    threading.Thread(target=read_file, args=("/tmp/x",)).start()
    threading.Thread(target=iterated, args=(1,)).start()
"""

TASKS = """import asyncio

from app.jobs import async_exit


async def handler(request):
    asyncio.create_task(async_exit(1))
"""


@pytest.fixture
def verdicts(scan_project: Scanner) -> dict[str, Idempotency]:
    inventory = scan_project({"app/__init__.py": "", "app/jobs.py": JOBS, "app/tasks.py": TASKS})
    return {j.qualname.rsplit(".", 1)[-1]: j.idempotency for j in inventory.jobs}


@pytest.mark.parametrize("job", ["audited", "inherited_exit", "async_exit", "iterated"])
def test_what_a_context_manager_does_on_entry_or_exit_is_the_jobs(
    verdicts: dict[str, Idempotency], job: str
) -> None:
    assert verdicts[job] is Idempotency.NON_IDEMPOTENT


def test_a_library_context_manager_is_the_catalogues(verdicts: dict[str, Idempotency]) -> None:
    assert verdicts["read_file"] is Idempotency.IDEMPOTENT
