"""Issue 21: a job the scan could not decide, moved with ``apply --job``, runs as before until
its verdict is decided; then the same code goes to the queue, on real PostgreSQL.

The whole path a user takes, nothing hand-made: ``inventory.scan`` finds the job
``unknown`` (its work is behind a call decided at run time); ``plan_apply`` with the job
named rewrites the thread site to an enqueue and registers the job
``@job(idempotency="unknown")``; the rewritten module, imported under a queue-mode runtime
whose default rollout is ``async``, still runs the job in-process (the gate holds it:
nothing is queued). The user then pins the verdict the outcome offered, scans again, and
the runtime, reading that inventory, queues the very same call.
"""

from __future__ import annotations

import importlib
import re
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from psycopg import sql

from codemods import ApplyOptions, Status, plan_apply, write
from inventory import Idempotency, scan
from inventory._scan._scan import write_inventory
from queue_runtime import Settings, configure
from queue_runtime.config import RolloutMode
from queue_runtime.testing import isolated_settings, pg_admin_url, pg_problem, require

PACKAGE = "heldjobs_e2e"
JOB = f"{PACKAGE}.app.report"
EFFECTS = """\
import threading

SEEN = []
DONE = threading.Event()


def record(user_id):
    SEEN.append(user_id)
    DONE.set()
"""
APP = f"""\
import importlib
import threading


def report(user_id):
    sink = importlib.import_module("{PACKAGE}.effects")
    getattr(sink, "record")(user_id)


def view(user_id):
    threading.Thread(target=report, args=(user_id,)).start()
"""


@pytest.fixture
def project(tmp_path: Path) -> Iterator[Path]:
    package = tmp_path / PACKAGE
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "effects.py").write_text(EFFECTS)
    (package / "app.py").write_text(APP)
    sys.path.insert(0, str(tmp_path))
    try:
        yield tmp_path
    finally:
        sys.path.remove(str(tmp_path))
        for name in [m for m in sys.modules if m == PACKAGE or m.startswith(f"{PACKAGE}.")]:
            del sys.modules[name]


@pytest.fixture
def settings() -> Iterator[Settings]:
    require(pg_problem())
    with isolated_settings(pg_admin_url(), default_rollout=RolloutMode.ASYNC) as found:
        yield found


def queued(settings: Settings) -> int:
    query = sql.SQL("SELECT count(*) FROM {}.jobs WHERE name = %s").format(
        sql.Identifier(settings.schema_name)
    )
    with psycopg.connect(settings.database_url or "") as conn:
        row = conn.execute(query, (JOB,)).fetchone()
    assert row is not None
    return int(row[0])


def test_a_held_job_runs_in_process_until_its_pinned_verdict_lets_it_queue(
    project: Path, settings: Settings
) -> None:
    inventory = scan(project, use_cache=False, jobs=1)
    job = inventory.job(JOB)
    assert job is not None and job.idempotency is Idempotency.UNKNOWN

    result = plan_apply(project, inventory, ApplyOptions(jobs=(JOB,), allow_dirty=True))
    (moved,) = [o for o in result.outcomes if o.status is Status.REWRITTEN]
    assert moved.reason.startswith("held: ")
    write(result)
    rewritten = (project / PACKAGE / "app.py").read_text()
    assert '@job(pool="batch", idempotency="unknown")\ndef report' in rewritten
    assert "report.options(inline=InlineShape.THREAD).enqueue(user_id)" in rewritten

    effects = importlib.import_module(f"{PACKAGE}.effects")
    app = importlib.import_module(f"{PACKAGE}.app")
    runtime = configure(settings)  # default rollout async, no inventory: held
    try:
        app.view(7)
        assert effects.DONE.wait(timeout=30), "the held job never ran in-process"
        assert effects.SEEN == [7]
        assert queued(settings) == 0
    finally:
        runtime.close()

    # Decide it as the outcome says: pin the verdict after review, and scan again.
    pin = re.search(r'\[tool\.migrator\.jobs\."([^"]+)"\] idempotency = "([a-z_]+)"', moved.reason)
    assert pin is not None and pin.group(1) == JOB, moved.reason
    (project / "pyproject.toml").write_text(
        f'[tool.migrator.jobs."{JOB}"]\nidempotency = "{pin.group(2)}"\n'
        'reason = "record() only stores the id it is given"\n'
    )
    decided = scan(project, use_cache=False, jobs=1)
    found = decided.job(JOB)
    assert found is not None and found.idempotency is Idempotency.IDEMPOTENT
    inventory_path = write_inventory(project, decided)

    runtime = configure(settings, inventory_path=str(inventory_path))
    try:
        effects.DONE.clear()
        app.view(8)
        deadline = time.monotonic() + 30
        while queued(settings) == 0 and time.monotonic() < deadline:
            time.sleep(0.05)  # polled with a deadline: the enqueue may come from the thread
        assert queued(settings) == 1
        assert effects.SEEN == [7]  # queued for a worker, not run here
    finally:
        runtime.close()
