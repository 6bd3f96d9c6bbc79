"""A job with nothing to move, where the caller waits for it.

The scan followed every call of ``check_upload`` and found no effect: its only outcome
is the exception it raises for a bad upload. Awaited through ``asyncio.to_thread`` (or
``run_in_executor``) the request waits for that exception; enqueued, it would not, and the
check would stop checking. Such a site stays, with a reason whose fixes (declare the call
the scan thinks pure as an effect, or name the job) each make it move. The same job
handed to a thread nobody waits for moves as before, and so does a job with an effect
at an awaited site. A real scan, then apply's planning, in memory.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from codemods import ApplyOptions, SiteOutcome, Status, plan_apply
from inventory import scan

VIEWS = """import asyncio
import threading

import acme
import requests


def check_upload(data: bytes) -> None:
    acme.inspect(data)
    if len(data) > 10_000_000:
        raise ValueError("upload too large")


def ping(url: str) -> None:
    requests.get(url, timeout=5)


async def upload(data: bytes):
    await asyncio.to_thread(check_upload, data)
    return {"stored": len(data)}


async def upload_via_loop(data: bytes):
    await asyncio.get_running_loop().run_in_executor(None, check_upload, data)
    return {"stored": len(data)}


def upload_unchecked(data: bytes):
    threading.Thread(target=check_upload, args=(data,)).start()
    return {"stored": len(data)}


async def warm(url: str):
    await asyncio.to_thread(ping, url)
    return {"warmed": url}
"""
PURE = '[[tool.migrator.catalogue.pure]]\ncall = "acme.inspect"\n'
EFFECT = '[[tool.migrator.catalogue.effect]]\ncall = "acme.inspect"\neffect = "http_get"\n'

Plan = Callable[..., dict[str, SiteOutcome]]


@pytest.fixture(name="plan")
def plan_fixture(write_files: Callable[[dict[str, str]], Path]) -> Plan:
    def plan(pyproject: str, options: ApplyOptions | None = None) -> dict[str, SiteOutcome]:
        root = write_files(
            {"pyproject.toml": pyproject, "app/__init__.py": "", "app/views.py": VIEWS}
        )
        inventory = scan(root, use_cache=False, write=False, jobs=1)
        result = plan_apply(root, inventory, options or ApplyOptions(), scanner=None)
        return {(o.site.enclosing_function or "").rsplit(".", 1)[-1]: o for o in result.outcomes}

    return plan


def test_an_awaited_job_with_no_effect_stays_and_says_why_and_what_moves_it(plan: Plan) -> None:
    outcomes = plan(PURE)
    for caller, how in (("upload", "it is awaited"), ("upload_via_loop", "it is awaited")):
        outcome = outcomes[caller]
        assert outcome.status is Status.SKIPPED, (caller, outcome.reason)
        assert outcome.reason.startswith(
            f"the caller waits for this call to finish ({how}), and the scan found nothing "
            "`app.views.check_upload` does"
        ), outcome.reason
        assert "would no longer see what it raises" in outcome.reason
        assert "declare that call in [[tool.migrator.catalogue.effect]]" in outcome.reason
        assert "(--job app.views.check_upload)" in outcome.reason


def test_the_same_job_in_a_thread_nobody_waits_for_moves(plan: Plan) -> None:
    unchecked = plan(PURE)["upload_unchecked"]
    assert unchecked.status is Status.REWRITTEN, unchecked.reason


def test_a_job_with_an_effect_at_an_awaited_site_moves(plan: Plan) -> None:
    warm = plan(PURE)["warm"]
    assert warm.status is Status.REWRITTEN, warm.reason


def test_following_the_reason_moves_the_site(plan: Plan) -> None:
    """Each fix the reason names moves the awaited site: the call declared as the effect it
    really has, or the job named."""
    declared = plan(EFFECT)
    assert declared["upload"].status is Status.REWRITTEN, declared["upload"].reason
    named = plan(PURE, ApplyOptions(jobs=("app.views.check_upload",)))
    assert named["upload"].status is Status.REWRITTEN, named["upload"].reason
