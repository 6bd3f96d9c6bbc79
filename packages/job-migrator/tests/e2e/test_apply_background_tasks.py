"""A moved ``BackgroundTasks`` site still runs its job after the response, never in the request.

A tiny FastAPI app (written here) hands two jobs to ``background_tasks.add_task``
from ``async def`` handlers: a plain function and a coroutine. An ASGI
middleware writes ``response`` to an events file when the response's last body
chunk is sent; each handler and each job write a line of their own there, with
the thread and the event loop they ran on. ``plan_apply`` + ``write`` move both
sites. Then, against the real PostgreSQL and Redis (a schema and a Redis
prefix of this test's own):

- inline (the gate keeps the job in the process): the plain job runs after the
  response, off the event loop's thread, as Starlette ran it before; the
  coroutine job runs on the handler's own loop, not on a loop of its own;
- queued: the job is enqueued after the response, and a real ``queue-runtime
  worker`` (another process) runs it;
- a re-scan of the written tree reports both sites as moved (pattern ``enqueue``).

Before this rewrite the site became ``send_receipt.enqueue(order_id)`` in the
handler: an inline run happened before the response, on the loop's thread.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from codemods import Status, plan_apply, write
from inventory import scan
from inventory.models import (
    CallSite,
    Confidence,
    Framework,
    Idempotency,
    Inventory,
    Job,
    Location,
    Pattern,
)
from tests.e2e._queue_env import app_env, migrate, private_queue, run_python, worker

pytestmark = [pytest.mark.pg, pytest.mark.redis]

APP = """import asyncio
import os
import threading
from pathlib import Path

from fastapi import BackgroundTasks, FastAPI

EVENTS = Path(__file__).resolve().parent.parent / "events.log"


def event(what: str) -> None:
    try:
        loop = id(asyncio.get_running_loop())
    except RuntimeError:
        loop = 0
    with EVENTS.open("a") as out:
        out.write(f"{what} {os.getpid()} {threading.get_ident()} {loop}\\n")


def send_receipt(order_id: int) -> None:
    event(f"receipt-{order_id}")


async def notify(user_id: int) -> None:
    event(f"notify-{user_id}")


class Marker:
    \"\"\"Writes 'response' once the response's last body chunk has gone out.\"\"\"

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        async def sending(message):
            await send(message)
            if message["type"] == "http.response.body" and not message.get("more_body"):
                event("response")

        await self.app(scope, receive, sending)


app = FastAPI()


@app.post("/orders/{order_id}")
async def pay(order_id: int, background_tasks: BackgroundTasks):
    background_tasks.add_task(send_receipt, order_id)
    event("handler")
    return {"ok": True}


@app.post("/users/{user_id}")
async def signup(user_id: int, background_tasks: BackgroundTasks):
    background_tasks.add_task(notify, user_id)
    event("handler")
    return {"ok": True}


asgi = Marker(app)
"""

CLIENT = """import sys
from fastapi.testclient import TestClient
from acme.app import asgi

with TestClient(asgi) as client:
    for path in sys.argv[1:]:
        assert client.post(path).status_code == 200
"""


def _inventory(root: Path) -> Inventory:
    lines = (root / "acme" / "app.py").read_text().splitlines()

    def line(text: str) -> int:
        return next(i for i, t in enumerate(lines, 1) if text in t)

    sites, jobs = [], []
    for name, is_async in (("send_receipt", False), ("notify", True)):
        qualname = f"acme.app.{name}"
        sites.append(
            CallSite(
                location=Location(path="acme/app.py", line=line(f"add_task({name}")),
                pattern=Pattern.BACKGROUND_TASKS,
                job=qualname,
                handler=Framework.FASTAPI,
            )
        )
        jobs.append(
            Job(
                qualname=qualname,
                location=Location(path="acme/app.py", line=line(f"def {name}(")),
                idempotency=Idempotency.IDEMPOTENT,
                confidence=Confidence.HIGH,
                parameters=["order_id" if name == "send_receipt" else "user_id"],
                is_async=is_async,
            )
        )
    return Inventory(root=str(root), sites=sites, jobs=jobs)


def _events(root: Path) -> list[list[str]]:
    path = root / "events.log"
    return [line.split() for line in path.read_text().splitlines()] if path.exists() else []


@pytest.fixture
def app_root(tmp_path: Path) -> Iterator[Path]:
    (tmp_path / "acme").mkdir()
    (tmp_path / "acme" / "__init__.py").write_text("")
    (tmp_path / "acme" / "app.py").write_text(APP)
    with private_queue(tmp_path):
        result = plan_apply(tmp_path, _inventory(tmp_path), scanner=None)
        assert [o.status for o in result.outcomes] == [Status.REWRITTEN] * 2, result.outcomes
        write(result)
        yield tmp_path


def test_the_rewrite_hands_the_plain_job_on_and_runs_the_coroutine_on_the_loop(
    app_root: Path,
) -> None:
    text = (app_root / "acme" / "app.py").read_text()

    assert "background_tasks.add_task(send_receipt.enqueue, order_id)" in text
    assert "notify.options(inline=InlineShape.TASK).enqueue(user_id)" in text
    assert "async def signup(user_id: int):" in text  # its BackgroundTasks is no longer used
    sites = scan(app_root).sites
    assert sorted((s.job, s.pattern) for s in sites) == [
        ("acme.app.notify", Pattern.ENQUEUE),
        ("acme.app.send_receipt", Pattern.ENQUEUE),
    ]


def test_inline_the_jobs_run_as_the_site_ran_them(app_root: Path) -> None:
    env = app_env(app_root, QUEUE_RUNTIME_MODE="inline")
    migrate(app_root, env)

    client = run_python(app_root, env, "-c", CLIENT, "/orders/7", "/users/9")

    assert client.returncode == 0, client.stderr[-3000:]
    deadline = time.monotonic() + 30  # the coroutine job is a task: it may end after the call
    while time.monotonic() < deadline and len(_events(app_root)) < 6:
        time.sleep(0.05)
    events = _events(app_root)
    order = [e[0] for e in events]
    assert order[:3] == ["handler", "response", "receipt-7"], events
    handler, _, receipt = events[:3]
    assert receipt[2] != handler[2] and receipt[3] == "0", "the plain job ran on the loop"
    second = events[3:]
    assert sorted(e[0] for e in second) == ["handler", "notify-9", "response"], events
    loop_of = {e[0]: e[3] for e in second}
    assert loop_of["notify-9"] == loop_of["handler"] != "0", "the coroutine got a loop of its own"


def test_queued_the_job_is_enqueued_after_the_response_and_a_worker_runs_it(
    app_root: Path,
) -> None:
    env = app_env(app_root)
    migrate(app_root, env)

    with worker(app_root, env, "acme.app") as log:
        client = run_python(app_root, env, "-c", CLIENT, "/orders/7")
        assert client.returncode == 0, client.stderr[-3000:]
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and len(_events(app_root)) < 3:
            time.sleep(0.05)

    events = _events(app_root)
    assert [e[0] for e in events] == ["handler", "response", "receipt-7"], (
        events,
        log.read_text()[-3000:],
    )
    assert events[2][1] != events[0][1], "the job ran in the web process, not in a worker"
