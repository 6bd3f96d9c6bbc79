"""Every bad configuration the ``queue-runtime`` console script meets: one line on stderr that
says what to check, a documented non-zero exit code, no traceback (``--debug`` shows it).

Each case runs the installed console script in a subprocess against the real
servers (or a port where nothing listens). The subprocess deadline is below
the 10 s pool wait: a wrong port must fail at once.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from queue_runtime import Settings
from queue_runtime.cli import ExitCode
from queue_runtime.testing import free_port

pytestmark = [pytest.mark.pg, pytest.mark.redis]
DEADLINE = 8.0  # seconds; the pool's own wait is 10 s

APP = """
from queue_runtime import job

@job(pool="batch")
def greet(name: str) -> str:
    return f"hello {name}"
"""


def console_script() -> str:
    found = Path(sys.executable).with_name("queue-runtime")
    return str(found) if found.exists() else shutil.which("queue-runtime") or "queue-runtime"


def run(cwd: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [console_script(), *argv], capture_output=True, text=True, timeout=DEADLINE, cwd=cwd
    )


def one_line(done: subprocess.CompletedProcess[str], code: ExitCode, *says: str) -> str:
    """The failure is exactly one stderr line, no traceback, naming each of ``says``."""
    lines = done.stderr.splitlines()
    assert done.returncode == code, done.stderr
    assert len(lines) == 1, done.stderr
    assert "Traceback" not in done.stderr and lines[0].startswith("error: ")
    for text in says:
        assert text in lines[0], lines[0]
    return lines[0]


@pytest.fixture
def app_dir(tmp_path: Path) -> Path:
    (tmp_path / "qr13b_app.py").write_text(APP)
    return tmp_path


def flags(settings: Settings, **changed: str) -> list[str]:
    values = {
        "database-url": settings.database_url or "",
        "schema": settings.schema_name,
        "redis-url": settings.redis_url or "",
        "redis-prefix": settings.redis_prefix,
    } | {k.replace("_", "-"): v for k, v in changed.items()}
    return [f"--{key}={value}" for key, value in values.items()]


COMMANDS = [
    ["status"],
    ["dlq", "list"],
    ["dlq", "show", "1"],
    ["jobs"],
    ["show", "1"],
    ["workers"],
    ["migrate"],
]


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: "-".join(c))
def test_postgres_unreachable_is_one_line_for_every_command(
    settings: Settings, tmp_path: Path, command: list[str]
) -> None:
    url = f"postgresql://postgres@127.0.0.1:{free_port()}/postgres"
    done = run(tmp_path, *flags(settings, database_url=url), *command)
    one_line(done, ExitCode.DATABASE, "PostgreSQL", "Connection refused", "--database-url")


def test_postgres_unreachable_at_worker_start(settings: Settings, app_dir: Path) -> None:
    url = f"postgresql://postgres@127.0.0.1:{free_port()}/postgres"
    done = run(app_dir, *flags(settings, database_url=url), "worker", "qr13b_app")
    one_line(done, ExitCode.DATABASE, "Connection refused", "--database-url")


def test_unknown_database(settings: Settings, tmp_path: Path) -> None:
    url = "postgresql://postgres@127.0.0.1:5432/qr13b_no_such_db"
    done = run(tmp_path, *flags(settings, database_url=url), "status")
    one_line(done, ExitCode.DATABASE, '"qr13b_no_such_db" does not exist', "database name")


@pytest.mark.parametrize("url", ["not a url", "postgresql://[::1", "postgres//localhost/db"])
def test_malformed_url_fails_at_once(settings: Settings, tmp_path: Path, url: str) -> None:
    done = run(tmp_path, *flags(settings, database_url=url), "dlq", "list")
    one_line(done, ExitCode.USAGE, "malformed", "--database-url")


def test_migrate_on_a_bad_url(settings: Settings, tmp_path: Path) -> None:
    url = "postgresql://postgres@127.0.0.1:5432/qr13b_no_such_db"
    done = run(tmp_path, *flags(settings, database_url=url), "migrate")
    line = one_line(done, ExitCode.DATABASE, "does not exist")
    assert "sqlalchemy" not in line.lower()


def test_unmigrated_schema(settings: Settings, tmp_path: Path) -> None:
    done = run(tmp_path, *flags(settings, schema="qr13b_never_migrated"), "jobs")
    one_line(done, ExitCode.DATABASE, "queue-runtime migrate", "--schema")


def test_unknown_pool(settings: Settings, app_dir: Path) -> None:
    done = run(app_dir, *flags(settings), "worker", "qr13b_app", "--pool", "nope")
    one_line(done, ExitCode.USAGE, "unknown pool(s) nope", "batch, transactional")


@pytest.fixture
def busy_port() -> Iterator[int]:
    holder = socket.socket()
    holder.bind(("0.0.0.0", 0))
    holder.listen()
    try:
        yield holder.getsockname()[1]
    finally:
        holder.close()


def test_busy_metrics_port(settings: Settings, app_dir: Path, busy_port: int) -> None:
    pytest.importorskip(
        "prometheus_client", reason="--metrics-port needs queue-runtime[prometheus]"
    )
    argv = ["worker", "qr13b_app", "--metrics-port", str(busy_port)]
    done = run(app_dir, *flags(settings), *argv)
    one_line(done, ExitCode.USAGE, f"--metrics-port {busy_port}", "in use")


def test_app_module_that_does_not_import(settings: Settings, tmp_path: Path) -> None:
    done = run(tmp_path, *flags(settings), "worker", "qr13b_missing_app")
    one_line(done, ExitCode.USAGE, "'qr13b_missing_app'", f"cwd {tmp_path}", "PYTHONPATH")


def test_app_module_whose_import_fails_inside(settings: Settings, tmp_path: Path) -> None:
    (tmp_path / "qr13b_broken_app.py").write_text("import qr13b_dependency_missing\n")
    done = run(tmp_path, *flags(settings), "worker", "qr13b_broken_app")
    one_line(done, ExitCode.USAGE, "'qr13b_dependency_missing' (imported by qr13b_broken_app)")


def test_redis_unreachable_at_worker_start(settings: Settings, app_dir: Path) -> None:
    url = f"redis://127.0.0.1:{free_port()}/0"
    done = run(app_dir, *flags(settings, redis_url=url), "worker", "qr13b_app")
    one_line(done, ExitCode.REDIS, url, "--redis-url", "Redis")


def test_redis_unreachable_for_workers(settings: Settings, tmp_path: Path) -> None:
    url = f"redis://127.0.0.1:{free_port()}/0"
    done = run(tmp_path, *flags(settings, redis_url=url), "workers")
    one_line(done, ExitCode.REDIS, "--redis-url")


def test_debug_shows_the_traceback(settings: Settings, tmp_path: Path) -> None:
    url = f"postgresql://postgres@127.0.0.1:{free_port()}/postgres"
    done = run(tmp_path, "--debug", *flags(settings, database_url=url), "status")
    assert done.returncode == ExitCode.DATABASE
    assert "Traceback (most recent call last)" in done.stderr
    assert "psycopg.OperationalError" in done.stderr  # the cause is shown too
    assert done.stderr.splitlines()[-1].startswith("error: ")


def test_version(tmp_path: Path) -> None:
    from importlib.metadata import version

    done = run(tmp_path, "--version")
    assert (done.returncode, done.stdout.strip()) == (
        0,
        f"queue-runtime {version('queue-runtime')}",
    )
