"""The pass over one file: one typed outcome per target, and it never raises."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from codemods import Status, _rewriter, plan_apply
from codemods._rewriter import rewrite_file
from codemods._types import Block, DefKind, Edit, Failed, Rewritten, Skipped, Target
from inventory.models import Inventory, Pattern

Build = Callable[..., Inventory]

SOURCE = "def resize(p):\n    return p\n\n\ndef view(p):\n    resize(p)\n    x = resize(p)\n"


def _targets(root: Path, build_inventory: Build) -> list[Target]:
    sites = [
        ("app.py", "    resize(p)", Pattern.DIRECT_CALL, "app.resize"),
        ("app.py", "x = resize", Pattern.DIRECT_CALL, "app.resize"),
    ]
    inventory = build_inventory(root, sites)
    [job] = inventory.jobs
    return [Target(s, job, DefKind.FUNCTION, qualpath="resize") for s in inventory.sites]


def test_each_target_gets_its_outcome(
    write_files: Callable[[dict[str, str]], Path], build_inventory: Build
) -> None:
    targets = _targets(write_files({"app.py": SOURCE}), build_inventory)

    result = rewrite_file("app.py", SOURCE, targets)

    assert [type(o) for o in result.outcomes] == [Rewritten, Skipped]
    assert "not found at the recorded position" in result.outcomes[1].site_outcome().reason
    assert result.module is not None and "    resize.enqueue(p)\n" in result.module.code


def test_a_file_that_cannot_be_rewritten_is_a_failure_not_an_exception(
    write_files: Callable[[dict[str, str]], Path], build_inventory: Build
) -> None:
    targets = _targets(write_files({"app.py": SOURCE}), build_inventory)

    result = rewrite_file("app.py", "def view(:\n", targets)

    assert result.module is None
    assert [type(o) for o in result.outcomes] == [Failed, Failed]


def test_a_rewrite_that_raises_leaves_the_file_alone_and_says_why(
    write_files: Callable[[dict[str, str]], Path],
    build_inventory: Build,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def raising(block: Block, index: int, target: Target) -> Edit:
        raise RuntimeError("boom")

    monkeypatch.setitem(_rewriter.REWRITERS, Pattern.DIRECT_CALL, raising)
    root = write_files({"app.py": SOURCE})
    sites = [("app.py", "    resize(p)", Pattern.DIRECT_CALL, "app.resize")]

    result = plan_apply(root, build_inventory(root, sites), scanner=None)

    assert result.changes == []
    [outcome] = result.outcomes
    assert outcome.status is Status.SKIPPED
    assert "the rewrite failed" in outcome.reason and "RuntimeError: boom" in outcome.reason
