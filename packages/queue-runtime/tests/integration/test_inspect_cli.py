"""``queue-runtime jobs``, ``show``, ``workers`` and ``dlq show`` through the console script,
on real PostgreSQL and Redis with a real worker process (WorkerSpawner)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from queue_runtime import JobStatus, Settings, configure
from queue_runtime.runtime import Runtime
from queue_runtime.testing import WorkerSpawner, wait_until
from tests.integration import inspect13b_app

pytestmark = [pytest.mark.pg, pytest.mark.redis]
ROOT = Path(__file__).resolve().parents[2]  # tests.integration.* imports from here


def console_script() -> str:
    found = Path(sys.executable).with_name("queue-runtime")
    return str(found) if found.exists() else shutil.which("queue-runtime") or "queue-runtime"


def cli(settings: Settings, *argv: str) -> subprocess.CompletedProcess[str]:
    flags = ["--database-url", settings.database_url or "", "--schema", settings.schema_name]
    flags += ["--redis-url", settings.redis_url or "", "--redis-prefix", settings.redis_prefix]
    return subprocess.run(
        [console_script(), *flags, *argv], capture_output=True, text=True, timeout=60, cwd=ROOT
    )


def cli_json(settings: Settings, *argv: str) -> Any:
    done = cli(settings, *argv, "--json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.fixture
def quick(settings: Settings) -> Settings:
    """Heartbeats every 0.5 s, so presence shows within a second."""
    return settings.model_copy(update={"lease_ttl": 1.5, "poll_interval": 0.2})


@pytest.fixture
def rt(quick: Settings) -> Iterator[Runtime]:
    runtime = configure(quick)
    try:
        yield runtime
    finally:
        runtime.close()


@pytest.fixture
def spawner(tmp_path: Path) -> Iterator[WorkerSpawner]:
    spawned = WorkerSpawner(tmp_path, "tests.integration.inspect13b_app", cwd=ROOT)
    try:
        yield spawned
    finally:
        spawned.stop_all()


def test_workers_lists_the_live_worker_and_its_running_job(
    rt: Runtime, quick: Settings, spawner: WorkerSpawner, tmp_path: Path
) -> None:
    marker = tmp_path / "release"
    handle = inspect13b_app.hold.enqueue(str(marker))
    proc = spawner.start(quick, "--pool", "batch")

    def mine() -> list[dict[str, Any]]:
        return [w for w in cli_json(quick, "workers") if w["pid"] == proc.pid]

    wait_until(
        lambda: [w["running"] for w in mine()] == [1],
        timeout=30,
        message="the worker to list itself with one running job",
    )
    (found,) = mine()
    assert found["pools"] == ["batch"] and found["host"] and found["started_at"]
    text = cli(quick, "workers")
    assert text.returncode == 0 and str(proc.pid) in text.stdout
    assert text.stdout.splitlines()[0].split()[:3] == ["worker", "host", "pid"]
    marker.touch()
    wait_until(lambda: handle.status() is JobStatus.SUCCEEDED, timeout=30, message="released")
    wait_until(lambda: [w["running"] for w in mine()] == [0], timeout=30, message="idle again")
    proc.terminate()
    assert proc.wait(timeout=30) == 0
    assert mine() == []  # a clean shutdown removes its presence at once


def test_jobs_show_and_dlq_show_print_what_is_stored(
    rt: Runtime, quick: Settings, spawner: WorkerSpawner
) -> None:
    dead = inspect13b_app.explode.enqueue(7)
    spawner.start(quick, "--pool", "batch")
    wait_until(lambda: dead.status() is JobStatus.DEAD, timeout=30, message="the job to die")
    spawner.stop_all()
    queued = [inspect13b_app.noop.enqueue(n).id for n in range(5)]

    listed = cli_json(quick, "jobs", "--state", "dead")
    assert [j["id"] for j in listed["jobs"]] == [dead.id]
    assert "ValueError: exploded 7" in listed["jobs"][0]["error"]
    table = cli(quick, "jobs", "--job", inspect13b_app.noop.name)
    assert table.returncode == 0
    assert [int(line.split()[0]) for line in table.stdout.splitlines()[1:]] == queued[::-1]

    shown = cli(quick, "show", str(dead.id))
    assert shown.returncode == 0, shown.stderr
    assert [line.split()[1] for line in shown.stdout.splitlines() if line.startswith("state")] == [
        "dead"
    ]
    assert "Traceback (most recent call last)" in shown.stdout
    assert "ValueError: exploded 7" in shown.stdout
    detail = cli_json(quick, "show", str(dead.id))
    assert detail["args"] == {"n": 7} and detail["status"] == "dead"
    assert detail["errors"][-1]["traceback"].startswith("Traceback")
    dlq = cli(quick, "dlq", "show", str(dead.id))
    assert dlq.returncode == 0 and "Traceback (most recent call last)" in dlq.stdout

    missing = cli(quick, "show", "99999999")
    assert missing.returncode == 1 and missing.stderr.strip() == (
        "error: no job 99999999 (unknown, or purged)"
    )


def test_jobs_pages_through_every_job_exactly_once(rt: Runtime, quick: Settings) -> None:
    made = [inspect13b_app.noop.enqueue(n).id for n in range(12)]
    seen: list[int] = []
    after: list[str] = []
    for _ in range(10):
        page = cli_json(quick, "jobs", "--limit", "5", *after)
        seen += [j["id"] for j in page["jobs"]]
        if page["next_after"] is None:
            break
        after = ["--after", str(page["next_after"])]
    assert seen == made[::-1]
    text = cli(quick, "jobs", "--limit", "5")
    assert text.stdout.rstrip().endswith(f"more: --after {made[-5]}")
