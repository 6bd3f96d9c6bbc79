"""``migrator gate`` and ``migrator rollout`` with CliRunner, against a real migrated schema."""

from __future__ import annotations

import importlib
import json
import secrets
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psycopg
import pytest
from click.testing import CliRunner
from psycopg import sql

from migrator.cli import main
from migrator.loadtest.report import Latency, LoadTestReport
from migrator.loadtest.spec import LoadTestSpec
from queue_runtime import Settings, migrate
from queue_runtime.gate import certifications, fingerprint, get_rollout
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


@job(name="{app}.notify", idempotency="unknown")
def notify(user: int) -> int:
    return user
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
    table += "shadow_min_calls = 0\n"  # promotion on shadow evidence: test_rollout_promotion.py
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


def _report(path: Path, job: str, fp: str | None, passed: bool = True, **fields: Any) -> Path:
    """A load-test report as ``migrator loadtest --json`` writes it."""
    spec = LoadTestSpec(job=job, sandbox="sandbox", rate=10, duration=1)
    now = datetime.now(UTC)
    report = LoadTestReport(
        job=job,
        run_id="r1",
        fingerprint=fp,
        spec=spec,
        started_at=now,
        finished_at=now,
        enqueued=10,
        succeeded=10,
        passed=passed,
        reasons=[] if passed else ["2 job(s) lost"],
        latency=Latency(p99_ms=40),
        **fields,
    )
    path.write_text(report.model_dump_json())
    return path


def _fingerprint(project: Project, name: str) -> str:
    sys.path.insert(0, str(project.root))
    try:
        module = importlib.import_module(project.app)
    finally:
        sys.path.remove(str(project.root))
    return fingerprint(getattr(module, name))


def test_status_shows_the_gate_closed_until_certified(project: Project, tmp_path: Path) -> None:
    code, out = project.run("gate", "status", "--app", project.app)
    assert code == 0, out
    charge = next(line for line in out.splitlines() if f"{project.app}.charge" in line)
    assert "non_idempotent" in charge and "inline (gate closed)" in charge
    resize = next(line for line in out.splitlines() if f"{project.app}.resize" in line)
    assert "idempotent" in resize and "async" in resize

    job = f"{project.app}.charge"
    figures = _report(tmp_path / "figures.json", job, _fingerprint(project, "charge"))
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
    assert cert.report is not None and cert.report["run_id"] == "r1"  # stored with it

    code, out = project.run("gate", "status", "--app", project.app)
    charge = next(line for line in out.splitlines() if job in line)
    assert "yes" in charge and "alice" in charge and "gate closed" not in charge

    code, out = project.run("gate", "revoke", job)
    assert code == 0 and "revoked 1 certification(s)" in out
    code, out = project.run("gate", "status", "--app", project.app)
    charge = next(line for line in out.splitlines() if job in line)
    assert "revoked" in charge and "inline (gate closed)" in charge


def test_status_holds_a_job_moved_undecided_until_the_inventory_decides_it(
    project: Project, tmp_path: Path
) -> None:
    """``idempotency="unknown"`` (apply's held move): gated while the inventory the runtime
    reads has no verdict for it, or one that is not ``idempotent`` (another job's verdict
    does not count); open once it says ``idempotent``."""
    job, other = f"{project.app}.notify", f"{project.app}.resize"
    set_to = project.run("rollout", "set", job, "async", "--app", project.app)
    assert set_to[0] == 0, set_to[1]

    def row(verdicts: dict[str, str]) -> str:
        inventory = tmp_path / "inventory.json"
        jobs = [{"qualname": q, "idempotency": v} for q, v in verdicts.items()]
        inventory.write_text(json.dumps({"jobs": jobs}))
        with (project.root / "pyproject.toml").open() as f:
            table = f.read().split("inventory_path")[0].rstrip("\n") + "\n"
        table += f'inventory_path = "{inventory}"\n'
        (project.root / "pyproject.toml").write_text(table)
        code, out = project.run("gate", "status", "--app", project.app)
        assert code == 0, out
        return next(line for line in out.splitlines() if job in line)

    assert "inline (gate closed)" in row({})
    assert "inline (gate closed)" in row({other: "idempotent"})
    closed = row({job: "non_idempotent"})
    assert "non_idempotent" in closed and "inline (gate closed)" in closed
    opened = row({job: "idempotent"})
    assert "gate closed" not in opened and "async" in opened


