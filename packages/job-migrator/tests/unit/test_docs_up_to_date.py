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
