"""Every detector example: exactly its expected sites are found (module ``app``)."""

from __future__ import annotations

import pytest

from inventory._extract import extract_source
from inventory.detector_examples import EXAMPLES, DetectorExample
from inventory.models import Pattern
from inventory.summary import RawSite, TargetKind

EVERY = [example for examples in EXAMPLES.values() for example in examples]
# direct_call and enqueue sites come from the classifier: test_detector_examples_direct.py
# and test_detector_examples_moved.py check them.
BY_CLASSIFIER = (Pattern.DIRECT_CALL, Pattern.ENQUEUE)
ALL = [example for example in EVERY if example.pattern not in BY_CLASSIFIER]


def _job(site: RawSite) -> str | None:
    """Examples name the job; a Thread subclass site names the class whose run() it is."""
    if site.target_kind is TargetKind.THREAD_SUBCLASS:
        return f"{site.target}.run"
    return site.target


@pytest.mark.parametrize("example", ALL, ids=lambda e: f"{e.pattern}: {e.title}")
def test_example_reports_exactly_its_sites(example: DetectorExample) -> None:
    summary = extract_source(example.source, "app.py", "app")
    found = [(site.pattern, _job(site), site.target_kind) for site in summary.sites]
    expected = [(example.pattern, target, kind) for target, kind in example.expected]
    assert found == expected


def test_every_extractor_pattern_has_valid_and_invalid_examples() -> None:
    for pattern in Pattern:
        if pattern is Pattern.DIRECT_CALL:
            continue  # found by the classifier, from effects
        examples = EXAMPLES[pattern]
        assert any(e.valid for e in examples), pattern
        assert any(not e.valid for e in examples), pattern
        assert 4 <= len(examples) <= 12, pattern


def test_examples_document_themselves() -> None:
    for example in EVERY:
        assert example.why and example.title
        assert example.title.startswith("INVALID") != example.valid
