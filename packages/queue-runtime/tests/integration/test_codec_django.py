"""Django model instances and classes by reference, lazy strings, enqueue after commit.

Django is set up process-wide, so its side runs in subprocesses
(``python -m djsite.refs CASE``, the tiny project in ``tests/fixtures/framework_apps``)
with a SQLite file shared with a real worker; the queue is the test's PostgreSQL.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("django", reason="Django is not installed (the test-frameworks extra)")

from queue_runtime import JobStatus, Settings, get_job
from queue_runtime.runtime import Runtime
from queue_runtime.testing import WorkerSpawner
from queue_runtime.testing.spawner import SETTINGS_ENV
from tests.framework_env import framework_env
from tests.support import wait_until


def _refs(tmp_path: Path, case: str, settings: Settings | None = None) -> dict[str, Any]:
    env = framework_env(DJSITE_DB=str(tmp_path / "db.sqlite3"))
    if settings is not None:
        env[SETTINGS_ENV] = settings.model_dump_json(by_alias=True)
    done = subprocess.run(
        [sys.executable, "-m", "djsite.refs", case],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    found: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    return found


def test_a_model_travels_by_reference_and_its_class_by_label(tmp_path: Path) -> None:
    out = _refs(tmp_path, "codecs")
    assert out["stored"] == {
        "g": {"__qr__": "django.model", "model": "auth.Group", "pk": 1},
        "sender": {"__qr__": "django.class", "model": "auth.Group"},
    }
    assert (out["pk"], out["name"], out["same_class"]) == (1, "staff", True)
    assert out["unsaved"].startswith("unsaved Django model instance")
    assert "auth.Group pk=1 no longer exists" in out["gone"]


def test_a_lazy_string_is_forced_in_the_callers_active_language(tmp_path: Path) -> None:
    assert _refs(tmp_path, "codecs")["lazy"] == "lundi"


def test_a_safe_string_comes_back_safe_so_a_template_does_not_escape_it_twice(
    tmp_path: Path,
) -> None:
    out = _refs(tmp_path, "codecs")
    assert out["safe"] == {"__qr__": "django.safe", "v": "<b>a&amp;b</b>"}
    assert out["safe_back"] == [True, "<b>a&amp;b</b>"]  # not "&lt;b&gt;a&amp;amp;b..."


@pytest.mark.pg
def test_an_enqueue_in_atomic_waits_for_the_commit_and_is_dropped_on_rollback(
    tmp_path: Path, settings: Settings
) -> None:
    out = _refs(tmp_path, "atomic", settings)
    assert out["before_rollback"] == JobStatus.QUEUED
    assert out["after_rollback"] == [JobStatus.CANCELLED, JobStatus.CANCELLED]
    assert out["before_commit"] == [JobStatus.QUEUED, 0, 0]  # nothing stored yet
    assert out["after_commit"] == [JobStatus.QUEUED, True, 1]


@pytest.mark.pg
def test_inside_a_django_testcase_an_enqueue_is_stored_at_once(
    tmp_path: Path, settings: Settings
) -> None:
    out = _refs(tmp_path, "testcase", settings)
    assert out["ok"] and out["id_in_atomic"] > 0 and out["stored_in_atomic"] == 1


@pytest.fixture
def worker(tmp_path: Path, settings: Settings) -> Iterator[WorkerSpawner]:
    logs = tmp_path / "logs"
    logs.mkdir()
    env = framework_env(DJSITE_DB=str(tmp_path / "db.sqlite3"))
    spawned = WorkerSpawner(logs, "djsite.ref_jobs", cwd=tmp_path, env=env)
    try:
        yield spawned
    finally:
        spawned.stop_all()


@pytest.mark.pg
@pytest.mark.redis
@pytest.mark.slow
def test_the_worker_reads_rows_again_and_dead_letters_a_deleted_one_after_its_retries(
    tmp_path: Path, settings: Settings, runtime: Runtime, worker: WorkerSpawner
) -> None:
    ids = _refs(tmp_path, "enqueue", settings)
    worker.start(settings, "--django-settings", "djsite.settings")
    assert get_job(ids["kept"]).result(timeout=30) == "kept+", worker.logs()
    assert get_job(ids["signal_ok"]).result(timeout=30) == {
        "sender": "auth.Group",
        "pk": 3,
        "name": "signal",
    }
    for name in ("gone", "signal"):
        handle = get_job(ids[name])
        wait_until(lambda h=handle: h.status() is JobStatus.DEAD, timeout=30, message=name)
        record = runtime.store.get(ids[name])
        assert record is not None and record.attempt == 2, worker.logs()
        assert (record.error or "").startswith("ReferenceGone: "), record.error
        assert "auth.Group pk=2 no longer exists" in (record.error or "")
