"""The installed ``queue-runtime`` console script runs a worker for an app in the cwd."""

from __future__ import annotations

import shutil
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from queue_runtime import JobStatus, Settings, configure
from queue_runtime.store import NewJob
from tests.support import wait_until

pytestmark = [pytest.mark.pg, pytest.mark.redis]


def console_script() -> str:
    found = Path(sys.executable).with_name("queue-runtime")
    return str(found) if found.exists() else shutil.which("queue-runtime") or "queue-runtime"


def test_worker_command_imports_an_app_from_the_cwd(settings: Settings, tmp_path: Path) -> None:
    (tmp_path / "shop_jobs.py").write_text(
        textwrap.dedent(
            """
            from queue_runtime import job

            @job(pool="batch")
            def greet(name: str) -> str:
                return f"hello {name}"
            """
        )
    )
    runtime = configure(settings)
    job_id = runtime.store.enqueue(
        NewJob(name="shop_jobs.greet", pool="batch", args={"name": "ada"})
    )
    flags = ["--database-url", settings.database_url or "", "--schema", settings.schema_name]
    flags += ["--redis-url", settings.redis_url or "", "--redis-prefix", settings.redis_prefix]
    log = tmp_path / "worker.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [console_script(), *flags, "worker", "shop_jobs", "--pool", "batch"],
            cwd=tmp_path,
            stdout=out,
            stderr=out,
        )
    try:
        wait_until(
            lambda: runtime.store.get(job_id).status is JobStatus.SUCCEEDED,  # type: ignore[union-attr]
            timeout=30,
            message="the job to run in the console-script worker",
        )
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0, log.read_text()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
    assert runtime.store.get(job_id).result == "hello ada"  # type: ignore[union-attr]
