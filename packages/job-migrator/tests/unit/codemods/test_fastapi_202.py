"""The 202 rewrite across files: the status router is created once and included once."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from codemods import ApplyResult, Status, plan_apply, write
from inventory.models import Framework, Inventory, Pattern
from tools.apply_docs import site_line

Build = Callable[..., Inventory]

APP = "from fastapi import FastAPI\n\nfrom acme import reports\n\napp = FastAPI(title='acme')\napp.include_router(reports.router)\n"
REPORTS = (
    "import asyncio\n\nfrom fastapi import APIRouter\n\nrouter = APIRouter()\n\n\n"
    "def export_report(day):\n    return day\n\n\n"
    "@router.post('/reports/{day}')\nasync def export(day: str):\n    return await asyncio.to_thread(export_report, day)\n"
)


def _plan(root: Path, build_inventory: Build, fragment: str) -> ApplyResult:
    sites = [("acme/reports.py", fragment, Pattern.RUN_IN_EXECUTOR, "acme.reports.export_report")]
    inventory = build_inventory(root, sites, handler=Framework.FASTAPI, result_used=True)
    return plan_apply(root, inventory, scanner=None)


def test_status_router_is_created_next_to_the_app_and_included_once(
    write_files: Callable[[dict[str, str]], Path], build_inventory: Build
) -> None:
    root = write_files({"acme/__init__.py": "", "acme/app.py": APP, "acme/reports.py": REPORTS})

    result = _plan(root, build_inventory, "return await asyncio.to_thread")

    changes = {c.path: c for c in result.changes}
    assert (
        changes["acme/job_status.py"].created
        and '@router.get("/jobs/{job_id}")' in changes["acme/job_status.py"].after
    )
    assert changes["acme/app.py"].after == (
        "from fastapi import FastAPI\n\nfrom acme import job_status, reports\n\n"
        "app = FastAPI(title='acme')\napp.include_router(job_status.router)\napp.include_router(reports.router)\n"
    )
    assert changes["acme/reports.py"].after.endswith(
        "async def export(day: str):\n    job_handle = export_report.enqueue(day)\n"
        '    return JSONResponse({"job_id": job_handle.id, "status_url": f"/jobs/{job_handle.id}"}, status_code=202)\n'
    )
    assert "--- /dev/null\n+++ b/acme/job_status.py" in result.diff


def test_a_second_run_adds_nothing(
    write_files: Callable[[dict[str, str]], Path], build_inventory: Build
) -> None:
    root = write_files({"acme/__init__.py": "", "acme/app.py": APP, "acme/reports.py": REPORTS})
    write(_plan(root, build_inventory, "return await asyncio.to_thread"))
    assert site_line((root / "acme/reports.py").read_text(), "job_handle = export_report")

    again = _plan(root, build_inventory, "job_handle = export_report")

    assert again.changes == []
    assert [o.status for o in again.outcomes] == [Status.ALREADY]


def test_without_a_fastapi_app_the_site_stays_manual(
    write_files: Callable[[dict[str, str]], Path], build_inventory: Build
) -> None:
    root = write_files({"acme/__init__.py": "", "acme/reports.py": REPORTS})

    result = _plan(root, build_inventory, "return await asyncio.to_thread")

    assert result.changes == []
    assert [o.status for o in result.outcomes] == [Status.MANUAL]
