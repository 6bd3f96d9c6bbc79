"""Exit statuses are ExitCode members, and a failure is one line on stderr and ERROR.

The mapping lives in one place, :mod:`migrator.cli.entry`; these tests hold every
command to it: the codes come from the enum (never an int literal), the error
roots of every package give one line without a traceback, and a bug does too.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

import migrator
from codemods import CodemodError
from inventory.errors import InventoryError
from migrator.cli import main
from migrator.cli.apply import apply
from migrator.cli.entry import MigratorCommand, failure_for
from migrator.errors import ExitCode, GateError, MigratorError, NoInventory
from queue_runtime.errors import QueueError

PACKAGE = Path(migrator.__file__).parent
APP = {
    "shop/__init__.py": "",
    "shop/billing.py": "import stripe\n\n\ndef refund(order_id):\n"
    "    stripe.Refund.create(charge=order_id)\n",
    "shop/views.py": "import threading\n\nfrom shop.billing import refund\n\n\n"
    "def view(request, order_id):\n"
    "    threading.Thread(target=refund, args=(order_id,)).start()\n",
}


@pytest.fixture
def app(tmp_path: Path) -> Path:
    root = tmp_path / "app"
    for rel, text in APP.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return root


def test_the_enum_keeps_the_documented_statuses() -> None:
    assert [int(code) for code in ExitCode] == [0, 1, 2]
    assert ExitCode["USAGE"] is ExitCode.ERROR  # an alias: one status, two names
    assert click.UsageError("bad option").exit_code == ExitCode.USAGE


def _name(func: ast.expr) -> str:
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")


def _exit_statuses(path: Path) -> list[str]:
    """Where ``path`` sets an exit status: exit() calls, and finish() or exit_code fed an int."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call) and _name(node.func) == "exit":
            found.append(f"exit() at {node.lineno}")
        if isinstance(node, ast.Call) and _name(node.func) == "finish":
            ints = [n for a in node.args for n in ast.walk(a) if isinstance(n, ast.Constant)]
            found += [f"finish(int) at {node.lineno}"] if ints else []
        if isinstance(node, ast.FunctionDef) and node.name in {"exit_code", "main"}:
            returns = ast.unparse(node.returns) if node.returns else "None"
            found += [f"{node.name} -> {returns}"] if returns not in {"ExitCode", "None"} else []
    return found


def test_every_exit_status_is_an_exit_code_member() -> None:
    """Commands end through finish(ExitCode) (mypy holds the type); finish() alone exits."""
    found = {
        str(path.relative_to(PACKAGE)): statuses
        for path in sorted(PACKAGE.rglob("*.py"))
        if (statuses := _exit_statuses(path))
    }
    assert {name: len(statuses) for name, statuses in found.items()} == {
        "cli/entry.py": 1,  # finish() itself
    }, found


def test_only_the_entry_point_subclasses_click_exceptions() -> None:
    owners = set()
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef) and any(
                "Exception" in ast.unparse(base) and "click" in ast.unparse(base)
                for base in node.bases
            ):
                owners.add(f"{path.relative_to(PACKAGE)}:{node.name}")
    assert owners == {"cli/entry.py:CommandFailed"}


def test_scan_statuses_are_the_enums(app: Path) -> None:
    runner = CliRunner()
    findings = runner.invoke(main, ["scan", str(app), "--no-cache", "--fail-on", "unsafe"])
    assert findings.exit_code is ExitCode.FINDINGS, findings.output
    usage = runner.invoke(main, ["scan", str(app), "--update-baseline"])
    assert usage.exit_code == ExitCode.USAGE
    stopped = runner.invoke(main, ["scan", str(app), "-o", str(app / "no" / "such" / "x")])
    assert stopped.exit_code is ExitCode.ERROR


def test_plan_and_apply_statuses_are_the_enums(tmp_path: Path) -> None:
    plan = CliRunner().invoke(main, ["plan", str(tmp_path)])
    assert plan.exit_code is ExitCode.ERROR
    nothing = CliRunner().invoke(apply, [str(tmp_path)])
    assert nothing.exit_code is ExitCode.FINDINGS, nothing.output
    alone = CliRunner().invoke(apply, [str(tmp_path), "--branch", "move"])  # run alone, mapped
    assert alone.exit_code is ExitCode.ERROR and alone.stderr.count("\n") == 1, alone.output


@pytest.mark.parametrize(
    ("error", "line"),
    [
        (NoInventory("no inventory at x: run `migrator scan .` first"), "no inventory at x"),
        (GateError("no database URL"), "no database URL"),
        (QueueError("job pool 'batch' is not configured"), "pool 'batch' is not configured"),
        (CodemodError("not inside a git repository"), "not inside a git repository"),
        (InventoryError("[tool.migrator]: bad\n  max_file_size\n    not an int"), "bad; max_fi"),
        (MigratorError(), "migrator failed."),
        (RuntimeError("boom"), "internal error: RuntimeError: boom"),
    ],
)
def test_a_failure_is_one_line_and_exit_2(error: Exception, line: str) -> None:
    @click.command(cls=MigratorCommand)
    def broken() -> None:
        raise error

    result = CliRunner().invoke(broken, [])
    assert result.exit_code is ExitCode.ERROR == failure_for(error).code
    (shown,) = result.stderr.splitlines()
    assert shown.startswith("Error: ") and line in shown
    assert result.stdout == ""


def test_an_operational_error_in_a_fresh_process_has_no_traceback(app: Path) -> None:
    (app / "pyproject.toml").write_text("[tool.migrator]\nmax_file_size = 'big'\n")
    done = subprocess.run(
        [sys.executable, "-c", "from migrator.cli import main; main()", "scan", str(app)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == ExitCode.ERROR
    (line,) = done.stderr.splitlines()
    assert line.startswith("Error: ") and "[tool.migrator]" in line
    assert "Traceback" not in done.stderr and done.stdout == ""


def test_the_mapping_does_not_make_scan_import_codemods_or_the_runtime() -> None:
    probe = (
        "import sys, migrator.cli; "
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'codemods', 'queue_runtime'}))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "[]", done.stderr
