"""`migrator scan`'s reports say per site what `migrator apply` will do and why, before it
runs (issue 21 item 5): apply's own dry run over the inventory just made, never a guess."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from migrator.cli import main

TASKS = """import smtplib


def resize(path: str) -> None:
    with open(path + ".thumb", "w") as handle:
        handle.write(path)


def notify(address: str) -> None:
    smtplib.SMTP("localhost").sendmail("shop@example.com", [address], "hello")
"""
VIEWS = """import threading

import tasks


def upload(path: str, address: str) -> None:
    threading.Thread(target=tasks.resize, args=(path,)).start()
    threading.Thread(target=tasks.notify, args=(address,)).start()
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "tasks.py").write_text(TASKS)
    (tmp_path / "views.py").write_text(VIEWS)
    return tmp_path


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args), env={"COLUMNS": "250"})
    return result.exit_code, result.output


def _row(out: str, job: str) -> str:
    return next(line for line in out.splitlines() if f" {job} " in line)


def test_the_table_says_which_sites_apply_moves_and_why_the_others_stay(project: Path) -> None:
    code, out = run("scan", str(project))

    assert code == 0
    assert "Apply" in out
    assert _row(out, "tasks.resize").rstrip(" │").endswith("moves")
    assert "stays: job is non_idempotent" in _row(out, "tasks.notify")
    assert "whole reason" in out  # where the cut reasons are read whole


def test_what_the_table_says_is_what_apply_then_does(project: Path) -> None:
    code, out = run("scan", str(project))
    assert code == 0 and "moves" in _row(out, "tasks.resize")

    code, _ = run("apply", str(project), "--write")

    assert code == 0
    views = (project / "views.py").read_text()
    assert "target=tasks.resize" not in views  # said "moves": moved
    assert ".enqueue(path)" in views
    assert "threading.Thread(target=tasks.notify" in views  # said "stays": stayed


def test_the_markdown_report_gives_each_site_its_whole_reason(project: Path) -> None:
    code, out = run("scan", str(project), "--format", "markdown")

    assert code == 0
    assert "`migrator apply` (its dry run, with its defaults) moves 1 of 2 sites" in out
    assert "- `views.py:7` via `thread`; `migrator apply`: **moves**" in out
    notify = next(line for line in out.splitlines() if line.startswith("- `views.py:8`"))
    assert "**stays**: job is non_idempotent" in notify
    assert "--job tasks.notify" in notify  # the one change that would move it, uncut


def test_the_json_inventory_stays_the_scans_contract(project: Path) -> None:
    code, out = run("scan", str(project), "--format", "json")

    assert code == 0
    inventory = json.loads(out)
    assert "apply" not in json.dumps(inventory["sites"]).lower().replace("apply_", "")
    assert {site["job"] for site in inventory["sites"]} == {"tasks.resize", "tasks.notify"}


def test_no_apply_preview_leaves_the_column_out(project: Path) -> None:
    code, out = run("scan", str(project), "--no-apply-preview")

    assert code == 0
    assert "Apply" not in out and "moves" not in out
    assert "tasks.resize" in out


def test_a_dry_run_that_cannot_run_is_one_line_and_the_scan_still_reports(
    project: Path,
) -> None:
    # apply also reads [tool.queue_runtime], which the scan does not: a shape it refuses
    # stops its dry run, not the scan
    (project / "pyproject.toml").write_text("[tool.queue_runtime]\njobs = 5\n")

    code, out = run("scan", str(project))

    assert code == 0
    assert "tasks.resize" in out and "tasks.notify" in out
    assert "Apply: no preview:" in out
    assert "Traceback" not in out
    assert "[tool.queue_runtime.jobs]" in out  # what to check


def test_apply_itself_says_what_to_check_in_that_table(project: Path) -> None:
    (project / "pyproject.toml").write_text("[tool.queue_runtime]\njobs = 5\n")
    assert run("scan", str(project), "--no-apply-preview")[0] == 0

    code, out = run("apply", str(project))

    assert code != 0
    assert "[tool.queue_runtime.jobs]: expected a table per job" in out
    assert "Traceback" not in out
