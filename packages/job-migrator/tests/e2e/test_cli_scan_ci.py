"""`migrator scan` in CI as a new user tries it: parse errors, one file, suppressions."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from inventory import Inventory
from migrator.cli import main

VIEWS = """\
import threading

import stripe


def refund_order(order_id):
    stripe.Refund.create(charge=order_id)


def refund_view(request, order_id):
    threading.Thread(target=refund_order, args=(order_id,)).start()
"""


@pytest.fixture
def app(tmp_path: Path) -> Path:
    root = tmp_path / "app"
    (root / "shop").mkdir(parents=True)
    (root / "pyproject.toml").write_text("[project]\nname = 'app'\n", encoding="utf-8")
    (root / "shop" / "__init__.py").write_text("", encoding="utf-8")
    (root / "shop" / "views.py").write_text(VIEWS, encoding="utf-8")
    (root / "shop" / "other.py").write_text(
        "import threading\n\ndef tick(): ...\n\ndef go(request):\n"
        "    threading.Thread(target=tick).start()\n",
        encoding="utf-8",
    )
    return root


def run(*args: str | Path) -> Result:
    return CliRunner(env={"COLUMNS": "200"}).invoke(main, ["scan", *map(str, args)])


def inventory(result: Result) -> Inventory:
    return Inventory.model_validate_json(result.stdout)


def test_a_file_that_does_not_parse_fails_the_run_unless_ignore_errors(app: Path) -> None:
    assert run(app, "--fail-on", "unsafe").exit_code == 1
    views = app / "shop" / "views.py"
    views.write_text(VIEWS + "\ndef broken(:\n", encoding="utf-8")
    failing = run(app, "--fail-on", "unsafe")
    assert failing.exit_code == 1 and "shop/views.py" in failing.output
    assert run(app).exit_code == 1  # even without --fail-on: the scan is incomplete
    listed = run(app, "--ignore-errors", "--format", "json")
    assert listed.exit_code == 0
    assert [(e.path, e.kind) for e in inventory(listed).errors] == [("shop/views.py", "syntax")]


def test_scan_one_file_reports_that_file_with_its_projects_verdicts(app: Path) -> None:
    result = run(app / "shop" / "views.py", "--format", "json", "--fail-on", "unsafe")
    assert result.exit_code == 1
    found = inventory(result)
    assert [(s.location.path, s.job, s.idempotency) for s in found.sites] == [
        ("shop/views.py", "shop.views.refund_order", "unsafe")
    ]
    assert (app / ".migrator" / "inventory.json").is_file()  # written at the project's root


def test_scan_a_path_that_is_neither_a_folder_nor_python(app: Path) -> None:
    result = run(app / "pyproject.toml")
    assert result.exit_code == 2 and "is not a folder or a Python file" in result.output


@pytest.mark.parametrize(
    ("comment", "hidden"),
    [
        ("  # migrator: ignore[thread]", True),
        ("  # migrator: ignore", True),
        ("  # migrator: ignore[on_commit]", False),
        ("  # noqa", False),
    ],
)
def test_a_suppression_comment_on_the_site(app: Path, comment: str, hidden: bool) -> None:
    views = app / "shop" / "views.py"
    views.write_text(VIEWS.replace(".start()\n", f".start(){comment}\n"), encoding="utf-8")
    result = run(app, "--format", "json", "--fail-on", "unsafe")
    paths = [s.location.path for s in inventory(result).sites]
    assert ("shop/views.py" not in paths) is hidden
    assert result.exit_code == (0 if hidden else 1)


def test_per_file_ignores_in_the_project_configuration(app: Path) -> None:
    (app / "pyproject.toml").write_text(
        '[tool.migrator.per-file-ignores]\n"shop/views.py" = ["thread"]\n', encoding="utf-8"
    )
    result = run(app, "--format", "json", "--fail-on", "unsafe")
    assert [s.location.path for s in inventory(result).sites] == ["shop/other.py"]
    assert result.exit_code == 0


def test_per_file_ignores_with_an_unknown_pattern_is_a_configuration_error(app: Path) -> None:
    (app / "pyproject.toml").write_text(
        '[tool.migrator.per-file-ignores]\n"shop/*" = ["threads"]\n', encoding="utf-8"
    )
    result = run(app)
    assert result.exit_code == 2 and "unknown pattern threads" in result.output
