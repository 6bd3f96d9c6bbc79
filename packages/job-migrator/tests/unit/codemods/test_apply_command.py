"""``migrator apply`` through click: options, output, exit codes."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from inventory.models import Idempotency, Inventory, Pattern
from migrator.cli.apply import apply

APP = "def resize(p):\n    return p\n\n\ndef charge(o):\n    return o\n\n\ndef view(p, o):\n    resize(p)\n    charge(o)\n"


@pytest.fixture
def project(tmp_path: Path, build_inventory: Callable[..., Inventory]) -> Path:
    (tmp_path / "app.py").write_text(APP)
    sites = [
        ("app.py", "    resize(p)", Pattern.DIRECT_CALL, "app.resize"),
        ("app.py", "    charge(o)", Pattern.DIRECT_CALL, "app.charge"),
    ]
    inventory = build_inventory(tmp_path, sites, {"app.charge": Idempotency.NEEDS_KEY})
    (tmp_path / ".migrator").mkdir()
    (tmp_path / ".migrator" / "inventory.json").write_text(inventory.model_dump_json())
    return tmp_path


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(apply, list(args), env={"COLUMNS": "250"})
    return result.exit_code, result.output


def test_diff_is_the_default_and_writes_nothing(project: Path) -> None:
    code, out = run(str(project))

    assert code == 0
    assert "+    resize.enqueue(p)" in out and "needs an idempotency key" in out
    assert (project / "app.py").read_text() == APP


def test_write_applies_and_a_second_run_has_nothing_to_do(project: Path) -> None:
    code, out = run(str(project), "--write")
    assert code == 0 and "wrote 1 file(s)" in out
    assert "    resize.enqueue(p)\n    charge(o)\n" in (project / "app.py").read_text()

    code, out = run(str(project), "--write")  # the inventory is stale now: positions are re-checked
    assert code == 1 and "would change" not in out and "wrote 0 file(s)" in out


def test_key_option_moves_a_needs_key_job(project: Path) -> None:
    code, out = run(str(project), "--key", "app.charge=charge-{o}", "--job", "app.charge")

    assert code == 0
    assert '+    charge.enqueue(o, idempotency_key=f"charge-{o}")' in out
    assert "resize.enqueue" not in out


def test_malformed_key_is_a_usage_error(project: Path) -> None:
    code, out = run(str(project), "--key", "app.charge")

    assert code == 2 and "expected JOB=TEMPLATE" in out


def test_branch_outside_git_fails_with_status_2(project: Path) -> None:
    code, out = run(str(project), "--branch", "move")

    assert code == 2 and "not inside a git repository" in out


def test_codemods_public_api_is_exactly_its_all() -> None:
    import codemods

    public = {name for name in vars(codemods) if not name.startswith("_")} - {"api", "examples"}
    assert (
        public
        == set(codemods.__all__)
        == {
            "ApplyOptions",
            "ApplyResult",
            "ArgumentCrossing",
            "BranchReport",
            "CodemodError",
            "Crossing",
            "FileChange",
            "JobBatch",
            "SiteOutcome",
            "Status",
            "batches",
            "create_branches",
            "load_inventory",
            "plan_apply",
            "write",
        }
    )


def test_an_unknown_job_is_named_and_nothing_applies(project: Path) -> None:
    code, out = run(str(project), "--job", "app.nope")

    assert code == 1 and "not in the inventory: app.nope" in out
