"""Where a passing ``migrator loadtest`` certifies: the app's gate, said in its output.

Real CLI in subprocesses, real workers, real PostgreSQL and Redis. An app
folder (a ``pyproject.toml``, a module registering a non-idempotent job, a
sandbox settings module on a sandbox schema of its own):

- the app's ``[tool.queue_runtime]`` names its database and schema: the load
  test certifies there by default and says ``(the app's settings)``;
  ``migrator gate status --app`` then says certified yes, the sandbox has no
  certification;
- ``--certify-into URL`` (the app's table has its schema but no database):
  certified there, said ``(--certify-into)``, gate status yes;
- the app configures no database: certified into the sandbox's schema, and
  the output says so.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from queue_runtime import Settings
from queue_runtime.gate import certifications
from queue_runtime.runtime import Runtime
from queue_runtime.testing import isolated_settings, pg_admin_url
from tests.e2e._queue_env import fast_sandbox

pytestmark = [pytest.mark.pg, pytest.mark.redis, pytest.mark.slow]

JOB = "ltc_app.note"
APP = '''"""The app: one non-idempotent job."""

from queue_runtime import job


@job(name="ltc_app.note", idempotency="non_idempotent")
def note(n: int) -> int:
    return n
'''
SANDBOX = '''"""The sandbox: the queue from $LOADTEST_APP_SETTINGS, the app's jobs."""

import os

from queue_runtime import Settings, configure

configure(Settings.model_validate_json(os.environ["LOADTEST_APP_SETTINGS"]))

import ltc_app  # noqa: E402,F401
'''


@dataclass
class AppFolder:
    root: Path
    sandbox: Settings
    app: Settings

    def write_pyproject(self, table: str) -> None:
        (self.root / "pyproject.toml").write_text(f'[project]\nname = "ltc"\n{table}')

    def migrator(self, *args: str, timeout: float = 120) -> tuple[int, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("QUEUE_RUNTIME_")}
        env.update(LOADTEST_APP_SETTINGS=self.sandbox.model_dump_json(by_alias=True), COLUMNS="250")
        done = subprocess.run(
            [sys.executable, "-c", "from migrator.cli import main; main()", *args],
            cwd=self.root,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        return done.returncode, done.stdout + done.stderr

    def loadtest(self, *options: str) -> tuple[int, str, dict[str, object]]:
        report = self.root / "report.json"
        code, output = self.migrator(
            "loadtest", JOB, "--sandbox", "ltc_sandbox", "--rate", "10", "--duration", "1s",
            "--workers", "1", "--key", "note-{run}-{i}", "--sla-p99-ms", "15000",
            "--certify-by", "e2e", "--json", str(report), *options,
        )  # fmt: skip
        assert report.exists(), output
        return code, output, json.loads(report.read_text())


@pytest.fixture
def folder(tmp_path: Path) -> Iterator[AppFolder]:
    (tmp_path / "ltc_app.py").write_text(APP)
    (tmp_path / "ltc_sandbox.py").write_text(SANDBOX)
    with fast_sandbox("qr_ltc") as sandbox, isolated_settings(pg_admin_url()) as app:
        yield AppFolder(tmp_path, sandbox, app)


def certified_jobs(settings: Settings) -> list[tuple[str, str]]:
    runtime = Runtime(settings)
    try:
        return [(c.job, c.certified_by) for c in certifications(runtime)]
    finally:
        runtime.close()


def receipt_row(output: str) -> list[str]:
    """The job's row of ``gate status``: job, class, fingerprint, certified, by / at, rollout, runs."""
    rows = [[cell.strip() for cell in line.split("│")[1:-1]] for line in output.splitlines()]
    [row] = [row for row in rows if row[:1] == [JOB]]
    return row


def test_a_pass_certifies_into_the_app_s_own_settings_by_default(folder: AppFolder) -> None:
    folder.write_pyproject(
        f'[tool.queue_runtime]\ndatabase_url = "{folder.app.database_url}"\n'
        f'schema = "{folder.app.schema_name}"\n'
    )
    code, output, report = folder.loadtest()
    assert code == 0 and report["certified"], output
    where = f"/{folder.app.schema_name} (the app's settings)"
    assert "certified into " in output and where in output
    assert str(report["certified_into"]).endswith(where)
    assert certified_jobs(folder.app) == [(JOB, "e2e")]
    assert certified_jobs(folder.sandbox) == []
    code, output = folder.migrator("gate", "status", "--app", "ltc_app")
    assert code == 0, output
    row = receipt_row(output)
    assert row[1:2] + row[3:4] == ["non_idempotent", "yes"], output
    assert row[-1] == "async"


def test_certify_into_names_the_app_s_database(folder: AppFolder) -> None:
    folder.write_pyproject(f'[tool.queue_runtime]\nschema = "{folder.app.schema_name}"\n')
    url = folder.app.database_url or ""
    code, output, report = folder.loadtest("--certify-into", url)
    assert code == 0 and report["certified"], output
    assert f"/{folder.app.schema_name} (--certify-into)" in output
    assert certified_jobs(folder.app) == [(JOB, "e2e")] and certified_jobs(folder.sandbox) == []
    code, output = folder.migrator("gate", "status", "--app", "ltc_app", "--database-url", url)
    assert code == 0 and receipt_row(output)[3] == "yes", output


def test_an_app_without_a_database_is_certified_in_the_sandbox_and_told_so(
    folder: AppFolder,
) -> None:
    folder.write_pyproject("")
    code, output, report = folder.loadtest()
    assert code == 0 and report["certified"], output
    assert f"/{folder.sandbox.schema_name} (the sandbox: the app has no" in output
    assert "--certify-into URL names its database" in output
    assert certified_jobs(folder.sandbox) == [(JOB, "e2e")]
    assert certified_jobs(folder.app) == []


def test_a_pass_that_cannot_certify_into_the_app_exits_1_and_says_why(folder: AppFolder) -> None:
    missing = f"{folder.app.schema_name}_missing"  # never migrated: no certifications table
    folder.write_pyproject(
        f'[tool.queue_runtime]\ndatabase_url = "{folder.app.database_url}"\nschema = "{missing}"\n'
    )
    code, output, report = folder.loadtest()
    assert code == 1 and report["passed"] and not report["certified"], output
    assert "not certified into " in output and f"/{missing} (the app's settings): " in output
    assert certified_jobs(folder.sandbox) == [] and certified_jobs(folder.app) == []
