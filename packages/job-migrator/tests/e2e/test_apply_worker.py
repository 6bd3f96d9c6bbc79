"""apply's 202 rewrite end to end: a real worker runs the job, the generated endpoint reports it.

A tiny FastAPI app (written here) has a handler that returns a job's result.
``plan_apply`` + ``write`` turn it into an enqueue answering 202 with a status
URL and add ``GET /jobs/{id}``. Then, against the real PostgreSQL and Redis,
a ``queue-runtime worker`` subprocess runs the job: its effect (a file) appears
and the status endpoint reports ``succeeded`` with the job's return value.
Isolation: a schema and a Redis prefix of this test's own, removed afterwards;
the worker is stopped by PID.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from codemods import Status, plan_apply, write
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

APP = """from fastapi import FastAPI

from acme import reports


def create_app() -> FastAPI:
    app = FastAPI()
    app.include_router(reports.router)
    return app
"""

REPORTS = """from pathlib import Path

from fastapi import APIRouter

router = APIRouter()
OUT = Path(__file__).resolve().parent.parent / "out"


def export_report(day: str) -> str:
    OUT.mkdir(exist_ok=True)
    path = OUT / f"{day}.csv"
    path.write_text(f"day,{day}\\n")
    return str(path)


@router.post("/reports/{day}")
def export(day: str) -> dict[str, str]:
    path = export_report(day)
    return {"path": path}
"""

CLIENT = """import json, sys, time
from fastapi.testclient import TestClient
from acme.app import create_app

client = TestClient(create_app())
accepted = client.post("/reports/2026-01-02")
status, deadline = {}, time.monotonic() + 30
while time.monotonic() < deadline and status.get("status") not in ("succeeded", "dead"):
    status = client.get(accepted.json()["status_url"]).json()
    time.sleep(0.05)
print(json.dumps({"code": accepted.status_code, "accepted": accepted.json(), "status": status}))
"""


def _inventory(root: Path) -> Inventory:
    job = "acme.reports.export_report"
    site = CallSite(
        location=Location(path="acme/reports.py", line=18),
        pattern=Pattern.DIRECT_CALL,
        job=job,
        handler=Framework.FASTAPI,
        result_used=True,
        result_use_lines=[19],
    )
    definition = Location(path="acme/reports.py", line=9)
    verdict = Job(
        qualname=job,
        location=definition,
        idempotency=Idempotency.IDEMPOTENT,
        confidence=Confidence.HIGH,
    )
    return Inventory(root=str(root), sites=[site], jobs=[verdict])


@pytest.fixture
def app_root(tmp_path: Path) -> Iterator[Path]:
    (tmp_path / "acme").mkdir()
    (tmp_path / "acme" / "__init__.py").write_text("")
    (tmp_path / "acme" / "app.py").write_text(APP)
    (tmp_path / "acme" / "reports.py").write_text(REPORTS)
    with private_queue(tmp_path):
        yield tmp_path


def test_a_worker_runs_the_job_and_the_generated_endpoint_reports_success(app_root: Path) -> None:
    result = plan_apply(app_root, _inventory(app_root), scanner=None)
    assert [o.status for o in result.outcomes] == [Status.REWRITTEN]
    write(result)
    env = app_env(app_root)
    migrate(app_root, env)

    with worker(app_root, env, "acme.reports") as log:
        client = run_python(app_root, env, "-c", CLIENT)

    assert client.returncode == 0, client.stderr[-3000:]
    seen = json.loads(client.stdout.strip().splitlines()[-1])
    accepted = seen["accepted"]
    assert seen["code"] == 202 and accepted["status_url"] == f"/jobs/{accepted['job_id']}"
    assert seen["status"]["status"] == "succeeded", log.read_text()[-3000:]
    assert seen["status"]["result"] == str(app_root / "out" / "2026-01-02.csv")
    assert (app_root / "out" / "2026-01-02.csv").read_text() == "day,2026-01-02\n"