def test_certify_needs_a_known_job_and_readable_figures(project: Project, tmp_path: Path) -> None:
    figures = tmp_path / "figures.json"
    figures.write_text("[1, 2]")
    args = ("--app", project.app, "--figures", str(figures), "--by", "alice")
    code, out = project.run("gate", "certify", f"{project.app}.charge", *args)
    assert code == 2 and "expected a JSON object" in out
    code, out = project.run("gate", "certify", "no.such.job", *args)
    assert code == 2 and "not a job of the --app module" in out


def test_certify_refuses_a_failed_empty_foreign_or_stale_report(
    project: Project, tmp_path: Path
) -> None:
    job = f"{project.app}.charge"
    fp = _fingerprint(project, "charge")
    empty = tmp_path / "empty.json"
    empty.write_text("{}")
    refused = {
        "the load test of": _report(tmp_path / "failed.json", job, fp, passed=False),
        "is not a load-test report": empty,
        "is the report of": _report(tmp_path / "other.json", f"{project.app}.resize", fp),
        "is stale": _report(tmp_path / "stale.json", job, "0" * 64),
    }
    for reason, report in refused.items():
        args = ("--app", project.app, "--figures", str(report), "--by", "alice")
        code, out = project.run("gate", "certify", job, *args)
        assert code == 2 and reason in out, out
        assert len(out.strip().splitlines()) == 1, out  # one line says why
    rt = _runtime(project)
    try:
        assert certifications(rt, job) == []
    finally:
        rt.close()


def _forged(path: Path, job: str, fp: str, spec_job: str | None = None, **fields: Any) -> Path:
    """A report edited by hand: its own ``"passed": true`` kept, its figures changed."""
    document = json.loads(_report(path, job, fp).read_text())
    document.update(fields)
    if spec_job is not None:
        document["spec"]["job"] = spec_job
    path.write_text(json.dumps(document))
    return path


def test_certify_recomputes_the_verdict_and_never_trusts_the_reports_passed(
    project: Project, tmp_path: Path
) -> None:
    job = f"{project.app}.charge"
    fp = _fingerprint(project, "charge")
    twice = {"key": "7", "keyed": False, "completions": 2, "executions": []}
    forged = {
        "no job was enqueued": {"enqueued": 0, "succeeded": 0},
        "50 job(s) lost": {"enqueued": 67, "lost": 50, "dead": 7},
        "completed more than once": {"duplicate_completions": [twice]},
        "do not add up": {"enqueued": 1000},
        "invalid: dead": {"dead": -7, "succeeded": 17},
    }
    for reason, fields in forged.items():
        report = _forged(tmp_path / "forged.json", job, fp, **fields)
        args = ("--app", project.app, "--figures", str(report), "--by", "mallory")
        code, out = project.run("gate", "certify", job, *args)
        assert code == 2 and reason in out, (reason, out)
        assert len(out.strip().splitlines()) == 1, out
    other = _forged(tmp_path / "spec.json", job, fp, spec_job=f"{project.app}.resize")
    args = ("--app", project.app, "--figures", str(other), "--by", "mallory")
    code, out = project.run("gate", "certify", job, *args)
    assert code == 2 and f"is the report of {project.app}.resize (spec.job)" in out, out
    rt = _runtime(project)
    try:
        assert certifications(rt, job) == []  # the gate of the non-idempotent job stays closed
    finally:
        rt.close()


def test_certify_stores_the_recomputed_figures(project: Project, tmp_path: Path) -> None:
    job = f"{project.app}.charge"
    report = _forged(tmp_path / "r.json", job, _fingerprint(project, "charge"), extra="x")
    args = ("--app", project.app, "--figures", str(report), "--by", "alice")
    assert project.run("gate", "certify", job, *args)[0] == 0
    rt = _runtime(project)
    try:
        [cert] = certifications(rt, job)
    finally:
        rt.close()
    assert cert.figures["passed"] is True and cert.figures["max_dead"] == 0
    assert cert.report is not None and "extra" not in cert.report


