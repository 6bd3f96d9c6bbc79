"""Dirty files refused, stale files rescanned or refused, review branches built beside the checkout."""

from __future__ import annotations

import hashlib
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from codemods import ApplyOptions, CodemodError, Status, batches, create_branches, plan_apply
from inventory.models import Inventory, Pattern

Build = Callable[..., Inventory]

APP = "def resize(p):\n    return p\n\n\ndef notify(u):\n    return u\n\n\ndef view(p, u):\n    resize(p)\n    notify(u)\n    notify(p)\n"
SITES = [
    ("app.py", "    resize(p)", Pattern.DIRECT_CALL, "app.resize"),
    ("app.py", "    notify(u)", Pattern.DIRECT_CALL, "app.notify"),
    ("app.py", "    notify(p)", Pattern.DIRECT_CALL, "app.notify"),
]


def git(root: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=root, check=True, capture_output=True, text=True
    ).stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    (tmp_path / "app.py").write_text(APP)
    git(tmp_path, "init", "-q", "-b", "main")
    git(tmp_path, "config", "user.email", "dev@example.com")
    git(tmp_path, "config", "user.name", "Dev")
    git(tmp_path, "add", "app.py")
    git(tmp_path, "commit", "-qm", "app")
    return tmp_path


def test_a_file_with_uncommitted_changes_is_refused(repo: Path, build_inventory: Build) -> None:
    (repo / "app.py").write_text(APP + "# wip\n")
    inventory = build_inventory(repo, SITES)

    refused = plan_apply(repo, inventory, scanner=None)
    allowed = plan_apply(repo, inventory, ApplyOptions(allow_dirty=True), scanner=None)

    assert refused.changes == [] and "uncommitted changes" in refused.refused["app.py"]
    assert {o.status for o in refused.outcomes} == {Status.SKIPPED}
    assert {o.status for o in allowed.outcomes} == {Status.REWRITTEN}


def test_a_stale_file_is_refused_when_it_cannot_be_rescanned(
    tmp_path: Path, build_inventory: Build
) -> None:
    (tmp_path / "app.py").write_text(APP)
    inventory = build_inventory(tmp_path, SITES).model_copy(
        update={"file_hashes": {"app.py": "0" * 64}}
    )

    result = plan_apply(tmp_path, inventory, scanner=None)

    assert result.changes == []
    assert "changed since the scan" in result.refused["app.py"]


def test_a_stale_file_is_rescanned_and_the_fresh_positions_are_used(
    tmp_path: Path, build_inventory: Build
) -> None:
    (tmp_path / "app.py").write_text(APP)
    old = build_inventory(tmp_path, SITES).model_copy(update={"file_hashes": {"app.py": "0" * 64}})
    (tmp_path / "app.py").write_text("# moved down\n\n" + APP)
    fresh = build_inventory(tmp_path, SITES).model_copy(
        update={
            "file_hashes": {
                "app.py": hashlib.sha256((tmp_path / "app.py").read_bytes()).hexdigest()
            }
        }
    )
    scanned: list[Path] = []

    def scanner(root: Path) -> Inventory:
        scanned.append(root)
        return fresh

    result = plan_apply(tmp_path, old, scanner=scanner)

    assert scanned == [tmp_path.resolve()] and result.rescanned == ["app.py"]
    assert {o.status for o in result.outcomes} == {Status.REWRITTEN}


def test_branch_has_one_commit_per_job_and_a_pr_text(repo: Path, build_inventory: Build) -> None:
    inventory = build_inventory(repo, SITES)

    result, [branch] = create_branches(repo, inventory, "move-jobs", scanner=None)

    assert branch.name == "move-jobs" and branch.jobs == ["app.resize", "app.notify"]
    log = git(repo, "log", "--format=%s", "main..move-jobs").splitlines()
    assert log == [
        "Move app.notify onto queue_runtime (idempotent, high confidence)",
        "Move app.resize onto queue_runtime (idempotent, high confidence)",
    ]
    assert git(repo, "show", "move-jobs:app.py") == result.changes[0].after
    assert (repo / "app.py").read_text() == APP and git(
        repo, "status", "--porcelain"
    ) == "?? .migrator/\n"
    pr = Path(branch.pr_path).read_text()
    assert "`app.resize`: idempotent" in pr and 'mode = "inline"' in pr and "| `app.py:12` |" in pr


