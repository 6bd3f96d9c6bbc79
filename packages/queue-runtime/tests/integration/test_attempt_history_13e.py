"""Every attempt's error and traceback, and a finished job's timings (migration 0006).

Store contract (PostgreSQL and memory, one body): a job that fails twice and
then succeeds keeps both failures with their tracebacks and its start; a dead
job keeps every attempt's traceback; the history keeps the last KEPT_ATTEMPTS
attempts and clips each traceback. Then end to end with a real worker process:
``queue-runtime show`` (text and ``--json``), ``dlq show`` and the dashboard's
job page show them.
"""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from pathlib import Path
from typing import Any
from wsgiref.util import setup_testing_defaults

import pytest

from queue_runtime import JobStatus, Settings, configure
from queue_runtime.pg.connect import open_pool
from queue_runtime.pg.inspect import PgInspector
from queue_runtime.pg.store import PgJobStore
from queue_runtime.runtime import Runtime
from queue_runtime.store import (
    KEPT_ATTEMPTS,
    TRACEBACK_CHARS,
    Completion,
    Failure,
    Inspector,
    JobQuery,
    JobStore,
    NewJob,
    clip_traceback,
)
from queue_runtime.testing import MemoryInspector, MemoryJobStore, WorkerSpawner, wait_until
from tests.integration import attempts13e_app

ROOT = Path(__file__).resolve().parents[2]  # tests.integration.* imports from here


class Backend(StrEnum):
    PG = "pg"
    MEMORY = "memory"


@dataclass
class Stores:
    store: JobStore
    inspector: Inspector


@pytest.fixture
def pg_stores(settings: Settings) -> Iterator[Stores]:
    pool = open_pool(settings, max_size=4)
    try:
        yield Stores(PgJobStore(pool, settings), PgInspector(pool, settings.schema_name))
    finally:
        pool.close()


@pytest.fixture(params=list(Backend))
def stores(request: pytest.FixtureRequest) -> Stores:
    if request.param is Backend.MEMORY:
        jobs = MemoryJobStore(list(Settings().pools))
        return Stores(jobs, MemoryInspector(jobs))
    found: Stores = request.getfixturevalue("pg_stores")
    return found


def trace(n: int) -> str:
    return f'Traceback (most recent call last):\n  File "app.py", line {n}\nOSError: flaky {n}'


def run_once(store: JobStore, job_id: int) -> tuple[int, int]:
    (claimed,) = store.claim("batch", 1, "w-13e")
    assert claimed.id == job_id
    return claimed.id, claimed.attempt


def retry(store: JobStore, job_id: int, n: int) -> None:
    token = run_once(store, job_id)
    now = datetime.now(UTC)
    assert store.fail(Failure(*token, f"OSError: flaky {n}", trace(n), now)) is JobStatus.RETRYING


def test_failing_twice_then_succeeding_keeps_both_tracebacks_and_the_timings(
    stores: Stores,
) -> None:
    store = stores.store
    job_id = store.enqueue(NewJob("app.charge", "batch", {"order": 7}, max_attempts=5))
    retry(store, job_id, 1)
    retry(store, job_id, 2)
    before_last = datetime.now(UTC) - timedelta(seconds=1)
    store.complete_many([Completion(*run_once(store, job_id), result={"ok": True})])

    detail = stores.inspector.job_detail(job_id)
    assert detail is not None
    assert (detail.status, detail.attempt, detail.result) == (JobStatus.SUCCEEDED, 3, {"ok": True})
    assert [e.attempt for e in detail.errors] == [1, 2]
    assert [e.traceback for e in detail.errors] == [trace(1), trace(2)]
    assert all(e.worker == "w-13e" for e in detail.errors)
    for e in detail.errors:
        assert e.started_at is not None and e.at is not None and e.started_at <= e.at
    assert detail.errors[0].at <= detail.errors[1].started_at  # type: ignore[operator]
    assert detail.started_at is not None and detail.finished_at is not None
    assert before_last <= detail.started_at <= detail.finished_at
    assert detail.errors[1].at <= detail.started_at  # type: ignore[operator]
    (listed,) = stores.inspector.list_jobs(JobQuery(job="app.charge")).jobs
    assert listed.started_at == detail.started_at and listed.finished_at == detail.finished_at


def test_a_dead_job_keeps_every_attempts_traceback(stores: Stores) -> None:
    store = stores.store
    job_id = store.enqueue(NewJob("app.charge", "batch", {"order": 8}, max_attempts=3))
    retry(store, job_id, 1)
    retry(store, job_id, 2)
    token = run_once(store, job_id)
    assert store.fail(Failure(*token, "OSError: flaky 3", trace(3))) is JobStatus.DEAD

    detail = stores.inspector.job_detail(job_id)
    assert detail is not None and detail.status is JobStatus.DEAD
    assert [(e.attempt, e.error) for e in detail.errors] == [
        (1, "OSError: flaky 1"),
        (2, "OSError: flaky 2"),
        (3, "OSError: flaky 3"),
    ]
    assert [e.traceback for e in detail.errors] == [trace(1), trace(2), trace(3)]
    assert detail.traceback == trace(3) and detail.error == "OSError: flaky 3"
    assert detail.started_at is not None and detail.started_at >= detail.errors[1].at  # type: ignore[operator]
    (dead,) = store.dead_letters()
    assert [h["traceback"] for h in dead.history] == [trace(1), trace(2), trace(3)]


