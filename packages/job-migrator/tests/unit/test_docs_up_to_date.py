"""docs/scan.md is generated from the examples and models: it must not drift."""

from __future__ import annotations

import re

from tools import scan_docs as docs


def test_scan_docs_are_regenerated() -> None:
    assert docs.OUTPUT.read_text(encoding="utf-8") == docs.render(), (
        "docs/scan.md is stale: run `.venv/bin/python -m tools.scan_docs`"
    )


def test_every_template_placeholder_is_filled() -> None:
    assert re.findall(r"\{\{\w+\}\}", docs.render()) == []


def test_docs_show_every_pattern_and_every_rule_example() -> None:
    from inventory import detector_examples, rule_examples
    from inventory.models import Pattern

    text = docs.render()
    assert all(f"### `{pattern.value}`" in text for pattern in Pattern)
    assert all(example.title in text for example in rule_examples.EXAMPLES)
    detectors = [
        example for examples in detector_examples.EXAMPLES.values() for example in examples
    ]
    assert detectors and all(example.title in text for example in detectors)


def test_apply_docs_list_the_selection_rules_in_order() -> None:
    """docs/apply.md's "How a site is decided" names apply's rules as ``_select.RULES``
    orders them: a rule added, dropped or moved must be documented where users read."""
    from pathlib import Path

    from codemods._select import RULES

    text = (Path(__file__).parents[4] / "docs" / "apply.md").read_text(encoding="utf-8")
    listed = text.split("<!-- rules:start -->", 1)[1].split("<!-- rules:end -->", 1)[0]
    names = re.findall(r"^\d+\. \*\*(.+?)\*\*", listed, flags=re.MULTILINE)
    assert names == [name for name, _ in RULES]
