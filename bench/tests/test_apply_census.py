"""``bench.apply_census`` over a one-package census: every site of the inventory gets apply's
outcome beside its job's verdict, and nothing is written."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from bench import apply_census
from inventory import scan

FIXTURE = Path(__file__).parent / "fixtures" / "apply_why" / "tinyshop-1.0"


def test_each_site_gets_apply_outcome_and_its_verdict(tmp_path: Path) -> None:
    census, work = tmp_path / "census", tmp_path / "work"
    package = census / "tinyshop-1.0"
    shutil.copytree(FIXTURE, package)
    work.mkdir()
    inventory = scan(package, use_cache=False, write=False)
    (work / "tinyshop-1.0.inventory.json").write_text(inventory.model_dump_json())
    views = (package / "tinyshop" / "views.py").read_text()
    out = tmp_path / "apply.json"

    code = apply_census.main([str(census), str(work), "--json", str(out), "--examples", "2"])

    rows = {
        (r["site"], r["job"]): (r["verdict"], r["kind"])
        for r in json.loads(out.read_text())["sites"]
    }
    assert code == 0
    assert rows == {
        ("tinyshop/views.py:17", "tinyshop.jobs.publish_summary"): ("idempotent", "moved"),
        ("tinyshop/views.py:18", "tinyshop.jobs.append_audit"): (
            "non_idempotent",
            "non_idempotent",
        ),
        ("tinyshop/views.py:25", "tinyshop.jobs.publish_summary"): (
            "idempotent",
            "exceptions handled",
        ),
    }
    assert (package / "tinyshop" / "views.py").read_text() == views  # planned in memory only


def test_a_package_whose_plan_fails_is_reported_and_the_exit_status_says_so(
    tmp_path: Path,
) -> None:
    census, work = tmp_path / "census", tmp_path / "work"
    (census / "broken-1.0").mkdir(parents=True)
    work.mkdir()
    (work / "broken-1.0.inventory.json").write_text("{not json")
    out = tmp_path / "apply.json"

    code = apply_census.main([str(census), str(work), "--json", str(out)])

    report = json.loads(out.read_text())
    assert code == 1
    assert report["sites"] == []
    assert report["failed"][0].startswith("broken-1.0: ValidationError")