def test_the_history_keeps_the_last_attempts_and_clips_tracebacks(stores: Stores) -> None:
    store = stores.store
    attempts = KEPT_ATTEMPTS + 4
    job_id = store.enqueue(NewJob("app.charge", "batch", {}, max_attempts=attempts))
    for n in range(1, attempts):
        retry(store, job_id, n)
    huge = "Traceback (most recent call last):\n" + "  frame\n" * 5_000 + "MemoryError: huge"
    assert len(huge) > 4 * TRACEBACK_CHARS
    token = run_once(store, job_id)
    assert store.fail(Failure(*token, "MemoryError: huge", huge)) is JobStatus.DEAD

    detail = stores.inspector.job_detail(job_id)
    assert detail is not None and detail.attempt == attempts
    assert [e.attempt for e in detail.errors] == list(range(5, attempts + 1))
    assert [e.traceback for e in detail.errors[:-1]] == [trace(n) for n in range(5, attempts)]
    last = detail.errors[-1].traceback
    assert last is not None and last == clip_traceback(huge) == detail.traceback
    assert len(last) < TRACEBACK_CHARS + 100
    assert last.startswith("Traceback (most recent call last):")
    assert last.endswith("MemoryError: huge") and "characters cut] ..." in last


def test_a_lost_lease_is_an_attempt_with_its_start_and_no_traceback(stores: Stores) -> None:
    store = stores.store
    job_id = store.enqueue(NewJob("app.charge", "batch", {}, max_attempts=2))
    token = run_once(store, job_id)
    assert store.rescue([token]) == 1
    token = run_once(store, job_id)
    assert store.rescue([token]) == 1  # the last attempt: dead
    detail = stores.inspector.job_detail(job_id)
    assert detail is not None and detail.status is JobStatus.DEAD
    assert [(e.attempt, e.error, e.traceback) for e in detail.errors] == [
        (1, "lease lost", None),
        (2, "lease lost", None),
    ]
    assert all(e.started_at is not None for e in detail.errors)
    assert detail.started_at == detail.errors[-1].started_at


def test_a_job_cancelled_before_it_ran_has_no_start(stores: Stores) -> None:
    job_id = stores.store.enqueue(NewJob("app.charge", "batch", {}))
    assert stores.store.cancel(job_id)
    detail = stores.inspector.job_detail(job_id)
    assert detail is not None and detail.status is JobStatus.CANCELLED
    assert detail.started_at is None and detail.finished_at is not None


# -- end to end: a real worker, the CLI, the dashboard ------------------------------


def console_script() -> str:
    found = Path(sys.executable).with_name("queue-runtime")
    return str(found) if found.exists() else shutil.which("queue-runtime") or "queue-runtime"


def cli(settings: Settings, *argv: str) -> subprocess.CompletedProcess[str]:
    flags = ["--database-url", settings.database_url or "", "--schema", settings.schema_name]
    flags += ["--redis-url", settings.redis_url or "", "--redis-prefix", settings.redis_prefix]
    return subprocess.run(
        [console_script(), *flags, *argv], capture_output=True, text=True, timeout=60, cwd=ROOT
    )


@pytest.fixture
def quick(settings: Settings) -> Settings:
    return settings.model_copy(update={"poll_interval": 0.2})


@pytest.fixture
def rt(quick: Settings) -> Iterator[Runtime]:
    runtime = configure(quick)
    try:
        yield runtime
    finally:
        runtime.close()


@dataclass(frozen=True)
class Ran:
    flaky: int
    doomed: int


@pytest.fixture
def ran(rt: Runtime, quick: Settings, tmp_path: Path) -> Iterator[Ran]:
    """One job that failed twice then succeeded, one that died after three attempts,
    both run by a real worker process."""
    flaky = attempts13e_app.flaky.enqueue(str(tmp_path / "flaky.runs"))
    doomed = attempts13e_app.doomed.enqueue(str(tmp_path / "doomed.runs"))
    spawner = WorkerSpawner(tmp_path, "tests.integration.attempts13e_app", cwd=ROOT)
    try:
        spawner.start(quick, "--pool", "batch")
        wait_until(
            lambda: (flaky.status(), doomed.status()) == (JobStatus.SUCCEEDED, JobStatus.DEAD),
            timeout=60,
            message="the flaky job to succeed and the doomed one to die",
        )
    finally:
        spawner.stop_all()
    yield Ran(flaky.id, doomed.id)