def test_rollout_set_and_status(project: Project) -> None:
    job = f"{project.app}.resize"
    code, out = project.run("rollout", "set", job, "25%", "--by", "bob", "--app", project.app)
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

    code, out = project.run("rollout", "set", job, "inline", "--app", project.app)
    assert code == 0 and f"{job}: inline" in out


def test_rollout_refuses_nonsense(project: Project) -> None:
    code, out = project.run("rollout", "set", f"{project.app}.resize", "sometimes")
    assert code == 2 and "expected inline, async or a percentage" in out


def test_no_database_url_is_an_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("QUEUE_RUNTIME_DATABASE_URL", raising=False)
    result = CliRunner().invoke(main, ["rollout", "status", "--project", str(tmp_path)])
    assert result.exit_code == 2 and "no database URL" in result.output


def test_rollout_set_refuses_an_unknown_job(project: Project) -> None:
    code, out = project.run("rollout", "set", "no.such.job", "50%", "--app", project.app)
    assert code == 2 and "no.such.job is not a job of --app" in out and "--force" in out
    code, out = project.run("rollout", "set", f"{project.app}.resiz", "50%", "--app", project.app)
    assert code == 2 and f"did you mean {project.app}.resize?" in out
    code, out = project.run("rollout", "set", "no.such.job", "50%")  # nothing to know it by
    assert code == 2 and "cannot tell whether no.such.job is a job" in out
    assert project.run("rollout", "status")[1].count("no.such.job") == 0


def test_rollout_set_knows_the_jobs_of_the_inventory(project: Project) -> None:
    inventory = project.root / ".migrator" / "inventory.json"
    inventory.parent.mkdir()
    from inventory.models import Confidence, Idempotency, Inventory, Job

    entry = Job(
        qualname="shop.mail.send_receipt",
        idempotency=Idempotency.NON_IDEMPOTENT,
        confidence=Confidence.HIGH,
    )
    inventory.write_text(Inventory(root=str(project.root), jobs=[entry]).model_dump_json())
    code, out = project.run("rollout", "set", "shop.mail.send_receipt", "25%")
    assert code == 0 and "shop.mail.send_receipt: 25%" in out
    code, out = project.run("rollout", "set", "shop.mail.send_recept", "25%")
    assert code == 2 and "did you mean shop.mail.send_receipt?" in out


def test_force_stages_a_rollout_and_unset_removes_it(project: Project) -> None:
    code, out = project.run("rollout", "set", "later.job", "inline", "--force", "--by", "ann")
    assert code == 0 and "later.job: inline" in out
    code, out = project.run("rollout", "unset", "later.job", "--by", "ann")
    assert code == 0 and "later.job: inline removed, follows the default (async)" in out
    code, out = project.run("rollout", "unset", "later.job")
    assert code == 2 and "later.job has no stored rollout" in out


def test_rollout_history_shows_who_when_from_what_to_what(project: Project) -> None:
    job = f"{project.app}.resize"
    for mode, who in (("25%", "ann"), ("async", "bob")):
        assert project.run("rollout", "set", job, mode, "--by", who, "--app", project.app)[0] == 0
    assert project.run("rollout", "unset", job, "--by", "cyd")[0] == 0
    code, out = project.run("rollout", "history", job)
    assert code == 0, out
    lines = [line for line in out.splitlines() if job in line]
    cells = [[cell.strip() for cell in line.split("│")[1:-1]] for line in lines]
    assert [row[2:6] for row in cells] == [
        ["async", "default", "cyd", "unset"],
        ["25%", "async", "bob", "set"],
        ["default", "25%", "ann", "set"],
    ]
    assert "no rollout changes recorded" in project.run("rollout", "history", "other.job")[1]


def test_rollout_status_shows_an_slo_rollback(project: Project) -> None:
    from queue_runtime.gate import slo_rollback

    job = f"{project.app}.charge"
    rt = _runtime(project)
    try:
        assert slo_rollback(rt, job, "slo:w1", "3 dead letters > 2 over 300s") is not None
    finally:
        rt.close()
    code, out = project.run("rollout", "status")
    assert code == 0, out
    line = next(line for line in out.splitlines() if job in line)
    assert "inline" in line and "slo:w1" in line and "SLO rollback: 3 dead letters" in out
