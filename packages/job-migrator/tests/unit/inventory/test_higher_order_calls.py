"""Functions of the standard library that call their function argument here, in this process.

``list(map(notify, users))`` runs ``notify`` for every user (the builtins' docs), as do
``functools.reduce``, ``itertools.starmap`` and their kin; ``partial(notify, user)()``
runs ``notify``; ``methodcaller("deliver")(order)`` runs ``order.deliver()``. The scan
read ``map`` as an executor's ``map`` (a spawn: its callable not called here) and the
others' results as pure values, so a job posting through any of them read `idempotent`.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from inventory import Idempotency, Inventory, Pattern

Scanner = Callable[[dict[str, str]], Inventory]

JOBS = """import functools
import itertools
import operator
import threading
from concurrent.futures import ThreadPoolExecutor

import requests


POOL = ThreadPoolExecutor(max_workers=2)


def post(x):
    requests.post("https://hooks.example", json=x)


def through_map(xs):
    list(map(post, xs))


def through_reduce(xs):
    functools.reduce(lambda acc, x: post(x), xs, None)


def through_starmap(pairs):
    for _ in itertools.starmap(post, pairs):
        pass


def through_partial(x):
    functools.partial(post, x)()


def through_methodcaller(order):
    operator.methodcaller("deliver")(order)


def counted(xs):
    return sum(map(len, xs))


def view(request):
    threading.Thread(target=through_map, args=([1],)).start()
    threading.Thread(target=through_reduce, args=([1],)).start()
    threading.Thread(target=through_starmap, args=([(1,)],)).start()
    threading.Thread(target=through_partial, args=(1,)).start()
    threading.Thread(target=through_methodcaller, args=(None,)).start()
    threading.Thread(target=counted, args=(["a"],)).start()
    POOL.map(post, [1, 2])
"""


@pytest.fixture
def scanned(scan_project: Scanner) -> Inventory:
    return scan_project({"app/__init__.py": "", "app/jobs.py": JOBS})


@pytest.mark.parametrize(
    "job", ["through_map", "through_reduce", "through_starmap", "through_partial"]
)
def test_a_function_handed_to_a_standard_library_caller_runs_here(
    scanned: Inventory, job: str
) -> None:
    [found] = [j for j in scanned.jobs if j.qualname == f"app.jobs.{job}"]
    assert found.idempotency is Idempotency.NON_IDEMPOTENT
    assert any(e.api == "requests.post" for e in found.effects)


def test_a_method_called_by_name_is_a_gap(scanned: Inventory) -> None:
    [found] = [j for j in scanned.jobs if j.qualname == "app.jobs.through_methodcaller"]
    assert found.idempotency is Idempotency.UNKNOWN
    assert any("methodcaller" in e.message for e in found.evidence)


def test_a_pure_function_mapped_stays_pure(scanned: Inventory) -> None:
    [found] = [j for j in scanned.jobs if j.qualname == "app.jobs.counted"]
    assert found.idempotency is Idempotency.IDEMPOTENT


def test_an_executor_map_is_still_a_spawn_of_its_own(scanned: Inventory) -> None:
    spawned = [s for s in scanned.sites if s.job == "app.jobs.post"]
    assert [s.pattern for s in spawned] == [Pattern.EXECUTOR_SUBMIT]
