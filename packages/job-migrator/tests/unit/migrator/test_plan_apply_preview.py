"""MIGRATION_PLAN.md says, per site, what `migrator apply` will do and why, before it runs
(issue 21 item 5): apply's own dry run, not a guess."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from inventory.models import Idempotency, Pattern
from migrator.plan.service import run_plan
from tests.unit.codemods.conftest import build_inventory

TASKS = "def resize(path):\n    return path\n\n\ndef notify(user_id):\n    return user_id\n"
VIEWS = (
    "import tasks\n\n\ndef upload(path, user_id):\n    tasks.resize(path)\n"
    "    tasks.notify(user_id)\n"
)


def _project(tmp_path: Path) -> Path:
    (tmp_path / "tasks.py").write_text(TASKS)
    (tmp_path / "views.py").write_text(VIEWS)
    inventory = build_inventory(
        tmp_path,
        [
            ("views.py", "tasks.resize(path)", Pattern.DIRECT_CALL, "tasks.resize"),
            ("views.py", "tasks.notify(user_id)", Pattern.DIRECT_CALL, "tasks.notify"),
        ],
        verdicts={"tasks.notify": Idempotency.NON_IDEMPOTENT},
    )
    inventory.file_hashes = {
        name: hashlib.sha256((tmp_path / name).read_bytes()).hexdigest()
        for name in ("tasks.py", "views.py")
    }
    (tmp_path / ".migrator").mkdir()
    (tmp_path / ".migrator" / "inventory.json").write_text(inventory.model_dump_json())
    return tmp_path


def test_the_plan_lists_what_apply_will_do_at_each_site_and_why(tmp_path: Path) -> None:
    root = _project(tmp_path)

    run_plan(root)

    text = (root / "MIGRATION_PLAN.md").read_text()
    section = text[text.index("## What `migrator apply` will do, site by site") :]
    assert "- `views.py:5` direct_call, `tasks.resize`: **moves**" in section
    assert "- `views.py:6` direct_call, `tasks.notify`: **stays**: job is non_idempotent" in section
    assert "--job tasks.notify" in section  # the refusal names what would move it
    preview = json.loads((root / ".migrator" / "plan.json").read_text())["apply_preview"]
    assert [(p["site"], p["outcome"]) for p in preview] == [
        ("views.py:5", "moves"),
        ("views.py:6", "stays"),
    ]
    assert not (root / "tasks.py").read_text().count("@job")  # a dry run: nothing written


def test_the_preview_is_regenerated_and_a_note_under_it_is_kept(tmp_path: Path) -> None:
    root = _project(tmp_path)
    run_plan(root)
    path = root / "MIGRATION_PLAN.md"
    path.write_text(
        path.read_text().replace(
            "`--write` makes it. <!-- plan:apply-preview:intro -->\n",
            "`--write` makes it. <!-- plan:apply-preview:intro -->\n\nreviewed by Ana\n",
        )
    )

    run_plan(root)
    run_plan(root)

    text = path.read_text()
    assert text.count("`tasks.resize`: **moves**") == 1
    assert text.count("reviewed by Ana") == 1


def test_a_file_changed_since_the_scan_is_said_so_not_guessed(tmp_path: Path) -> None:
    root = _project(tmp_path)
    (root / "views.py").write_text(VIEWS + "\n# edited after the scan\n")

    run_plan(root)

    section = (root / "MIGRATION_PLAN.md").read_text().split("site by site")[1]
    assert "**moves**" not in section
    assert "changed since the scan" in section


def test_an_already_moved_site_says_so_once(tmp_path: Path) -> None:
    (tmp_path / "tasks.py").write_text(
        "from queue_runtime import job\n\n\n@job(idempotent=True)\ndef resize(path):\n"
        "    return path\n"
    )
    (tmp_path / "views.py").write_text(
        "import tasks\n\n\ndef upload(path):\n    tasks.resize.enqueue(path)\n"
    )
    inventory = build_inventory(
        tmp_path, [("views.py", "tasks.resize.enqueue(path)", Pattern.ENQUEUE, "tasks.resize")]
    )
    (tmp_path / ".migrator").mkdir()
    (tmp_path / ".migrator" / "inventory.json").write_text(inventory.model_dump_json())

    run_plan(tmp_path)

    text = (tmp_path / "MIGRATION_PLAN.md").read_text()
    line = next(ln for ln in text.splitlines() if ln.startswith("- `views.py:5`"))
    assert "`tasks.resize`: **already moved**: enqueues a queue_runtime @job <!--" in line
    assert text.count("already moved: ") == 0
