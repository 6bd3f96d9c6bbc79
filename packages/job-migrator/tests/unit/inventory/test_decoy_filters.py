"""Look-alikes that are not jobs: vetoing signal receivers, tasks the request waits on."""

from __future__ import annotations

import ast

import pytest

from inventory._catalogue import Catalogue
from inventory._classify import classify
from inventory._extract import extract_source
from inventory._extract.detectors._sites_hooks import only_vetoes
from inventory.config import MigratorConfig
from inventory.models import CallSite


def _classify(files: dict[str, str]) -> list[CallSite]:
    summaries = []
    for path, source in files.items():
        module = path.removesuffix(".py").removesuffix("/__init__").replace("/", ".")
        summaries.append(extract_source(source, path, module, path.endswith("__init__.py")))
    config = MigratorConfig.from_toml("")
    sites, _ = classify(summaries, config, Catalogue.load(config.catalogue))
    return sites


_APPS = (
    "from django.apps import AppConfig\n\n"
    "class AccountsConfig(AppConfig):\n"
    "    name = 'accounts'\n\n"
    "    def ready(self):\n"
    "        from accounts import hooks\n"
    "        from accounts import signals\n"
    "        signals.email_added.connect(hooks.refuse_banned)\n"
    "        signals.email_added.connect(hooks.record_banned)\n"
)
_SIGNALS = "from django.dispatch import Signal\n\nemail_added = Signal()\n"
_HOOKS = """
from django.core.exceptions import ValidationError
from django.dispatch import receiver

from accounts.models import Ban
from accounts.signals import email_added
from accounts.rules import banned_reason


def refuse_banned(sender, email, user, **kwargs):
    if user is None:
        return None
    reason = banned_reason(email)
    if reason:
        raise ValidationError(reason)


def record_banned(sender, email, user, **kwargs):
    if banned_reason(email):
        Ban.objects.create(email=email)
        raise ValidationError("banned")


@receiver(email_added)
def refuse_empty(sender, email, **kwargs):
    assert email, "an address is required"
"""


def test_a_receiver_in_another_file_that_only_raises_is_not_a_site() -> None:
    files = {
        "accounts/__init__.py": "",
        "accounts/apps.py": _APPS,
        "accounts/signals.py": _SIGNALS,
        "accounts/hooks.py": _HOOKS,
    }
    jobs = [s.job for s in _classify(files)]
    assert "accounts.hooks.refuse_banned" not in jobs
    assert "accounts.hooks.refuse_empty" not in jobs
    assert "accounts.hooks.record_banned" in jobs  # saves a row before raising: a job


@pytest.mark.parametrize(
    ("body", "vetoes"),
    [
        ("if not ok(x):\n        raise ValueError(x)", True),
        ('"""Doc."""\n    raise PermissionError()', True),
        ("y: int = check(x)\n    if y:\n        raise ValueError(y)\n    return", True),
        ("...", False),  # a stub raises nothing
        ("return None", False),
        ("log(x)\n    raise ValueError(x)", False),  # a call made for its effect
        ("self.seen = x\n    raise ValueError(x)", False),
        ("for y in x:\n        raise ValueError(y)", False),
        ("try:\n        raise ValueError(x)\n    finally:\n        close()", False),
        ("if x:\n        return x\n    raise ValueError(x)", False),  # a value the sender reads
        ("global n\n    n = x\n    raise ValueError(x)", False),
    ],
)
def test_only_vetoes(body: str, vetoes: bool) -> None:
    node = ast.parse(f"def f(x):\n    {body}\n").body[0]
    assert isinstance(node, ast.FunctionDef)
    assert only_vetoes(node) is vetoes


def _sites(source: str) -> list[str | None]:
    return [s.target for s in extract_source(source, "app.py", "app").sites]


def test_a_task_given_a_ready_event_by_keyword_and_waited_on_is_not_a_site() -> None:
    source = """
import asyncio

async def hold(url, *, ready): ...

async def open_link(url):
    ready = asyncio.Event()
    task = asyncio.create_task(hold(url, ready=ready))
    await ready.wait()
    return task
"""
    assert _sites(source) == []


def test_waiting_before_the_task_starts_does_not_count() -> None:
    source = """
import asyncio

async def hold(url, ready): ...

async def open_link(url, previous):
    ready = asyncio.Event()
    await ready.wait()
    asyncio.create_task(hold(url, ready))
"""
    assert _sites(source) == ["app.hold"]


def test_a_module_level_coroutine_does_not_see_the_function_events() -> None:
    source = """
import asyncio

async def warm(url): ...

async def open_link(url):
    ready = asyncio.Event()
    asyncio.create_task(warm(url))
    await ready.wait()
"""
    assert _sites(source) == ["app.warm"]


def test_a_producer_read_through_run_in_executor_of_queue_get_is_not_a_site() -> None:
    source = """
import asyncio
import queue

def chunks(url): ...

async def relay(url):
    events: queue.Queue = queue.Queue()
    done = object()

    def pull():
        for chunk in chunks(url):
            events.put(chunk)
        events.put(done)

    loop = asyncio.get_running_loop()
    loop.run_in_executor(None, pull)
    while True:
        event = await loop.run_in_executor(None, events.get)
        if event is done:
            break
        yield event
"""
    assert "app.relay.<locals>.pull" not in _sites(source)


def test_a_thread_pool_producer_left_running_is_still_a_site() -> None:
    source = """
import asyncio
import queue

def chunks(url): ...

async def relay(url):
    events = queue.Queue()

    def pull():
        for chunk in chunks(url):
            events.put(chunk)

    asyncio.get_running_loop().run_in_executor(None, pull)
    return events
"""
    assert _sites(source) == ["app.relay.<locals>.pull"]
