"""Spawn targets held in local variables, partials of partials and contextvars ``ctx.run``."""

from __future__ import annotations

import ast
import textwrap

import pytest

from inventory._extract import extract_source
from inventory._extract._resolve import Resolver
from inventory._extract._scopes import Binding, BindingKind, Scope, ScopeKind
from inventory._extract._source import SourceText
from inventory._extract.detectors._targets import unwrap_runner
from inventory.summary import RawSite, TargetKind

HEAD = """
import asyncio
import contextvars
import functools
from concurrent.futures import ThreadPoolExecutor
from functools import partial

pool = ThreadPoolExecutor()

def work(*args, **kwargs): ...

def other(*args, **kwargs): ...
"""


def _sites(body: str) -> list[RawSite]:
    source = HEAD + textwrap.dedent(body)
    return extract_source(source, "app.py", "app").sites


def _one(body: str) -> RawSite:
    sites = _sites(body)
    assert len(sites) == 1, sites
    return sites[0]


def test_partial_in_a_copied_context_through_locals() -> None:
    site = _one(
        """
        async def run(**kwargs):
            loop = asyncio.get_running_loop()
            func = partial(work, **kwargs)
            ctx = contextvars.copy_context()
            wrapped = partial(ctx.run, func)
            return await loop.run_in_executor(None, wrapped)
        """
    )
    assert (site.target, site.target_kind) == ("app.work", TargetKind.PARTIAL)
    assert [a.source for a in site.arguments] == ["kwargs"]


@pytest.mark.parametrize(
    "runner",
    ["contextvars.copy_context().run", "contextvars.Context().run"],
)
def test_context_run_written_in_place(runner: str) -> None:
    site = _one(
        f"""
        def run(x):
            pool.submit(partial({runner}, work, x))
        """
    )
    assert (site.target, site.target_kind) == ("app.work", TargetKind.PARTIAL)
    assert [(a.name, a.source) for a in site.arguments] == [("#0", "x")]


def test_lambda_calling_context_run() -> None:
    site = _one(
        """
        def run(x):
            ctx = contextvars.copy_context()
            pool.submit(lambda: ctx.run(work, x))
        """
    )
    assert (site.target, site.target_kind) == ("app.work", TargetKind.LAMBDA)
    assert [a.source for a in site.arguments] == ["x"]


def test_partial_of_a_partial_numbers_positions_on() -> None:
    site = _one(
        """
        def run(a, b):
            pool.submit(functools.partial(partial(work, a), b))
        """
    )
    assert site.target == "app.work"
    assert [(a.name, a.source) for a in site.arguments] == [("#0", "a"), ("#1", "b")]


def test_context_run_handed_with_its_function_runs_it() -> None:
    """``pool.submit(ctx.run, work, x)``: ``Context.run`` calls ``work(x)`` in the thread."""
    site = _one(
        """
        def run(x):
            ctx = contextvars.copy_context()
            pool.submit(ctx.run, work, x)
        """
    )
    assert (site.target, site.target_kind) == ("app.work", TargetKind.FUNCTION)
    assert [a.source for a in site.arguments] == ["x"]


def test_bare_context_run_is_not_the_job() -> None:
    site = _one(
        """
        def run(jobs):
            ctx = contextvars.copy_context()
            pool.submit(ctx.run, *jobs)
        """
    )
    assert site.target_kind is TargetKind.DYNAMIC
    assert "runs the function handed to it" in site.unresolved_reason


def test_library_callable_in_a_partial_is_named() -> None:
    site = _one(
        """
        from django.core.files.storage import default_storage

        def run(name):
            cleanup = partial(default_storage.delete, name)
            pool.submit(cleanup)
        """
    )
    assert site.target == "django.core.files.storage.default_storage.delete"
    assert site.target_kind is TargetKind.PARTIAL


def test_assignments_that_agree_resolve() -> None:
    site = _one(
        """
        def run(flag):
            if flag:
                job = partial(work, 1)
            else:
                job = partial(work, 2)
            pool.submit(job)
        """
    )
    assert (site.target, site.target_kind) == ("app.work", TargetKind.PARTIAL)
    assert site.arguments == []  # which arguments is only known at run time


@pytest.mark.parametrize(
    ("body", "why"),
    [
        (
            """
            def run(flag):
                job = partial(work, 1)
                if flag:
                    job = partial(other, 1)
                pool.submit(job)
            """,
            "assigned different callables",
        ),
        (
            """
            def run(jobs):
                for job in jobs:
                    pool.submit(job)
            """,
            "cannot follow",
        ),
        (
            """
            def run(job=None):
                if job is None:
                    job = partial(work, 1)
                pool.submit(job)
            """,
            "also a parameter",
        ),
        (
            """
            def run(locks):
                with locks.reserve() as release:
                    pool.submit(release)
            """,
            "with statement's context manager",
        ),
        (
            """
            def run():
                job = other_job = partial(work, 1)
                pool.submit(job)
            """,
            "cannot follow",
        ),
        (
            """
            def run(factory):
                job = factory()
                pool.submit(job)
            """,
            "result of calling 'factory'",
        ),
        (
            """
            def run(name):
                job = getattr(pool, name)
                pool.submit(job)
            """,
            "computed by",
        ),
    ],
    ids=["disagree", "loop", "parameter", "with", "chained", "factory", "getattr"],
)
def test_local_that_is_not_one_callable_stays_dynamic(body: str, why: str) -> None:
    sites = _sites(body)
    assert sites, body
    for site in sites:
        assert site.target is None and site.target_kind is TargetKind.DYNAMIC
        assert why in site.unresolved_reason


def test_rebinding_after_the_spawn_in_a_loop_is_seen() -> None:
    site = _one(
        """
        def run(items):
            job = partial(work, 0)
            for item in items:
                pool.submit(job)
                job = partial(other, item)
        """
    )
    assert site.target_kind is TargetKind.DYNAMIC


def test_outer_functions_local_is_not_followed() -> None:
    site = _one(
        """
        def outer():
            job = partial(work, 1)

            def inner():
                pool.submit(job)

            return inner
        """
    )
    assert site.target_kind is TargetKind.DYNAMIC


def test_local_lambda_is_followed() -> None:
    site = _one(
        """
        def run(x):
            job = lambda: work(x)
            pool.submit(job)
        """
    )
    assert (site.target, site.target_kind) == ("app.work", TargetKind.LAMBDA)


def test_self_referencing_local_terminates() -> None:
    site = _one(
        """
        def run():
            job = partial(work)
            job = partial(job, 1)
            pool.submit(job)
        """
    )
    assert site.target_kind is TargetKind.DYNAMIC


def test_unwrap_runner_for_detectors() -> None:
    source = "submit(contextvars.copy_context().run, work, 1)\n"
    call = ast.parse(source).body[0].value  # type: ignore[attr-defined]
    scope = Scope(ScopeKind.MODULE, "app")
    scope.names["contextvars"] = Binding(BindingKind.IMPORT, "contextvars")
    resolver = Resolver("app", scope, {}, SourceText(source))
    target, rest = unwrap_runner(call.args[0], call.args[1:], resolver)
    assert isinstance(target, ast.Name) and target.id == "work"
    assert [ast.unparse(a) for a in rest] == ["1"]
    same, args = unwrap_runner(call.args[1], call.args[2:], resolver)
    assert same is call.args[1] and args == call.args[2:]
