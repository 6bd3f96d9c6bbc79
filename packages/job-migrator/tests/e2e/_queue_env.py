"""A queue of its own for an e2e test: schema + Redis prefix in pyproject, a worker by PID.

Used by the apply e2e tests that run a real ``queue-runtime worker`` against
the shared PostgreSQL and Redis: everything they create is named
``qr_apply_<random>`` and removed afterwards (schema dropped, keys deleted
with SCAN, never FLUSHALL).
"""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from queue_runtime import Settings
from queue_runtime.pg import admin
from queue_runtime.testing import (
    delete_redis_prefix,
    isolated_settings,
    pg_admin_url,
    redis_test_url,
)


@contextmanager
def private_queue(app_root: Path) -> Iterator[str]:
    """Append ``[tool.queue_runtime]`` (queue mode, own schema and prefix) to the app's pyproject."""
    name = f"qr_apply_{secrets.token_hex(4)}"
    table = (
        f'\n[tool.queue_runtime]\ndatabase_url = "{pg_admin_url()}"\nredis_url = "{redis_test_url()}"\n'
        f'schema = "{name}"\nredis_prefix = "{name}"\npoll_interval = 0.2\n'
    )
    pyproject = app_root / "pyproject.toml"
    pyproject.write_text((pyproject.read_text() if pyproject.exists() else "") + table)
    try:
        yield name
    finally:
        _drop(name)


@contextmanager
def fast_sandbox(prefix: str, setup: Callable[[str], None] | None = None) -> Iterator[Settings]:
    """Queue-mode Settings on a fresh migrated schema and Redis prefix, short timings for tests.

    ``setup(schema)`` runs after the migration (sandbox tables of the test's app);
    the schema is dropped and the prefix's keys deleted afterwards.
    """
    with isolated_settings(
        pg_admin_url(),
        f"{prefix}_{secrets.token_hex(4)}",
        lease_ttl=2.0,
        poll_interval=0.1,
        shutdown_grace=2.0,
        rollout_refresh=0.1,
    ) as settings:
        if setup is not None:
            setup(settings.schema_name)
        yield settings


def _drop(name: str) -> None:
    admin.drop_schema(pg_admin_url(), name)
    delete_redis_prefix(redis_test_url(), name)


def app_env(app_root: Path, **extra: str) -> dict[str, str]:
    """The environment for the app's processes: importable from its root, never forced inline.

    An inherited ``QUEUE_RUNTIME_MODE`` is dropped; ``extra`` may set one.
    """
    env = {k: v for k, v in os.environ.items() if k != "QUEUE_RUNTIME_MODE"}
    return {**env, "PYTHONPATH": str(app_root), **extra}


def run_python(app_root: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args],
        cwd=app_root,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def migrate(app_root: Path, env: dict[str, str]) -> None:
    """``queue-runtime migrate`` for the app's configuration (its own schema)."""
    migrated = run_python(app_root, env, "-m", "queue_runtime.cli", "migrate")
    assert migrated.returncode == 0, migrated.stderr[-3000:]


@contextmanager
def worker(app_root: Path, env: dict[str, str], module: str) -> Iterator[Path]:
    """A ``queue-runtime worker`` for ``module``, stopped by its PID. Yields its log file."""
    log = app_root / "worker.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "queue_runtime.cli", "worker", module],
            cwd=app_root,
            env=env,
            stdout=out,
            stderr=out,
        )
    try:
        yield log
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)
