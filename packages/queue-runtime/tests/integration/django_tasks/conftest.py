"""Django 6's task API on queue_runtime (``queue_runtime.django``): Django set up in this process.

These tests need ``django.tasks`` (Django 6.0 or later, so Python 3.12 or later) or
the ``django-tasks`` backport: elsewhere they are not collected. The project is ``djtasks`` in
``tests/fixtures/framework_apps``; its tasks are imported here (Django's
``@task`` needs the settings) and found by module path in the workers.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from queue_runtime.config import Settings
from queue_runtime.testing import WorkerSpawner


def _has_django_tasks() -> bool:
    """Django 6's ``django.tasks``, or the ``django-tasks`` backport on an older Django."""
    try:
        found = importlib.util.find_spec("django.tasks") is not None
    except ModuleNotFoundError:  # no Django at all
        return False
    # This test folder is itself importable as a namespace package named ``django_tasks``
    # (origin None): only an installed backport (a module with a file) counts.
    backport = importlib.util.find_spec("django_tasks")
    return found or (backport is not None and backport.origin is not None)


if not _has_django_tasks():
    collect_ignore_glob = ["test_*.py"]

APPS = Path(__file__).resolve().parents[2] / "fixtures" / "framework_apps"


@pytest.fixture(scope="session", autouse=True)
def django_project() -> None:
    """``djtasks.settings`` set up once for the session (Django's settings are process-wide).

    Configured from the module's values, never through ``DJANGO_SETTINGS_MODULE``: the
    variable would reach every process other tests start (their own Django projects).
    """
    import importlib

    import django
    from django.conf import settings as django_settings

    if str(APPS) not in sys.path:
        sys.path.insert(0, str(APPS))
    if not django_settings.configured:
        module = importlib.import_module("djtasks.settings")
        django_settings.configure(**{k: v for k, v in vars(module).items() if k.isupper()})
    django.setup()


@pytest.fixture
def worker_env(tmp_path: Path) -> dict[str, str]:
    paths = [str(APPS), *[p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]]
    env = {k: v for k, v in os.environ.items() if k != "QR_TEST_SETTINGS"}
    signals = tmp_path / "signals.jsonl"
    return {**env, "PYTHONPATH": os.pathsep.join(paths), "DJTASKS_SIGNALS": str(signals)}


@pytest.fixture
def workers(tmp_path: Path, worker_env: dict[str, str]) -> Iterator[WorkerSpawner]:
    logs = tmp_path / "logs"
    logs.mkdir()
    spawned = WorkerSpawner(logs, "djtasks.worker", cwd=tmp_path, env=worker_env)
    try:
        yield spawned
    finally:
        spawned.stop_all()


def start_worker(workers: WorkerSpawner, settings: Settings, *pools: str) -> None:
    flags = [a for pool in (pools or ("batch",)) for a in ("--pool", pool)]
    workers.start(settings, "--django-settings", "djtasks.settings", *flags)
