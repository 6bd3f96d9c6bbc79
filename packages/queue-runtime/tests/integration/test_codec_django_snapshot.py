"""A moved post_delete receiver: the deleted instance travels by value (``codecs.snapshot``).

The receiver (``djsite.docs.receivers``, as ``migrator apply`` splits it) enqueues its job
with ``snapshot(instance)``; the row is deleted, the queue is the test's PostgreSQL, and a
real worker rebuilds the instance from the stored field values and deletes its file.
Django runs in subprocesses (it is set up process-wide), on a SQLite file they share.
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

from queue_runtime import Settings, get_job
from queue_runtime.runtime import Runtime
from queue_runtime.testing import WorkerSpawner
from queue_runtime.testing.spawner import SETTINGS_ENV
from tests.framework_env import framework_env

SNAPSHOT_SETTINGS = "djsite.snapshot_settings"


def _env(tmp_path: Path) -> dict[str, str]:
    return framework_env(
        DJANGO_SETTINGS_MODULE=SNAPSHOT_SETTINGS,
        DJSITE_DB=str(tmp_path / "db.sqlite3"),
        DJSITE_MEDIA=str(tmp_path / "media"),
    )


def _delete_a_doc(tmp_path: Path, settings: Settings) -> dict[str, Any]:
    env = {**_env(tmp_path), SETTINGS_ENV: settings.model_dump_json(by_alias=True)}
    done = subprocess.run(
        [sys.executable, "-m", "djsite.snapshots"],
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


@pytest.fixture
def worker(tmp_path: Path, settings: Settings) -> Iterator[WorkerSpawner]:
    logs = tmp_path / "logs"
    logs.mkdir()
    spawned = WorkerSpawner(logs, "djsite.docs.receivers", cwd=tmp_path, env=_env(tmp_path))
    try:
        yield spawned
    finally:
        spawned.stop_all()


@pytest.mark.pg
@pytest.mark.redis
@pytest.mark.slow
def test_a_worker_sees_the_deleted_rows_values_and_deletes_its_file(
    tmp_path: Path, settings: Settings, runtime: Runtime, worker: WorkerSpawner
) -> None:
    deleted = _delete_a_doc(tmp_path, settings)
    assert deleted["rows"] == 0 and Path(deleted["path"]).exists()  # the file waits for the job
    stored = runtime.store.get(deleted["id"])
    assert stored is not None
    assert stored.args["instance"] == {
        "__qr__": "django.snapshot",
        "model": "docs.Doc",
        "db": "default",
        "v": {"id": deleted["pk"], "title": "minutes", "file": deleted["name"]},
    }

    worker.start(settings, "--django-settings", SNAPSHOT_SETTINGS)

    seen = get_job(deleted["id"]).result(timeout=30)
    assert seen == {
        "sender": "docs.Doc",
        "pk": deleted["pk"],
        "title": "minutes",
        "file": deleted["name"],
        "existed": True,
        "adding": False,
        "db": "default",
        "rows": 0,
        "kwargs": ["using"],
    }, worker.logs()
    assert not Path(deleted["path"]).exists()
