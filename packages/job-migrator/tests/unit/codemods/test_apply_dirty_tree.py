"""``migrator apply --write`` on a tree with uncommitted changes: all of the migration or nothing.

A file with uncommitted changes is never rewritten (without --allow-dirty).
When the migration needs to change one, ``--write`` writes nothing, says which
file(s) in one line and exits 2; when it does not, everything is written.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from inventory.models import Idempotency, Inventory, Pattern
from migrator.cli.apply import apply

FILES = {
    "jobs.py": "def resize(p):\n    return p\n\n\ndef charge(o):\n    return o\n",
    "views_a.py": "from jobs import resize\n\n\ndef a(p):\n    resize(p)\n",
    "views_b.py": "from jobs import resize\n\n\ndef b(p):\n    resize(p)\n",
    "billing.py": "from jobs import charge\n\n\ndef pay(o):\n    charge(o)\n",
}
SITES = [
    ("views_a.py", "    resize(p)", Pattern.DIRECT_CALL, "jobs.resize"),
    ("views_b.py", "    resize(p)", Pattern.DIRECT_CALL, "jobs.resize"),
    ("billing.py", "    charge(o)", Pattern.DIRECT_CALL, "jobs.charge"),  # needs a key: stays
]


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


@pytest.fixture
def repo(tmp_path: Path, build_inventory: Callable[..., Inventory]) -> Path:
    for name, text in FILES.items():
        (tmp_path / name).write_text(text)
    git(tmp_path, "init", "-q", "-b", "main")
    git(tmp_path, "config", "user.email", "dev@example.com")
    git(tmp_path, "config", "user.name", "Dev")
    git(tmp_path, "add", *FILES)
    git(tmp_path, "commit", "-qm", "app")
    inventory = build_inventory(tmp_path, SITES, {"jobs.charge": Idempotency.NEEDS_KEY})
    (tmp_path / ".migrator").mkdir()
    (tmp_path / ".migrator" / "inventory.json").write_text(inventory.model_dump_json())
    return tmp_path


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(apply, list(args), env={"COLUMNS": "250"})
    return result.exit_code, result.output


def texts(root: Path) -> dict[str, str]:
    return {name: (root / name).read_text() for name in FILES}


def test_a_dirty_file_the_migration_changes_stops_the_whole_write(repo: Path) -> None:
    (repo / "views_b.py").write_text(FILES["views_b.py"] + "# work in progress\n")
    before = texts(repo)

    code, out = run(str(repo), "--write")

    assert code == 2, out
    assert len(out.strip().splitlines()) == 1, out  # one line, no partial tables
    assert "nothing written" in out and "views_b.py" in out and "views_a.py" not in out
    assert "commit or stash" in out and "--allow-dirty" in out
    assert texts(repo) == before  # views_a.py and jobs.py were not migrated without views_b.py


def test_the_diff_says_that_write_would_write_nothing(repo: Path) -> None:
    (repo / "views_b.py").write_text(FILES["views_b.py"] + "# work in progress\n")

    code, out = run(str(repo))

    assert code == 1, out
    assert "--write writes nothing until these are committed or stashed: views_b.py" in out


def test_a_dirty_file_the_migration_leaves_alone_does_not_stop_it(repo: Path) -> None:
    (repo / "billing.py").write_text(FILES["billing.py"] + "# work in progress\n")

    code, out = run(str(repo), "--write")

    assert code == 0, out
    after = texts(repo)
    assert "resize.enqueue(p)" in after["views_a.py"] and "resize.enqueue(p)" in after["views_b.py"]
    assert after["billing.py"] == FILES["billing.py"] + "# work in progress\n"


def test_allow_dirty_writes_everything(repo: Path) -> None:
    (repo / "views_b.py").write_text(FILES["views_b.py"] + "# work in progress\n")

    code, out = run(str(repo), "--write", "--allow-dirty")

    assert code == 0, out
    after = texts(repo)
    assert "resize.enqueue(p)" in after["views_a.py"] and "resize.enqueue(p)" in after["views_b.py"]
    assert after["views_b.py"].endswith("# work in progress\n")