def test_max_sites_splits_into_stacked_branches_smallest_risk_first(
    repo: Path, build_inventory: Build
) -> None:
    inventory = build_inventory(repo, SITES)

    _result, branches = create_branches(
        repo, inventory, "move", ApplyOptions(max_sites=1), scanner=None
    )

    assert [(b.name, b.jobs) for b in branches] == [
        ("move-1", ["app.resize"]),
        ("move-2", ["app.notify"]),
    ]
    assert git(repo, "rev-parse", "move-2~1") == git(repo, "rev-parse", "move-1")
    assert "Based on `move-1`" in Path(branches[1].pr_path).read_text()


def test_batches_keep_a_job_whole_even_above_the_limit(repo: Path, build_inventory: Build) -> None:
    result = plan_apply(repo, build_inventory(repo, SITES), scanner=None)

    assert [(b.jobs, b.sites) for b in batches(result, 1)] == [
        (["app.resize"], 1),
        (["app.notify"], 2),
    ]
    assert [(b.jobs, b.sites) for b in batches(result, 3)] == [(["app.resize", "app.notify"], 3)]


def test_an_existing_branch_is_never_overwritten(repo: Path, build_inventory: Build) -> None:
    git(repo, "branch", "taken")

    with pytest.raises(CodemodError, match="already exists"):
        create_branches(repo, build_inventory(repo, SITES), "taken", scanner=None)


def test_nothing_left_to_move_creates_no_branch(repo: Path, build_inventory: Build) -> None:
    first = plan_apply(repo, build_inventory(repo, SITES), scanner=None)
    (repo / "app.py").write_text(first.changes[0].after)
    git(repo, "commit", "-qam", "moved")
    sites = [(p, frag.replace("(", ".enqueue("), pat, job) for p, frag, pat, job in SITES]

    result, branches = create_branches(repo, build_inventory(repo, sites), "again", scanner=None)

    assert (result.changes, result.jobs, branches) == ([], [], [])
    assert {o.status for o in result.outcomes} == {Status.ALREADY}
    assert "again" not in git(repo, "branch", "--list")


TRIED = "def resize(p):\n    return p\n\n\ndef view(p):\n    try:\n        resize(p)\n    except OSError:\n        return None\n"


@pytest.mark.parametrize("version", ["1.5", "0.9", "garbled", ""])
def test_an_inventory_from_an_older_migrator_is_refused_whole_when_it_cannot_be_rescanned(
    tmp_path: Path, build_inventory: Build, version: str
) -> None:
    """An inventory written before the scan carried a site's surroundings would read as
    "no try around the call": apply refuses every file it names rather than move a call
    whose caller handles its failure, and says what to do."""
    (tmp_path / "app.py").write_text(TRIED)
    site = [("app.py", "        resize(p)", Pattern.DIRECT_CALL, "app.resize")]
    current = build_inventory(tmp_path, site)
    assert current.sites[0].surroundings.caught_at == [8]  # the scan's fact
    old = current.model_copy(update={"schema_version": version})
    old.sites[0].surroundings.caught_at = []  # an older scan never wrote it

    result = plan_apply(tmp_path, old, scanner=None)

    assert result.changes == []
    assert "written by an older migrator" in result.refused["app.py"]
    assert "run `migrator scan` again" in result.refused["app.py"]


def test_an_inventory_from_an_older_migrator_is_rescanned_and_the_fresh_facts_are_used(
    tmp_path: Path, build_inventory: Build
) -> None:
    (tmp_path / "app.py").write_text(TRIED)
    site = [("app.py", "        resize(p)", Pattern.DIRECT_CALL, "app.resize")]
    fresh = build_inventory(tmp_path, site)
    old = fresh.model_copy(update={"schema_version": "1.5"}, deep=True)
    old.sites[0].surroundings.caught_at = []
    scanned: list[Path] = []

    def scanner(root: Path) -> Inventory:
        scanned.append(root)
        return fresh

    result = plan_apply(tmp_path, old, scanner=scanner)

    assert scanned == [tmp_path.resolve()] and result.rescanned == ["app.py"]
    [outcome] = result.outcomes
    assert outcome.status is Status.MANUAL and outcome.lines == [8]
    assert "the caller handles the job's exceptions" in outcome.reason


def test_a_newer_inventory_is_read_as_it_is(tmp_path: Path, build_inventory: Build) -> None:
    """Readers ignore fields they do not know: a later minor version is not rescanned."""
    (tmp_path / "app.py").write_text(APP)
    newer = build_inventory(tmp_path, SITES).model_copy(update={"schema_version": "1.12"})

    def scanner(root: Path) -> Inventory:
        raise AssertionError("a current inventory must not be rescanned")

    result = plan_apply(tmp_path, newer, scanner=scanner)

    assert result.rescanned == [] and {o.status for o in result.outcomes} == {Status.REWRITTEN}
