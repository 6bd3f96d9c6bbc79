"""A spawn target bound by ``with manager(...) as name``: the function the project context
manager yields, resolved across modules through ``FunctionInfo.yields_callable``."""

from __future__ import annotations

import textwrap

import pytest

from inventory._extract import extract_source
from inventory.models import Idempotency
from inventory.summary import FileSummary, RawSite, TargetKind
from tests.unit.inventory.classify_builders import run

LOCKS = """
from contextlib import contextmanager, asynccontextmanager
from django.core.cache import cache

def unlock(keys):
    for key in keys:
        cache.delete(key)

@contextmanager
def held(keys):
    token = object()

    def drop():
        unlock(keys)

    try:
        yield drop
    finally:
        drop()

@contextmanager
def module_level(keys):
    yield unlock

@asynccontextmanager
async def held_async(keys):
    def drop():
        unlock(keys)

    yield drop

@contextmanager
def two_ways(keys, fast):
    def drop():
        unlock(keys)

    def other():
        unlock(keys)

    if fast:
        yield drop
    else:
        yield other

@contextmanager
def not_a_function(keys):
    yield keys

def plain(keys):
    def drop():
        unlock(keys)

    yield drop

@contextmanager
def rebinds(keys):
    def drop():
        unlock(keys)

    drop = make()
    yield drop
"""

VIEWS = """
from django.db import transaction
from shop.locks import held, module_level, held_async, two_ways, not_a_function, plain, rebinds

def view(ids):
    with {manager}(ids) as release, transaction.atomic():
        transaction.on_commit(release)
"""


def _locks() -> FileSummary:
    return extract_source(textwrap.dedent(LOCKS), "shop/locks.py", "shop.locks")


def _views(manager: str, body: str | None = None) -> FileSummary:
    source = body if body is not None else VIEWS.format(manager=manager)
    return extract_source(textwrap.dedent(source), "shop/views.py", "shop.views")


def _site(summary: FileSummary) -> RawSite:
    assert len(summary.sites) == 1, summary.sites
    return summary.sites[0]


def test_the_extractor_records_what_a_contextmanager_yields() -> None:
    yields = {f.qualname: f.yields_callable for f in _locks().functions}
    assert yields["shop.locks.held"] == "shop.locks.held.<locals>.drop"
    assert yields["shop.locks.module_level"] == "shop.locks.unlock"
    assert yields["shop.locks.held_async"] == "shop.locks.held_async.<locals>.drop"
    for other in ("two_ways", "not_a_function", "plain", "rebinds", "unlock"):
        assert yields[f"shop.locks.{other}"] is None, other


def test_the_site_names_the_manager() -> None:
    site = _site(_views("held"))
    assert (site.target, site.target_kind) == ("shop.locks.held", TargetKind.YIELDED)


def test_a_yielded_closure_is_the_job_and_is_classified() -> None:
    sites, jobs = run(_locks(), _views("held"))
    assert [s.job for s in sites] == ["shop.locks.held.<locals>.drop"]
    (job,) = jobs
    assert job.idempotency == Idempotency.IDEMPOTENT  # deleting cache keys again is harmless
    messages = [e.message for e in job.evidence]
    assert any("a worker cannot import a closure" in m for m in messages), messages


def test_a_yielded_module_function_is_the_job() -> None:
    sites, _ = run(_locks(), _views("module_level"))
    assert [s.job for s in sites] == ["shop.locks.unlock"]


def test_async_with_of_an_asynccontextmanager() -> None:
    body = """
    from django.db import transaction
    from shop.locks import held_async

    async def view(ids):
        async with held_async(ids) as release:
            transaction.on_commit(release)
    """
    sites, _ = run(_locks(), _views("", body))
    assert [s.job for s in sites] == ["shop.locks.held_async.<locals>.drop"]


@pytest.mark.parametrize(
    ("manager", "why"),
    [
        ("two_ways", "not a @contextmanager generator whose every yield gives the same"),
        ("not_a_function", "not a @contextmanager generator"),
        ("plain", "not a @contextmanager generator"),
        ("rebinds", "not a @contextmanager generator"),
    ],
)
def test_anything_else_stays_unknown_with_a_reason(manager: str, why: str) -> None:
    sites, jobs = run(_locks(), _views(manager))
    assert [s.job for s in sites] == ["unknown"]
    assert why in sites[0].unresolved_reason
    assert manager in sites[0].unresolved_reason
    assert jobs == []


def test_a_library_context_manager_stays_unknown() -> None:
    body = """
    from django.db import transaction
    from somelib import reserve

    def view(ids):
        with reserve(ids) as release:
            transaction.on_commit(release)
    """
    sites, _ = run(_locks(), _views("", body))
    assert sites[0].job == "unknown"
    assert "not a project function" in sites[0].unresolved_reason


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (
            """
            def view(ids, other):
                release = other
                with held(ids) as release:
                    transaction.on_commit(release)
            """,
            "bound otherwise",
        ),
        (
            """
            def view(ids, flag):
                if flag:
                    with held(ids) as release:
                        transaction.on_commit(release)
                else:
                    with module_level(ids) as release:
                        transaction.on_commit(release)
            """,
            "different context managers",
        ),
        (
            """
            def view(ids, lock):
                with lock.hold(ids) as release:
                    transaction.on_commit(release)
            """,
            "context manager gives",
        ),
    ],
)
def test_with_bindings_the_scan_cannot_follow(body: str, reason: str) -> None:
    head = "from django.db import transaction\nfrom shop.locks import held, module_level\n"
    summary = _views("", head + textwrap.dedent(body))
    assert summary.sites
    for site in summary.sites:
        assert site.target_kind is TargetKind.DYNAMIC
        assert reason in site.unresolved_reason


def test_a_lambda_calling_the_yielded_callable() -> None:
    body = """
    from django.db import transaction
    from shop.locks import held

    def view(ids):
        with held(ids) as release:
            transaction.on_commit(lambda: release())
    """
    site = _site(_views("", body))
    assert (site.target, site.target_kind) == ("shop.locks.held", TargetKind.YIELDED)
    sites, _ = run(_locks(), _views("", body))
    assert [s.job for s in sites] == ["shop.locks.held.<locals>.drop"]


def test_a_task_of_a_coroutine_the_yielded_callable_makes() -> None:
    locks = """
    import asyncio
    from contextlib import asynccontextmanager

    async def notify(keys): ...

    @asynccontextmanager
    async def watched(keys):
        async def ping():
            await notify(keys)

        yield ping
    """
    body = """
    import asyncio
    from shop.locks import watched

    async def view(ids):
        async with watched(ids) as ping:
            asyncio.create_task(ping())
    """
    site = _site(_views("", body))
    assert (site.target, site.target_kind) == ("shop.locks.watched", TargetKind.YIELDED)
    summary = extract_source(textwrap.dedent(locks), "shop/locks.py", "shop.locks")
    sites, _ = run(summary, _views("", body))
    assert [s.job for s in sites] == ["shop.locks.watched.<locals>.ping"]
