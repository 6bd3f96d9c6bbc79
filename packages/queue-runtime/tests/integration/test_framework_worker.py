"""``queue-runtime worker`` with a framework context: a Flask app and a Django project.

Real worker subprocesses on the real PostgreSQL and Redis; the apps are the tiny
ones in ``tests/fixtures/framework_apps``. The worker sets the framework up
before it imports the app module, and runs every job in its scope.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

# Flask and Django are the `test-frameworks` extra: absent from the runtime-alone CI
# environment (Flask brings click); these tests run in the full environment.
pytest.importorskip("flask", reason="Flask is not installed (the test-frameworks extra)")
pytest.importorskip("django", reason="Django is not installed (the test-frameworks extra)")

from queue_runtime import JobStatus, Settings, get_job
from queue_runtime.runtime import Runtime
from queue_runtime.store import NewJob
from queue_runtime.testing import WorkerSpawner
from tests.framework_env import framework_env
from tests.support import wait_until

pytestmark = [pytest.mark.pg, pytest.mark.redis, pytest.mark.slow]

LINK = "https://shop.example/orders/7"


def _enqueue(rt: Runtime, name: str, **args: object) -> int:
    """By name: the apps' jobs are registered in the workers only, never in this process
    (their fingerprints and gate rows would leak into other tests)."""
    return rt.store.enqueue(NewJob(name, "batch", dict(args), max_attempts=1))


@pytest.fixture
def spawner(tmp_path: Path) -> Iterator[WorkerSpawner]:
    logs = tmp_path / "logs"
    logs.mkdir()
    spawned = WorkerSpawner(logs, "flask_site.jobs", cwd=tmp_path, env=framework_env())
    try:
        yield spawned
    finally:
        spawned.stop_all()


def test_flask_jobs_run_in_an_app_context_with_the_server_name_from_the_flags(
    runtime: Runtime, spawner: WorkerSpawner
) -> None:
    handle = _enqueue(runtime, "flask_site.order_mail", order_id=7)
    flags = ["--flask-app", "flask_site:create_app", "--server-name", "shop.example"]
    spawner.start(runtime.settings, *flags, "--url-scheme", "https")
    result = get_job(handle).result(timeout=30)
    assert result == {"sender": "orders@shop.example", "link": LINK}, spawner.logs()


def test_flask_app_from_pyproject(runtime: Runtime, spawner: WorkerSpawner) -> None:
    (spawner.cwd / "pyproject.toml").write_text(
        '[tool.queue_runtime]\nflask_app = "flask_site.wsgi:app"\n'
        'server_name = "shop.example"\nurl_scheme = "https"\n'
    )
    handle = _enqueue(runtime, "flask_site.order_mail", order_id=7)
    spawner.start(runtime.settings)
    assert get_job(handle).result(timeout=30)["link"] == LINK, spawner.logs()


def test_without_the_app_a_flask_job_dies_outside_of_application_context(
    runtime: Runtime, spawner: WorkerSpawner
) -> None:
    handle = _enqueue(runtime, "flask_site.order_mail", order_id=7)
    spawner.start(runtime.settings)
    wait_until(lambda: get_job(handle).status() is JobStatus.DEAD, timeout=30, message="DLQ")
    record = runtime.store.get(handle)
    assert record is not None and "outside of application context" in (record.error or "")


def test_django_setup_before_the_app_module_and_connections_closed_between_jobs(
    settings: Settings, runtime: Runtime, tmp_path: Path
) -> None:
    mail = tmp_path / "mail"
    env = framework_env(DJSITE_DB=str(tmp_path / "db.sqlite3"), DJSITE_MAIL_DIR=str(mail))
    logs = tmp_path / "logs"
    logs.mkdir()
    spawner = WorkerSpawner(logs, "djsite.jobs", cwd=tmp_path, env=env)
    try:
        spawner.start(settings, "--django-settings", "djsite.settings", "--concurrency", "1")
        results = []
        for n in range(2):  # one executor thread: the second job runs where the first did
            job_id = _enqueue(runtime, "djsite.welcome_mail", address=f"user{n}@djsite.example")
            results.append(get_job(job_id).result(timeout=30))
    finally:
        spawner.stop_all()
    expected = {"sent": 1, "connection_open_at_start": False, "model": "Group"}
    assert results == [expected, expected], spawner.logs()
    assert len(list(mail.iterdir())) == 2
