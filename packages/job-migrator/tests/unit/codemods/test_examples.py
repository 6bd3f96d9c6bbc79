"""Every BEFORE/AFTER example of codemods.examples, run through plan_apply."""

from __future__ import annotations

from pathlib import Path

import pytest

from codemods import ApplyOptions, Status, plan_apply
from codemods.examples import EXAMPLES, Example
from tools.apply_docs import inventory_for, render_markdown


@pytest.mark.parametrize("example", EXAMPLES, ids=[e.title for e in EXAMPLES])
def test_example(tmp_path: Path, example: Example) -> None:
    (tmp_path / "app.py").write_text(example.before)
    result = plan_apply(
        tmp_path, inventory_for(example, tmp_path), ApplyOptions(keys=example.keys), scanner=None
    )

    [outcome] = result.outcomes
    assert (outcome.status, example.reason in outcome.reason) == (example.status, True), (
        outcome.reason
    )
    after = next((c.after for c in result.changes if c.path == "app.py"), example.before)
    assert after == example.after


@pytest.mark.parametrize("example", EXAMPLES, ids=[e.title for e in EXAMPLES])
def test_example_second_run_changes_nothing(tmp_path: Path, example: Example) -> None:
    (tmp_path / "app.py").write_text(example.after)
    inventory = inventory_for(example, tmp_path)

    result = plan_apply(tmp_path, inventory, ApplyOptions(keys=example.keys), scanner=None)

    assert result.changes == []
    assert all(o.status is not Status.REWRITTEN for o in result.outcomes)


def test_docs_show_the_current_examples() -> None:
    docs = Path(__file__).parents[5] / "docs" / "apply.md"

    assert render_markdown() in docs.read_text(encoding="utf-8"), "run: python -m tools.apply_docs"
