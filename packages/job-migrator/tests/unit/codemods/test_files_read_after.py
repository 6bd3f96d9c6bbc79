"""A caller that waited for a job writing files, and reads what it handed over afterwards.

A direct call or an awaited hand-off to a thread had finished when the caller's next
line ran; an enqueue has not, and the worker writes on its own disk. So such a site
stays (manual, with the lines that read), while the same job at a site that never
waited (a thread), or with nothing read after it, moves. Nested functions handed to an
executor are lifted as those handed to a thread are (``codemods._hoist``), and the same
rule keeps a closure writing into the caller's temporary folder. A real scan, then
apply's planning, in memory.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from codemods import SiteOutcome, Status, plan_apply
from inventory import scan

REPORTS = """from pathlib import Path


def write_report(path: str, rows: list[str]) -> None:
    Path(path).write_text("\\n".join(rows))
"""

VIEWS = """import asyncio
import os
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from app.reports import write_report

POOL = ThreadPoolExecutor()
LATEST = "/srv/reports/latest.csv"


async def export(rows: list[str]):
    path = LATEST
    await asyncio.to_thread(write_report, path, rows)
    with open(path) as f:
        return f.read()


async def export_later(rows: list[str]):
    path = LATEST
    await asyncio.to_thread(write_report, path, rows)
    return None


def export_in_thread(rows: list[str]):
    path = LATEST
    threading.Thread(target=write_report, args=(path, rows)).start()
    return path


async def upload(filename: str, data: bytes):
    with tempfile.TemporaryDirectory() as folder:
        file_path = os.path.join(folder, filename)

        def _write_file():
            with open(file_path, "wb") as out:
                out.write(data)

        await asyncio.to_thread(_write_file)
        return os.path.getsize(file_path)


async def save_setting(name: str, value: str):
    folder = "/srv/settings"

    def _write():
        Path(folder, name).write_text(value)

    await asyncio.get_running_loop().run_in_executor(None, _write)


def save_setting_in_pool(name: str, value: str):
    def _store():
        Path("/srv/settings", name).write_text(value)

    POOL.submit(_store)


def drop_export(path: str) -> None:
    os.remove(path)


async def clear_export():
    path = LATEST
    await asyncio.to_thread(drop_export, path)
    return {"gone": not os.path.exists(path)}


async def clear_export_blind():
    await asyncio.to_thread(drop_export, LATEST)
    return None
"""

API = """from fastapi import FastAPI
from fastapi.responses import FileResponse
from PIL import Image

app = FastAPI()


def make_thumbnail(source: str, dest: str) -> None:
    with Image.open(source) as img:
        img.thumbnail((64, 64))
        img.save(dest)


@app.post("/thumbnails/{name}")
def thumbnail(name: str):
    dest = f"/srv/thumbs/{name}.png"
    make_thumbnail(f"/srv/uploads/{name}", dest)
    return FileResponse(dest)


@app.post("/thumbnails/{name}/later")
def thumbnail_later(name: str):
    make_thumbnail(f"/srv/uploads/{name}", f"/srv/thumbs/{name}.png")
    return {"queued": name}
"""
FILES = {"app/__init__.py": "", "app/reports.py": REPORTS, "app/views.py": VIEWS, "app/api.py": API}


@pytest.fixture(name="outcomes")
def outcomes_fixture(write_files: Callable[[dict[str, str]], Path]) -> dict[str, SiteOutcome]:
    root = write_files(FILES)
    inventory = scan(root, use_cache=False, write=False, jobs=1)
    result = plan_apply(root, inventory, scanner=None)
    return {(o.site.enclosing_function or "").rsplit(".", 1)[-1]: o for o in result.outcomes}


def test_an_awaited_job_whose_file_the_caller_reads_after_stays_with_the_lines(
    outcomes: dict[str, SiteOutcome],
) -> None:
    export = outcomes["export"]
    assert export.status is Status.MANUAL, export.reason
    assert export.lines == [17]
    assert export.reason.startswith(
        "the caller waits for this call to finish (it is awaited) and reads `path` again "
        "after it (line 17), and the job writes files where it runs "
        "(`pathlib.Path.write_text` at app/reports.py:5)"
    )
    assert "keep this site inline, or move what reads them into the job" in export.reason


def test_a_handler_calling_the_job_then_serving_its_file_stays(
    outcomes: dict[str, SiteOutcome],
) -> None:
    served = outcomes["thumbnail"]
    assert served.status is Status.MANUAL, served.reason
    assert served.reason.startswith(
        "the caller waits for this call to finish (a direct call) and reads `dest` again "
        "after it (line 18)"
    )
    later = outcomes["thumbnail_later"]
    assert later.status is Status.REWRITTEN, later.reason


def test_a_deletion_the_caller_checks_after_stays_and_one_it_does_not_moves_with_the_note(
    outcomes: dict[str, SiteOutcome],
) -> None:
    checked = outcomes["clear_export"]
    assert checked.status is Status.MANUAL, checked.reason
    assert "reads `path` again after it (line 68), and the job deletes files where it runs " in (
        checked.reason
    )
    assert "(`os.remove` at app/views.py:62)" in checked.reason
    blind = outcomes["clear_export_blind"]
    assert blind.status is Status.REWRITTEN, blind.reason
    assert "deletes files where it runs (`os.remove` at app/views.py:62): a worker deletes" in (
        blind.reason
    )


def test_the_same_job_moves_where_nothing_reads_after_or_the_caller_never_waited(
    outcomes: dict[str, SiteOutcome],
) -> None:
    for caller in ("export_later", "export_in_thread"):
        outcome = outcomes[caller]
        assert outcome.status is Status.REWRITTEN, (caller, outcome.reason)
        assert "writes files where it runs" in outcome.reason  # the note stays


def test_a_closure_writing_into_the_callers_temporary_folder_stays(
    outcomes: dict[str, SiteOutcome],
) -> None:
    upload = outcomes["upload"]
    assert upload.status is Status.MANUAL, upload.reason
    assert "reads `file_path` again after it (line 42)" in upload.reason


def test_closures_handed_to_an_executor_are_lifted_with_what_they_read(
    write_files: Callable[[dict[str, str]], Path],
) -> None:
    root = write_files(FILES)
    inventory = scan(root, use_cache=False, write=False, jobs=1)
    result = plan_apply(root, inventory, scanner=None)
    moved = {
        (o.site.enclosing_function or "").rsplit(".", 1)[-1]: o
        for o in result.outcomes
        if o.status is Status.REWRITTEN
    }
    assert {"save_setting", "save_setting_in_pool"} <= set(moved)
    [after] = [c.after for c in result.changes if c.path == "app/views.py"]
    compile(after, "views.py", "exec")
    assert (
        "    _save_setting_write.options(inline=InlineShape.EXECUTOR).enqueue("
        "folder=folder, name=name, value=value)\n" in after
    )
    assert "def _save_setting_write(folder, name, value):\n" in after
    assert (
        "_save_setting_in_pool_store.options(inline=InlineShape.EXECUTOR, executor=POOL)"
        ".enqueue(name=name, value=value)" in after
    )
    assert "def _write():" not in after and "def _store():" not in after
