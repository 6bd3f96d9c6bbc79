"""Jobs that never return: services are not sites, loops forever are never enqueued.

Found by trying to break ``apply``: ``threading.Thread(target=ping_forever).start()`` with
``def ping_forever(): while True: requests.get(...); time.sleep(60)`` was an idempotent job
and ``apply`` rewrote it to ``ping_forever.options(inline=THREAD).enqueue()``: once promoted,
a worker would hold the job for good and, each time its lease ran out, start another copy.
A loop that only ever POSTs was refused with "name it with --job and a key", a reason that,
followed, moved it. And a task started with ``asyncio.create_task(listen(redis))``, whose
``listen`` reads a Redis ``pubsub.listen()`` stream forever from another module, was
reported as a job, while the same loop in a thread of the same module was not.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from codemods import ApplyOptions, Status, plan_apply
from inventory import scan
from inventory.models import Idempotency, Inventory, Pattern
from tests.unit.inventory.fake_venv import write_tree

LOOPS = """import asyncio
import threading
import time

import requests


def ping_forever():
    while True:
        requests.get("https://hc.example.com/ping", timeout=5)
        time.sleep(60)


def post_forever():
    while True:
        requests.post("https://hc.example.com/ping", timeout=5)
        time.sleep(60)


def run_loop():
    while True:
        requests.get("https://example.com/refresh", timeout=5)
        time.sleep(3600)


def start_refresher():
    run_loop()


def until_done():
    while True:
        if requests.get("https://example.com/ready", timeout=5).ok:
            break
        time.sleep(1)


async def listen(redis):
    while True:
        pubsub = redis.pubsub()
        await pubsub.subscribe("commands")
        async for message in pubsub.listen():
            requests.post("https://example.com/hook", json=message, timeout=5)


class Flusher:
    def __init__(self):
        self._stop = threading.Event()

    def run(self):
        while not self._stop.is_set():
            self._stop.wait(10)
            requests.post("https://example.com/flush", timeout=5)


FLUSHER = Flusher()


def wait_started(bus):
    while bus.state != "started":
        time.sleep(0.1)


def after_start(bus):
    wait_started(bus)
    requests.get("https://example.com/warm", timeout=5)


async def notify(user_id):
    requests.get(f"https://example.com/users/{user_id}", timeout=5)
"""

VIEWS = """import asyncio
import threading

from flask import Flask

from app import loops

app = Flask(__name__)


@app.post("/start")
def start():
    threading.Thread(target=loops.ping_forever, daemon=True).start()
    threading.Thread(target=loops.post_forever, daemon=True).start()
    threading.Thread(target=loops.start_refresher, daemon=True).start()
    threading.Thread(target=loops.until_done, daemon=True).start()
    threading.Thread(target=loops.FLUSHER.run, daemon=True).start()
    threading.Thread(target=loops.after_start, args=(object(),), daemon=True).start()
    return "ok"


async def lifespan(redis, user_id):
    asyncio.create_task(loops.listen(redis))
    asyncio.create_task(loops.notify(user_id))
