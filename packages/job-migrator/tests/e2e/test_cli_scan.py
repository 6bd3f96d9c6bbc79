"""`migrator scan` as a user runs it: formats, exit codes, baselines, bad input."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from inventory import Inventory
from migrator.cli import main

MIGRATOR = Path(sys.executable).parent / "migrator"

APP = {
    "shop/__init__.py": "",
    "shop/billing.py": "import stripe\n\n\ndef refund_order(order_id):\n"
    "    stripe.Refund.create(charge=order_id)\n",
    "shop/media.py": "def thumbnail(path):\n"
    "    with open(path + '.thumb', 'w') as out:\n"
    "        out.write('resized')\n",
    "shop/views.py": """\
import threading

from shop.billing import refund_order
from shop.media import thumbnail


def refund_view(request, order_id):
    threading.Thread(target=refund_order, args=(order_id,)).start()


def upload_view(request, path):
    threading.Thread(target=thumbnail, args=(path,)).start()
""",
}
NEW_UNSAFE_VIEW = """

def refund_again_view(request, order_id):
    threading.Thread(target=refund_order, args=(order_id,)).start()
"""


@pytest.fixture
def app(tmp_path: Path) -> Path:
    root = tmp_path / "app"
    for rel, text in APP.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return root


def run(*args: str | Path) -> Result:
    return CliRunner(env={"COLUMNS": "200"}).invoke(main, ["scan", *map(str, args)])


def test_default_table_lists_jobs_verdicts_and_sites(app: Path) -> None:
    result = run(app)
    assert result.exit_code == 0, result.output
    assert "shop.billing.refund_order" in result.output and "unsafe" in result.output
    assert "shop/views.py:8" in result.output
    assert "2 jobs, 2 sites" in result.output


def test_json_output_is_the_inventory(app: Path) -> None:
    result = run(app, "--format", "json")
    inventory = Inventory.model_validate_json(result.stdout)
    assert {job.qualname for job in inventory.jobs} == {
        "shop.billing.refund_order",
        "shop.media.thumbnail",
    }
    assert inventory.schema_version == "1.12"


def test_sarif_and_markdown_written_to_a_file(app: Path, tmp_path: Path) -> None:
    assert run(app, "--format", "sarif", "-o", tmp_path / "out.sarif").exit_code == 0
    sarif = json.loads((tmp_path / "out.sarif").read_text(encoding="utf-8"))
    assert sarif["version"] == "2.1.0"
    assert {r["ruleId"] for r in sarif["runs"][0]["results"]} == {"MIG-UNSAFE", "MIG-IDEMPOTENT"}
    assert run(app, "--format", "markdown", "-o", tmp_path / "out.md").exit_code == 0
    assert "## Unsafe" in (tmp_path / "out.md").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("threshold", "code"), [("unsafe", 1), ("non_idempotent", 1), ("idempotent", 1), (None, 0)]
)
def test_fail_on_exit_codes(app: Path, threshold: str | None, code: int) -> None:
    args = ["--fail-on", threshold] if threshold else []
    assert run(app, *args).exit_code == code


def test_fail_on_ignores_verdicts_below_the_threshold(app: Path) -> None:
    (app / "shop" / "views.py").write_text(
        APP["shop/views.py"].replace("target=refund_order", "target=thumbnail")
    )
    assert run(app, "--fail-on", "needs_key").exit_code == 0


def test_baseline_accepts_known_findings_and_fails_on_new_ones(app: Path, tmp_path: Path) -> None:
    baseline = tmp_path / "baseline.json"
    written = run(app, "--baseline", baseline, "--update-baseline", "--fail-on", "unsafe")
    assert written.exit_code == 0 and len(json.loads(baseline.read_text())["fingerprints"]) == 2
    views = app / "shop" / "views.py"
    views.write_text("# moved down\n\n" + views.read_text(encoding="utf-8"), encoding="utf-8")
    accepted = run(app, "--baseline", baseline, "--fail-on", "unsafe")
    assert accepted.exit_code == 0 and "(baseline)" in accepted.output
    views.write_text(views.read_text(encoding="utf-8") + NEW_UNSAFE_VIEW, encoding="utf-8")
    assert run(app, "--baseline", baseline, "--fail-on", "unsafe").exit_code == 1
    sarif = json.loads(run(app, "--baseline", baseline, "--format", "sarif").stdout)
    states = sorted(r["baselineState"] for r in sarif["runs"][0]["results"])
    assert states == ["new", "unchanged", "unchanged"]


def test_unparsable_files_are_listed_and_do_not_fail_the_scan(app: Path) -> None:
    (app / "shop" / "broken.py").write_text("def f(:\n", encoding="utf-8")
    result = run(app, "--fail-on", "unknown", "--format", "json")
    (error,) = Inventory.model_validate_json(result.stdout).errors
    assert (error.path, error.kind) == ("shop/broken.py", "syntax")
    assert "shop/broken.py" in run(app).output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--format", "xml"], "Invalid value for '--format'"),
        (["--fail-on", "scary"], "Invalid value for '--fail-on'"),
        (["--update-baseline"], "--update-baseline needs --baseline FILE"),
    ],
)
def test_usage_errors_exit_2(app: Path, args: list[str], message: str) -> None:
    result = run(app, *args)
    assert result.exit_code == 2 and message in result.output


def test_missing_path_exits_2(tmp_path: Path) -> None:
    result = run(tmp_path / "nowhere")
    assert result.exit_code == 2 and "does not exist" in result.output


def test_unwritable_output_exits_2_with_a_message(app: Path, tmp_path: Path) -> None:
    result = run(app, "-o", tmp_path / "no" / "such" / "dir" / "report.txt")
    assert result.exit_code == 2 and "cannot write" in result.output


def test_bad_baseline_and_bad_configuration_exit_2_with_a_message(
    app: Path, tmp_path: Path
) -> None:
    (tmp_path / "baseline.json").write_text("[]", encoding="utf-8")
    bad_baseline = run(app, "--baseline", tmp_path / "baseline.json")
    assert (
        bad_baseline.exit_code == 2
        and "is not a migrator-baseline/v1 document" in bad_baseline.output
    )
    (app / "pyproject.toml").write_text(
        "[tool.migrator]\nmax_file_size = 'big'\n", encoding="utf-8"
    )
    bad_config = run(app)
    assert bad_config.exit_code == 2 and "[tool.migrator]" in bad_config.output


def test_the_installed_command_in_a_fresh_process(app: Path) -> None:
    """The console script, its exit status and its quiet stderr, without click's test runner."""
    done = subprocess.run(
        [str(MIGRATOR), "scan", str(app), "--format", "json", "--fail-on", "unsafe", "--no-cache"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1, done.stderr
    assert Inventory.model_validate_json(done.stdout).stats.files_scanned == 4
    assert done.stderr == ""


def test_an_unexpected_failure_is_a_message_and_exit_2(
    app: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def explode(*args: object) -> None:
        raise RuntimeError("classifier exploded")

    monkeypatch.setattr("migrator.cli.scan.scan_project", explode)
    result = run(app)
    assert result.exit_code == 2
    assert "internal error: RuntimeError: classifier exploded" in result.output
