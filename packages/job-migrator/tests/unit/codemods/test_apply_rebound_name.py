"""A job whose name its module binds again after the definition is not decorated.

``sync = logged(sync)`` after ``def sync(...)`` (or an import of the same name) means the name callers use is not the function
apply would decorate: ``@job`` on the definition leaves ``sync`` a plain wrapper, and the
rewritten ``sync.enqueue(x)`` would raise ``AttributeError`` in the request. The scan
records those lines (``Job.rebound_at``); apply leaves the site and says what to write
instead, and once the wrapping is a decorator on the definition the site moves.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from codemods import ApplyOptions, SiteOutcome, Status, plan_apply
from inventory import scan

WRAPPER = """\
import functools
import logging

import requests

log = logging.getLogger(__name__)


def logged(fn):
    @functools.wraps(fn)
    def inner(*args, **kwargs):
        log.info("calling %s", fn.__name__)
        return fn(*args, **kwargs)

    return inner


"""
DEF = """\
def sync(user_id: int) -> None:
    requests.put(f"https://crm.example.com/users/{user_id}", json={"id": user_id}, timeout=5)
"""
VIEWS = """\
from django.http import HttpResponse

from shop.services import sync


def signup(request, user_id: int):
    sync(user_id)
    return HttpResponse()
"""
URLS = """\
from django.urls import path

from shop.views import signup

urlpatterns = [path("signup/<int:user_id>", signup)]
"""


def applied(root: Path, services: str) -> tuple[SiteOutcome, dict[str, str], list[int]]:
    files = {
        "shop/__init__.py": "",
        "shop/services.py": services,
        "shop/views.py": VIEWS,
        "shop/urls.py": URLS,
    }
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    inventory = scan(root, use_cache=False, write=False, jobs=1)
    job = inventory.job("shop.services.sync")
    assert job is not None, [j.qualname for j in inventory.jobs]
    result = plan_apply(root, inventory, ApplyOptions())
    [outcome] = [o for o in result.outcomes if o.site.location.path == "shop/views.py"]
    after = {name: text for name, text in files.items()}
    after.update({c.path: c.after for c in result.changes})
    for text in after.values():
        ast.parse(text)
    return outcome, after, job.rebound_at


@pytest.mark.parametrize(
    ("tail", "binding"),
    [
        ("\n\nsync = logged(sync)\n", "sync = logged(sync)"),
        ("\n\nfrom shop.fallback import sync\n", "from shop.fallback import sync"),
    ],
)
def test_a_name_bound_again_after_its_definition_is_left_with_what_to_write(
    tmp_path: Path, tail: str, binding: str
) -> None:
    services = WRAPPER + DEF + tail
    line = services.splitlines().index(binding) + 1
    outcome, after, rebound = applied(tmp_path, services)
    assert rebound == [line]
    assert outcome.status is Status.SKIPPED, outcome.reason
    assert f"bound again in its module (line {line})" in outcome.reason
    assert after["shop/views.py"] == VIEWS
    assert "@job" not in after["shop/services.py"]


def test_written_as_a_decorator_the_same_wrapping_moves(tmp_path: Path) -> None:
    """The reason's change: ``@logged`` on the definition; ``@job`` then goes above it."""
    outcome, after, rebound = applied(tmp_path, WRAPPER + "@logged\n" + DEF)
    assert rebound == []
    assert outcome.status is Status.REWRITTEN, outcome.reason
    assert "    sync.enqueue(user_id)\n" in after["shop/views.py"]
    assert "@job(" in after["shop/services.py"]
    decorated = after["shop/services.py"]
    assert decorated.index("@job(") < decorated.index("@logged")


def test_a_binding_before_the_definition_is_no_rebinding(tmp_path: Path) -> None:
    outcome, _, rebound = applied(tmp_path, WRAPPER + "sync = None\n\n\n" + DEF)
    assert rebound == []
    assert outcome.status is Status.REWRITTEN, outcome.reason
