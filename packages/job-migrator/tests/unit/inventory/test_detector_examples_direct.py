"""Every ``direct_call`` detector example: the classifier reports exactly its sites."""

from __future__ import annotations

import pytest

from inventory._catalogue import Catalogue
from inventory._classify import classify
from inventory._extract import extract_source
from inventory.config import MigratorConfig
from inventory.detector_examples import EXAMPLES, DetectorExample
from inventory.models import Pattern
from inventory.summary import TargetKind

DIRECT = EXAMPLES[Pattern.DIRECT_CALL]


@pytest.mark.parametrize("example", DIRECT, ids=lambda e: e.title)
def test_direct_example_reports_exactly_its_sites(example: DetectorExample) -> None:
    summaries = [extract_source(example.source, "app.py", "app")]
    for path, source in example.modules.items():
        summaries.append(extract_source(source, path, path.removesuffix(".py")))
    sites, _ = classify(summaries, MigratorConfig(), Catalogue.load(), None)
    found = [(s.job, TargetKind.FUNCTION) for s in sites if s.pattern is Pattern.DIRECT_CALL]
    assert found == example.expected
    assert all(s.pattern is Pattern.DIRECT_CALL for s in sites)


def test_direct_call_has_valid_and_invalid_examples() -> None:
    assert any(e.valid for e in DIRECT) and any(not e.valid for e in DIRECT)
    # Eight more frameworks' handlers (detector_examples._frameworks) took it from 28.
    assert 4 <= len(DIRECT) <= 34
