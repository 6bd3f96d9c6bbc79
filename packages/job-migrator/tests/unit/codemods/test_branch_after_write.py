"""``apply --write`` then ``apply --branch`` (the README's order); the PR text's evidence and workers.

Branches are planned from HEAD's content, so what ``--write`` left uncommitted
is what they commit; the PR text renders each moved job's evidence from the
plan's own records (not "(no longer in the inventory)"), and says what the
workers need for this app.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

from codemods import create_branches, plan_apply, write
from codemods._changes import pr
from inventory.models import Effect, EffectKind, Evidence, Inventory, Location, Pattern

Build = Callable[..., Inventory]

APP = "def resize(p):\n    return p\n\n\ndef view(p):\n    resize(p)\n"
SITES = [("app.py", "    resize(p)", Pattern.DIRECT_CALL, "app.resize")]


def git(root: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=root, check=True, capture_output=True, text=True
    ).stdout


def _repo(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).write_text(text)
    git(root, "init", "-q", "-b", "main")
    git(root, "-c", "user.email=d@e", "-c", "user.name=D", "add", ".")
    git(root, "-c", "user.email=d@e", "-c", "user.name=D", "commit", "-qm", "app")
    return root


def test_write_then_branch_commits_what_was_written(tmp_path: Path, build_inventory: Build) -> None:
    repo = _repo(tmp_path, {"app.py": APP})
    inventory = build_inventory(repo, SITES)
    write(plan_apply(repo, inventory, scanner=None))
    written = (repo / "app.py").read_text()

    result, [branch] = create_branches(repo, inventory, "move", scanner=None)

    assert branch.jobs == ["app.resize"] and result.root == str(repo.resolve())
    assert git(repo, "show", "move:app.py") == written  # HEAD + the rewrite
    assert git(repo, "status", "--porcelain", "--", "app.py") == " M app.py\n"  # left as it was


def test_the_pr_text_shows_the_plans_evidence_and_what_workers_need(
    tmp_path: Path, build_inventory: Build
) -> None:
    flask = "from flask import Flask\n\napp = Flask(__name__)\n"
    repo = _repo(tmp_path, {"app.py": APP, "web.py": flask})
    inventory = build_inventory(repo, SITES)
    inventory.jobs[0].evidence = [Evidence(message="only reads its argument")]
    inventory.jobs[0].effects = [
        Effect(kind=EffectKind.DB_READ, api="db.get", location=Location(path="app.py", line=2))
    ]
    stranger = inventory.model_copy(update={"jobs": []})  # the caller's inventory lacks the job

    result, [branch] = create_branches(repo, inventory, "move", scanner=None)

    text = pr.render("move", ["app.resize"], result, stranger)

    assert [j.qualname for j in result.records] == ["app.resize"]
    assert "(no longer in the inventory)" not in text
    assert "- only reads its argument" in text and "effect `db_read` via `db.get`" in text
    assert "## What the workers need" in text and "--flask-app web:app" in result.worker
    assert "--flask-app web:app" in Path(branch.pr_path).read_text()