"""


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("loops")
    write_tree(root, {"app/__init__.py": "", "app/loops.py": LOOPS, "app/views.py": VIEWS})
    return root


@pytest.fixture(scope="module")
def inventory(project: Path) -> Inventory:
    return scan(project, use_cache=False, write=False, jobs=1)


def _line(text: str, needle: str) -> int:
    return next(n for n, line in enumerate(text.splitlines(), 1) if needle in line)


def test_services_started_from_another_module_are_not_sites(inventory: Inventory) -> None:
    jobs = {s.job for s in inventory.sites}
    # a stream read again forever (a task), a loop on a stop flag waiting each round (a thread)
    assert "app.loops.listen" not in jobs
    assert "app.loops.Flusher.run" not in jobs
    # the one-shot task beside them is work, and the loops forever are reported
    assert {"app.loops.notify", "app.loops.ping_forever", "app.loops.until_done"} <= jobs


def test_a_job_that_never_returns_names_its_loop(inventory: Inventory) -> None:
    ping = inventory.job("app.loops.ping_forever")
    assert ping is not None and ping.endless_loop is not None
    assert (ping.endless_loop.path, ping.endless_loop.line) == (
        "app/loops.py",
        _line(LOOPS, "while True:"),
    )
    assert any("never returns" in e.message for e in ping.evidence)
    # run in its stead by a function it calls: the loop is the callee's
    refresher = inventory.job("app.loops.start_refresher")
    assert refresher is not None and refresher.endless_loop is not None
    run_loop = LOOPS.index("def run_loop")
    assert refresher.endless_loop.line == _line(LOOPS[run_loop:], "while True:") + LOOPS[
        :run_loop
    ].count("\n")
    # a loop with a way out returns, and so does a one-shot task, and so does a function
    # calling a wait for a state (a service loop by the words of its condition: one link
    # further only a plain `while True` counts)
    for name in ("app.loops.until_done", "app.loops.notify", "app.loops.after_start"):
        job = inventory.job(name)
        assert job is not None and job.endless_loop is None, name


def _outcomes(project: Path, inventory: Inventory, options: ApplyOptions | None = None) -> dict:
    result = plan_apply(project, inventory, options or ApplyOptions(), scanner=None)
    return {o.site.job.rsplit(".", 1)[-1]: o for o in result.outcomes}, result


def test_apply_never_enqueues_it_named_keyed_or_held(project: Path, inventory: Inventory) -> None:
    assert inventory.job("app.loops.ping_forever").idempotency is Idempotency.IDEMPOTENT
    assert inventory.job("app.loops.post_forever").idempotency is Idempotency.NON_IDEMPOTENT
    loop_line = _line(LOOPS, "while True:")
    for options in (
        ApplyOptions(),
        ApplyOptions(hold_unknown=True),
        ApplyOptions(
            jobs=("app.loops.ping_forever", "app.loops.post_forever"),
            keys={"app.loops.post_forever": "ping:{*}", "app.loops.ping_forever": "p:{*}"},
        ),
    ):
        outcomes, result = _outcomes(project, inventory, options)
        named = [n.rsplit(".", 1)[-1] for n in options.jobs]
        for name in named or ("ping_forever", "post_forever", "start_refresher"):
            refused = outcomes[name]
            assert refused.status is Status.SKIPPED, (name, options)
            assert "never returns" in refused.reason and "periodic job" in refused.reason
        assert f"the loop at app/loops.py:{loop_line} " in outcomes["ping_forever"].reason
        written = "".join(c.after for c in result.changes)
        for name in ("ping_forever", "post_forever", "start_refresher"):
            assert f"{name}.options(" not in written and f"{name}.enqueue(" not in written
        if not named:  # (naming jobs moves only those)
            for name in ("ping_forever", "post_forever", "start_refresher"):
                assert f"target=loops.{name}, daemon=True).start()" in written
            # the loop with a way out moves, as before
            assert outcomes["until_done"].status is Status.REWRITTEN


def test_following_the_reason_moves_the_work(tmp_path: Path) -> None:
    """The reason says: make one round a function of its own and declare it a periodic
    job in place of the loop and its start. Done so, nothing endless is left to refuse."""
    round_only = LOOPS.replace(
        "def ping_forever():\n    while True:\n"
        '        requests.get("https://hc.example.com/ping", timeout=5)\n'
        "        time.sleep(60)\n",
        "from datetime import timedelta\n\nfrom queue_runtime import job\n\n\n"
        "@job(every=timedelta(minutes=1))\n"
        "def ping():\n"
        '    requests.get("https://hc.example.com/ping", timeout=5)\n',
    )
    assert round_only != LOOPS
    views = VIEWS.replace(
        "    threading.Thread(target=loops.ping_forever, daemon=True).start()\n", ""
    )
    write_tree(tmp_path, {"app/__init__.py": "", "app/loops.py": round_only, "app/views.py": views})
    found = scan(tmp_path, use_cache=False, write=False, jobs=1)
    assert found.job("app.loops.ping_forever") is None
    outcomes, _ = _outcomes(tmp_path, found)
    assert "ping_forever" not in outcomes
    # the round is a moved, periodic job the scan keeps knowing: one that returns
    periodic = [s for s in found.sites if s.job == "app.loops.ping"]
    assert [s.pattern for s in periodic] == [Pattern.ENQUEUE]
    ping = found.job("app.loops.ping")
    assert ping is not None and ping.endless_loop is None
    assert ping.idempotency is Idempotency.IDEMPOTENT
    assert not any("never returns" in o.reason for n, o in outcomes.items() if "ping" in n)