@pytest.mark.pg
@pytest.mark.redis
def test_show_prints_every_attempt_and_the_timings(quick: Settings, ran: Ran) -> None:
    done = cli(quick, "show", str(ran.flaky), "--json")
    assert done.returncode == 0, done.stderr
    shown = json.loads(done.stdout)
    assert (shown["status"], shown["attempt"]) == ("succeeded", 3)
    assert shown["result"] == "charged on run 3"
    assert [e["attempt"] for e in shown["errors"]] == [1, 2]
    for n, entry in enumerate(shown["errors"], start=1):
        assert entry["error"] == f"ConnectionError: gateway timeout on run {n}"
        assert entry["traceback"].startswith("Traceback (most recent call last):")
        assert "in _charge" in entry["traceback"]
        assert entry["traceback"].rstrip().endswith(f"gateway timeout on run {n}")
        assert entry["started_at"] and entry["at"] and entry["run_seconds"] >= 0
    started = datetime.fromisoformat(shown["started_at"])
    finished = datetime.fromisoformat(shown["finished_at"])
    assert datetime.fromisoformat(shown["enqueued_at"]) <= started <= finished
    assert shown["run_seconds"] == pytest.approx((finished - started).total_seconds())
    assert shown["attempts_cut"] is False

    text = cli(quick, "show", str(ran.flaky))
    assert text.returncode == 0, text.stderr
    fields = {line.split("  ")[0]: line for line in text.stdout.splitlines() if line}
    assert fields["started"].split()[-1] == started.isoformat(timespec="seconds")
    assert fields["run time"].split()[-1].endswith("s")
    assert text.stdout.count("Traceback (most recent call last):") == 2
    assert "attempt 1 failed at " in text.stdout and "attempt 2 failed at " in text.stdout
    assert "ConnectionError: gateway timeout on run 2" in text.stdout


@pytest.mark.pg
@pytest.mark.redis
def test_dlq_show_prints_every_attempts_traceback(quick: Settings, ran: Ran) -> None:
    done = cli(quick, "dlq", "show", str(ran.doomed))
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("Traceback (most recent call last):") == 3
    for n in (1, 2, 3):
        assert f"attempt {n} failed at " in done.stdout
        assert f"ValueError: bad card on run {n}" in done.stdout
    shown = json.loads(cli(quick, "dlq", "show", str(ran.doomed), "--json").stdout)
    assert [e["attempt"] for e in shown["errors"]] == [1, 2, 3]
    assert all("in doomed" in e["traceback"] for e in shown["errors"])
    assert shown["started_at"] is not None and shown["run_seconds"] is not None


def page(runtime: Runtime, path: str) -> str:
    """One GET of the dashboard (read-only, no token: the app is called in-process)."""
    from queue_runtime.web import make_wsgi_app

    app = make_wsgi_app(runtime, read_only=True)
    environ: dict[str, Any] = {"REQUEST_METHOD": "GET", "PATH_INFO": path, "QUERY_STRING": ""}
    environ["wsgi.input"] = io.BytesIO(b"")
    setup_testing_defaults(environ)
    status: list[str] = []
    try:
        body = b"".join(app(environ, lambda s, h, *_: status.append(s)))
    finally:
        app.close()  # type: ignore[attr-defined]
    assert status[0].startswith("200"), (status, body[:300])
    return body.decode()


@pytest.mark.pg
@pytest.mark.redis
def test_the_dashboard_job_page_shows_every_attempt_and_the_timings(rt: Runtime, ran: Ran) -> None:
    pytest.importorskip("jinja2", reason="the dashboard needs queue-runtime[web]")
    flaky = page(rt, f"/jobs/{ran.flaky}")
    table = flaky.split('<table id="attempts">', 1)[1].split("</table>", 1)[0]
    assert table.count('<tr data-attempt="') == 2
    assert table.count('<details class="attempt-traceback"') == 2
    assert table.count("Traceback (most recent call last):") == 2
    assert "ConnectionError: gateway timeout on run 1" in table
    assert 'id="job-started"' in flaky and 'id="job-finished"' in flaky
    assert 'id="job-runtime"' in flaky and 'id="attempts-cut"' not in flaky
    dead = page(rt, f"/jobs/{ran.doomed}")
    table = dead.split('<table id="attempts">', 1)[1].split("</table>", 1)[0]
    assert table.count('<tr data-attempt="') == 3
    assert table.count("Traceback (most recent call last):") == 3
    assert 'id="job-traceback"' not in dead  # each attempt shows its own


def test_the_dashboard_notes_attempts_that_were_not_kept(
    runtime: Runtime, require_redis: None
) -> None:
    pytest.importorskip("jinja2", reason="the dashboard needs queue-runtime[web]")
    store = runtime.store
    attempts = KEPT_ATTEMPTS + 2
    job_id = store.enqueue(NewJob("app.charge", "batch", {}, max_attempts=attempts))
    for n in range(1, attempts + 1):
        (claimed,) = store.claim("batch", 1, "w-13e")
        retry_at = datetime.now(UTC) if n < attempts else None
        store.fail(Failure(claimed.id, claimed.attempt, f"OSError: flaky {n}", trace(n), retry_at))
    body = page(runtime, f"/jobs/{job_id}")
    assert f"Only the last {KEPT_ATTEMPTS} failed attempts are kept." in body
    table = body.split('<table id="attempts">', 1)[1].split("</table>", 1)[0]
    assert table.count('<tr data-attempt="') == KEPT_ATTEMPTS
    assert 'data-attempt="3"' in table and 'data-attempt="2"' not in table
