"""Issue 22 items 9 and 10: bad configuration and bad command lines, each one line and its code.

Every case runs the installed ``queue-runtime`` console script in a subprocess
against the real servers (the helpers of ``test_cli_failures``) and asserts the
single stderr line a user reads and the exit code a script checks.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from queue_runtime import Settings
from queue_runtime.cli import ExitCode
from queue_runtime.pg.connect import open_pool
from queue_runtime.pg.store import PgJobStore
from queue_runtime.store import Failure, JobStatus, NewJob
from tests.integration.test_cli_failures import DEADLINE, console_script, flags, one_line, run

pytestmark = [pytest.mark.pg, pytest.mark.redis]

APP = """
from queue_runtime import job

@job(pool="batch")
def greet(name: str) -> str:
    return f"hello {name}"
"""


@pytest.fixture
def app_dir(tmp_path: Path) -> Path:
    (tmp_path / "qr22_app.py").write_text(APP)
    return tmp_path


# -- item 9: configuration -----------------------------------------------------------


@pytest.mark.parametrize(
    ("table", "field"),
    [
        ("tenant_caps = { acme = 0 }", "tenant_caps.acme: 0"),
        ("tenant_caps = { acme = -1 }", "tenant_caps.acme: -1"),
        ("default_tenant_cap = 0", "default_tenant_cap: 0"),
    ],
)
def test_a_tenant_cap_below_one_is_refused(
    settings: Settings, tmp_path: Path, table: str, field: str
) -> None:
    # On main these were accepted: that tenant's jobs were deferred forever.
    (tmp_path / "pyproject.toml").write_text(f"[tool.queue_runtime]\n{table}\n")
    done = run(tmp_path, *flags(settings), "status")
    one_line(done, ExitCode.USAGE, field, "a tenant cap is at least 1")


SIX_FIELDS = "* * * * * *"  # cronsim reads a leading seconds field: it ticked every second


def test_a_six_field_cron_in_code_is_refused(settings: Settings, tmp_path: Path) -> None:
    app = f'from queue_runtime import job\n\n@job(pool="batch", cron="{SIX_FIELDS}")\ndef tick() -> None:\n    pass\n'
    (tmp_path / "qr22_cron_app.py").write_text(app)
    done = run(tmp_path, *flags(settings), "status", "--app", "qr22_cron_app")
    one_line(done, ExitCode.USAGE, f"cron '{SIX_FIELDS}': 6 field(s), expected five")


def test_a_six_field_cron_in_config_is_refused(settings: Settings, tmp_path: Path) -> None:
    table = f'[tool.queue_runtime.periodic."qr22_app.greet"]\ncron = "{SIX_FIELDS}"\n'
    (tmp_path / "pyproject.toml").write_text(table)
    done = run(tmp_path, *flags(settings), "status")
    one_line(done, ExitCode.USAGE, "periodic.qr22_app.greet: cron", "expected five")


# -- item 10: URLs -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("redis//bad", "has no scheme://"),
        ("http://user:secret@127.0.0.1:6379/0", "has scheme http://"),
        ("redis://127.0.0.1:abc/0", "'127.0.0.1:abc' is not host:port"),
        # redis-py read /abc as database 0: the worker served another database silently.
        ("redis://127.0.0.1:6379/abc", "database 'abc' is not a number"),
    ],
)
def test_a_malformed_redis_url_is_one_line_and_exit_2(
    settings: Settings, app_dir: Path, url: str, says: str
) -> None:
    done = run(app_dir, *flags(settings, redis_url=url), "worker", "qr22_app")
    line = one_line(done, ExitCode.USAGE, "Redis URL is malformed", says, "--redis-url")
    assert "secret" not in line


def test_a_redis_database_out_of_range_is_configuration_not_an_outage(
    settings: Settings, app_dir: Path
) -> None:
    url = "redis://127.0.0.1:6379/99"  # the server has 16 databases
    worker = run(app_dir, *flags(settings, redis_url=url), "worker", "qr22_app")
    one_line(worker, ExitCode.USAGE, "no database of the number", "/99", "--redis-url")
    listing = run(app_dir, *flags(settings, redis_url=url), "workers")
    one_line(listing, ExitCode.USAGE, "no database of the number", "--redis-url")


def test_a_postgresql_url_with_a_non_numeric_port_is_exit_2(
    settings: Settings, tmp_path: Path
) -> None:
    url = "postgresql://postgres:secret@127.0.0.1:abc/postgres"
    done = run(tmp_path, *flags(settings, database_url=url), "status")
    line = one_line(done, ExitCode.USAGE, "malformed", "port 'abc'", "--database-url")
    assert "secret" not in line


# -- item 10: output and arguments -----------------------------------------------------


def _dead_jobs(settings: Settings, count: int) -> None:
    pool = open_pool(settings, max_size=2)
    try:
        store = PgJobStore(pool, settings)
        store.enqueue_many([NewJob("qr22.gone", "batch", {"n": n}) for n in range(count)])
        for job in store.claim("batch", count, "qr22"):
            assert store.fail(Failure(job.id, job.attempt, f"error {job.id}")) is JobStatus.DEAD
    finally:
        pool.close()


def test_dlq_list_into_a_closed_pipe_ends_quietly(settings: Settings, tmp_path: Path) -> None:
    """``queue-runtime dlq list --json | head -1``: far more than a pipe holds, reader gone."""
    _dead_jobs(settings, 1000)
    argv = [console_script(), *flags(settings), "dlq", "list", "--limit", "1000", "--json"]
    with subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path
    ) as head:
        assert head.stdout is not None and head.stderr is not None
        assert head.stdout.readline().strip() == "["
        head.stdout.close()  # what head does after its line
        code = head.wait(timeout=DEADLINE)
        stderr = head.stderr.read()
    assert stderr == ""  # no BrokenPipeError traceback, no "Exception ignored"
    assert code == ExitCode.PIPE_CLOSED


def test_an_unknown_state_lists_the_valid_ones(settings: Settings, tmp_path: Path) -> None:
    done = run(tmp_path, *flags(settings), "jobs", "--state", "bogus")
    one_line(done, ExitCode.USAGE, "'bogus'", ", ".join(JobStatus), "--help")


def test_an_app_module_that_raises_is_reported_with_its_line(
    settings: Settings, tmp_path: Path
) -> None:
    app = "import os\nraise RuntimeError('boom at import: ' + os.sep)\n"
    (tmp_path / "qr22_raising_app.py").write_text(app)
    done = run(tmp_path, *flags(settings), "worker", "qr22_raising_app")
    line = one_line(done, ExitCode.USAGE, "RuntimeError: boom at import", "qr22_raising_app.py:2")
    assert "PYTHONPATH" not in line  # it was found: its own code failed
