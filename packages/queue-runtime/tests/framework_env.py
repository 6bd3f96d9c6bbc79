"""Processes that run the framework fixture apps (``tests/fixtures/framework_apps``).

The apps (``djsite``, ``flask_site``) are imported by subprocesses only, never by the
test process: their jobs' registrations and gate rows would leak into other tests.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from queue_runtime.testing.spawner import SETTINGS_ENV

APPS = Path(__file__).resolve().parent / "fixtures" / "framework_apps"


def framework_env(**extra: str) -> dict[str, str]:
    """This environment with the fixture apps first on ``PYTHONPATH``, without the Settings
    of a spawned worker this process may run in (``extra`` may set them)."""
    paths = [str(APPS), *[p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]]
    env = {k: v for k, v in os.environ.items() if k != SETTINGS_ENV}
    return {**env, "PYTHONPATH": os.pathsep.join(paths), **extra}


def djsite_env(tmp_path: Path, backend: str, **extra: str) -> dict[str, str]:
    """A ``djsite`` process: its settings, its ``EMAIL_BACKEND``, a SQLite file in ``tmp_path``."""
    return framework_env(
        DJANGO_SETTINGS_MODULE="djsite.settings",
        DJSITE_EMAIL_BACKEND=backend,
        DJSITE_DB=str(tmp_path / "db.sqlite3"),
        **extra,
    )


def send_mails(env: dict[str, str], cwd: Path, *args: str) -> dict[str, Any]:
    """``python -m djsite.send_mails ARGS``: the JSON its last line reports."""
    done = subprocess.run(
        [sys.executable, "-m", "djsite.send_mails", *args],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    found: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    return found
