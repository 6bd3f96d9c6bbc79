"""``migrator gate`` and ``migrator rollout`` with CliRunner, against a real migrated schema."""

from __future__ import annotations

import json
import secrets
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import psycopg
import pytest
from click.testing import CliRunner
from psycopg import sql

from migrator.cli import main
from queue_runtime import Settings, migrate
from queue_runtime.gate import certifications, get_rollout
from queue_runtime.runtime import Runtime
from tests.support import pg_admin_url

pytestmark = [pytest.mark.pg]

JOBS = """
from queue_runtime import job


@job(name="{app}.charge", idempotency="non_idempotent")
def charge(order: int) -> int:
    return order


@job(name="{app}.resize", idempotent=True)
def resize(image: int) -> int:
    return image
"""


@dataclass
class Project:
    root: Path
    app: str
    settings: Settings

    def run(self, *args: str) -> tuple[int, str]:
        result = CliRunner().invoke(main, [*args, "--project", str(self.root)])
        return result.exit_code, result.output


@pytest.fixture
def project(tmp_path: Path) -> Iterator[Project]:
    """An app folder: pyproject with its own migrated schema, an app module with two jobs."""
    name = f"gcli_{secrets.token_hex(4)}"
    (tmp_path / f"{name}.py").write_text(JOBS.replace("{app}", name))
    table = f'[tool.queue_runtime]\ndatabase_url = "{pg_admin_url()}"\nschema = "{name}"\n'
    (tmp_path / "pyproject.toml").write_text(table)
    settings = Settings(database_url=pg_admin_url(), schema=name)
    migrate(settings)
    try:
        yield Project(tmp_path, name, settings)
    finally:
        sys.modules.pop(name, None)
        with psycopg.connect(pg_admin_url(), autocommit=True) as conn:
            conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(name)))


def _runtime(project: Project) -> Runtime:
    return Runtime(project.settings)


def test_status_shows_the_gate_closed_until_certified(project: Project, tmp_path: Path) -> None:
    code, out = project.run("gate", "status", "--app", project.app)
    assert code == 0, out
    charge = next(line for line in out.splitlines() if f"{project.app}.charge" in line)
    assert "non_idempotent" in charge and "inline (gate closed)" in charge
    resize = next(line for line in out.splitlines() if f"{project.app}.resize" in line)
    assert "idempotent" in resize and "async" in resize

    figures = tmp_path / "figures.json"
    figures.write_text(json.dumps({"lost": 0, "duplicate_completions": 0, "p99_ms": 40}))
    job = f"{project.app}.charge"
    code, out = project.run(
        "gate", "certify", job, "--app", project.app, "--figures", str(figures), "--by", "alice"
    )
    assert code == 0, out
    assert f"certified {job}" in out and "by alice" in out
    rt = _runtime(project)
    try:
        [cert] = certifications(rt, job)
    finally:
        rt.close()
    assert (cert.certified_by, cert.figures["p99_ms"], cert.revoked_at) == ("alice", 40, None)

    code, out = project.run("gate", "status", "--app", project.app)
    charge = next(line for line in out.splitlines() if job in line)
    assert "yes" in charge and "alice" in charge and "gate closed" not in charge

    code, out = project.run("gate", "revoke", job)
    assert code == 0 and "revoked 1 certification(s)" in out
    code, out = project.run("gate", "status", "--app", project.app)
    charge = next(line for line in out.splitlines() if job in line)
    assert "revoked" in charge and "inline (gate closed)" in charge


def test_certify_needs_a_known_job_and_readable_figures(project: Project, tmp_path: Path) -> None:
    figures = tmp_path / "figures.json"
    figures.write_text("[1, 2]")
    args = ("--app", project.app, "--figures", str(figures), "--by", "alice")
    code, out = project.run("gate", "certify", f"{project.app}.charge", *args)
    assert code == 2 and "expected a JSON object" in out
    code, out = project.run("gate", "certify", "no.such.job", *args)
    assert code == 2 and "not a job of the --app module" in out


def test_rollout_set_and_status(project: Project) -> None:
    job = f"{project.app}.resize"
    code, out = project.run("rollout", "set", job, "25%", "--by", "bob")
    assert code == 0 and f"{job}: 25%" in out
    rt = _runtime(project)
    try:
        stored = get_rollout(rt, job)
    finally:
        rt.close()
    assert (stored.percent, stored.updated_by) == (25, "bob")

    code, out = project.run("rollout", "status")
    assert code == 0
    line = next(line for line in out.splitlines() if job in line)
    assert "25%" in line and "bob" in line
    assert "jobs without a stored rollout: async" in out

    code, out = project.run("rollout", "set", job, "inline")
    assert code == 0 and f"{job}: inline" in out


def test_rollout_refuses_nonsense(project: Project) -> None:
    code, out = project.run("rollout", "set", f"{project.app}.resize", "sometimes")
    assert code == 2 and "expected inline, async or a percentage" in out


def test_no_database_url_is_an_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("QUEUE_RUNTIME_DATABASE_URL", raising=False)
    result = CliRunner().invoke(main, ["rollout", "status", "--project", str(tmp_path)])
    assert result.exit_code == 2 and "no database URL" in result.output
