"""A result kept where other code reads it, or read where no 202 answer can stand in for it.

Found by ``bench/apply_census.py`` over the census: apply answered four sites with "not found
at the recorded position ...: rescan", which no rescan changes. Each was a result in use that
the scan did not count as used (a task handle kept in ``self._task``, a timer in a
``global``, an awaited hash assigned to ``user.password_hash``) or that a 202 answer cannot
replace (an awaited check in an ``if`` test). Now the scan counts them as used and apply says
so, with the place that reads it; nothing is rewritten.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from codemods import Status, plan_apply
from inventory import scan
from inventory._extract import extract_source
from inventory.summary import RawSite

Files = Callable[[dict[str, str]], Path]


def _sites(signature: str, body: str) -> list[RawSite]:
    """The sites of ``body`` (lines joined with a newline and four spaces) in a function."""
    head = "import asyncio\nimport threading\n\n\ndef expire(): ...\n\n\n"
    source = f"{head}{signature}\n    {body}\n"
    return extract_source(source, "x.py", "app").sites


@pytest.mark.parametrize(
    ("body", "kept"),
    [
        ("self._task = asyncio.create_task(expire())", "self._task"),
        ("self.pending[key] = None\n    self.last = asyncio.create_task(expire())", "self.last"),
        ("user.password_hash = await loop.run_in_executor(None, expire)", "user.password_hash"),
        ("global _timer\n    _timer = threading.Timer(5, expire)\n    _timer.start()", "_timer"),
    ],
)
def test_a_result_kept_outside_the_function_is_used(body: str, kept: str) -> None:
    (site,) = _sites("async def start(self, user, loop, key):", body)
    assert site.result_used is True
    assert f"kept in `{kept}`" in site.detail


@pytest.mark.parametrize(
    "body",
    [
        "task = asyncio.create_task(expire())",
        "t = threading.Thread(target=expire)\n    t.start()",
        "asyncio.create_task(expire())",
    ],
)
def test_a_handle_in_a_local_nobody_reads_is_not_used(body: str) -> None:
    (site,) = _sites("async def start():", body)
    assert site.result_used is False
    assert "kept in" not in site.detail


KEPT = """import asyncio


async def expire_sessions():
    await asyncio.sleep(60)


class Sessions:
    def __init__(self):
        self._task = None

    def ensure_expiry(self):
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(expire_sessions())

    def close(self):
        if self._task is not None:
            self._task.cancel()
"""

CHECKED = """import asyncio

import requests
from fastapi import FastAPI, HTTPException

app = FastAPI()


def password_ok(password: str) -> bool:
    return requests.get("https://auth.example/check", params={"password": password}).ok


@app.post("/login")
async def login(password: str):
    loop = asyncio.get_running_loop()
    if not await loop.run_in_executor(None, password_ok, password):
        raise HTTPException(status_code=401)
    return {"ok": True}
"""


def test_apply_leaves_a_kept_task_handle_and_says_where_it_is_kept(write_files: Files) -> None:
    root = write_files({"app/__init__.py": "", "app/sessions.py": KEPT})
    inventory = scan(root, use_cache=False, write=False)

    [outcome] = plan_apply(root, inventory, scanner=None).outcomes

    assert outcome.site.job == "app.sessions.expire_sessions"
    assert outcome.status is Status.MANUAL
    assert outcome.reason.startswith(
        "the caller uses the result (it is kept in `self._task`, which code outside this "
        "function can read)"
    )
    assert "rescan" not in outcome.reason


def test_a_handler_result_read_in_an_if_test_is_manual_not_a_changed_shape(
    write_files: Files,
) -> None:
    root = write_files({"app/__init__.py": "", "app/main.py": CHECKED})
    inventory = scan(root, use_cache=False, write=False)

    result = plan_apply(root, inventory, scanner=None)

    [outcome] = result.outcomes
    assert outcome.site.job == "app.main.password_ok"
    assert outcome.status is Status.MANUAL
    assert outcome.reason.startswith("the caller uses the result (the statement at line 16")
    assert "rescan" not in outcome.reason
    assert result.changes == []


REPORTS = """import threading
from dataclasses import dataclass
from functools import partial

from django.db import transaction


@dataclass
class Report:
    day: str

    def render(self, fmt: str) -> None:
        print(self.day, fmt)


def export(day: str) -> None:
    report = Report(day)
    SITE
"""


@pytest.mark.parametrize(
    ("site", "opening"),
    [
        (
            'threading.Thread(target=lambda: report.render(fmt="pdf")).start()',
            'bound method: `lambda: report.render(fmt="pdf")` calls `report.render` inside a lambda',
        ),
        (
            'transaction.on_commit(partial(report.render, "pdf"))',
            'bound method: `partial(report.render, "pdf")` binds `report.render` in a partial',
        ),
        (
            'render = report.render\n    threading.Thread(target=render, args=("pdf",)).start()',
            "bound method: `render` is a local name for the method `render` of an instance",
        ),
    ],
)
def test_a_bound_method_not_handed_over_as_itself_is_named_and_moves_once_it_is(
    write_files: Files, site: str, opening: str
) -> None:
    """Found by the census: such reasons quoted ``lambda: self.get(block=True, timeout=1`` as
    the instance (the text cut at the dot of ``1.0``) and said it "does not parse", or said
    the method "is called on `?`"."""
    root = write_files({"app/__init__.py": "", "app/reports.py": REPORTS.replace("SITE", site)})

    [refused] = plan_apply(root, scan(root, use_cache=False, write=False), scanner=None).outcomes

    assert refused.site.job == "app.reports.Report.render"
    assert refused.status is Status.SKIPPED
    assert refused.reason.startswith(opening)
    assert "`?`" not in refused.reason
    handed = 'threading.Thread(target=report.render, args=("pdf",)).start()'
    (root / "app/reports.py").write_text(REPORTS.replace("SITE", handed))
    [moved] = plan_apply(root, scan(root, use_cache=False, write=False), scanner=None).outcomes
    assert moved.status is Status.REWRITTEN, moved.reason


EXPORTER = """import requests
from django.http import HttpResponse
from django.views import View


class Exporter:
    def __init__(self, event: str) -> None:
        self.event = event
        self.pages = requests.get(f"https://pages.example.com/{event}").json()

    def get_pdf(self) -> HttpResponse:
        return HttpResponse(b"".join(p.encode() for p in self.pages))


class ExportView(View):
    def get(self, request, event):
        return Exporter(event=event).get_pdf()
"""


def test_a_constructor_is_never_called_on_a_missing_instance(write_files: Files) -> None:
    root = write_files({"app/__init__.py": "", "app/views.py": EXPORTER})

    outcomes = plan_apply(root, scan(root, use_cache=False, write=False), scanner=None).outcomes

    built = [o for o in outcomes if o.site.job == "app.views.Exporter.__init__"]
    assert built, [o.site.job for o in outcomes]
    for outcome in built:
        assert outcome.status is not Status.REWRITTEN
        assert outcome.reason.startswith(
            "constructor: `Exporter(...)` builds an instance of Exporter"
        )
        assert "`?`" not in outcome.reason
