"""SARIF 2.1.0: the parts of the schema GitHub code scanning relies on."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from inventory import Inventory
from migrator.render.scan import ReportView, render_sarif

LEVELS = {"none", "note", "warning", "error"}


def document(inventory: Inventory, baseline_given: bool = False) -> dict[str, Any]:
    return json.loads(render_sarif(ReportView(inventory, baseline_given=baseline_given)))


def check_required(obj: dict[str, Any], *keys: str) -> None:
    missing = [key for key in keys if key not in obj]
    assert not missing, f"missing {missing} in {sorted(obj)}"


def test_top_level_and_driver_follow_the_schema(inventory: Inventory) -> None:
    sarif = document(inventory)
    check_required(sarif, "$schema", "version", "runs")
    assert sarif["version"] == "2.1.0" and len(sarif["runs"]) == 1
    driver = sarif["runs"][0]["tool"]["driver"]
    check_required(driver, "name", "version", "informationUri", "rules")
    ids = [rule["id"] for rule in driver["rules"]]
    assert ids == [
        "MIG-UNSAFE",
        "MIG-NON-IDEMPOTENT",
        "MIG-NEEDS-KEY",
        "MIG-UNKNOWN",
        "MIG-IDEMPOTENT",
    ]
    for rule in driver["rules"]:
        check_required(rule, "id", "shortDescription", "defaultConfiguration")
        assert rule["defaultConfiguration"]["level"] in LEVELS


def test_results_point_at_sites_with_rules_levels_and_fingerprints(inventory: Inventory) -> None:
    run = document(inventory)["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    by_fingerprint = {r["partialFingerprints"]["migratorSite/v1"]: r for r in run["results"]}
    assert set(by_fingerprint) == {"fp-refund", "fp-mail", "fp-mail-2", "fp-thumb"}
    refund = by_fingerprint["fp-refund"]
    check_required(refund, "ruleId", "level", "message", "locations")
    assert (refund["ruleId"], refund["level"]) == ("MIG-UNSAFE", "error")
    assert rules[refund["ruleIndex"]]["id"] == "MIG-UNSAFE"
    assert "shop.tasks.refund" in refund["message"]["text"]
    physical = refund["locations"][0]["physicalLocation"]
    assert physical["artifactLocation"] == {"uri": "shop/views.py", "uriBaseId": "%SRCROOT%"}
    assert physical["region"] == {"startLine": 12, "startColumn": 5}
    assert by_fingerprint["fp-mail"]["level"] == "warning"
    assert "baselineState" not in refund


def test_uris_are_relative_to_the_git_work_tree(tmp_path: Path, inventory: Inventory) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / "examples" / "shop").mkdir(parents=True)
    moved = inventory.model_copy(update={"root": str(tmp_path / "examples" / "shop")})
    run = document(moved)["runs"][0]
    uri = run["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert uri.startswith("examples/shop/shop/")
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == tmp_path.as_uri() + "/"


def test_baseline_state_and_errors_as_notifications(inventory: Inventory) -> None:
    inventory.sites[0].baselined = True
    run = document(inventory, baseline_given=True)["runs"][0]
    states = {
        r["partialFingerprints"]["migratorSite/v1"]: r["baselineState"] for r in run["results"]
    }
    assert states == {
        "fp-refund": "unchanged",
        "fp-mail": "new",
        "fp-mail-2": "new",
        "fp-thumb": "new",
    }
    (note,) = run["invocations"][0]["toolExecutionNotifications"]
    assert "shop/broken.py" in note["message"]["text"] and note["level"] == "warning"
