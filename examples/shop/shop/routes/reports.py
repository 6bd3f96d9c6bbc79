"""Daily sales reports."""

from __future__ import annotations

import asyncio
import multiprocessing

from fastapi import APIRouter, HTTPException
from fastapi.responses import PlainTextResponse

from shop.db import connect
from shop.deps import Day, ServicesDep
from shop.jobs import export_daily_report, rebuild_reports
from shop.repo import order_days
from shop.reports import report_path

router = APIRouter()


@router.post("/reports/rebuild", status_code=202)
def rebuild(services: ServicesDep) -> dict[str, object]:
    settings = services.settings
    with connect(settings.database) as conn:
        days = order_days(conn)
    # Site: a child process.
    proc = multiprocessing.Process(
        target=rebuild_reports, args=(str(settings.database), str(settings.reports_dir), days)
    )
    proc.start()
    services.processes.append(proc)  # joined at shutdown, so that no zombie is left
    return {"days": days}


@router.post("/reports/{day}", status_code=202)
async def export_report(day: Day) -> dict[str, str]:
    loop = asyncio.get_running_loop()
    # Site: run_in_executor on the default pool, never awaited.
    loop.run_in_executor(None, export_daily_report, day)
    return {"day": day}


@router.get("/reports/{day}", response_class=PlainTextResponse)
def download_report(day: Day, services: ServicesDep) -> str:
    path = report_path(services.settings.reports_dir, day)
    if not path.exists():
        raise HTTPException(404, f"no report for {day} yet")
    return path.read_text()
