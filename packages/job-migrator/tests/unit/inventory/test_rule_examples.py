"""Every classification example, run through the real extractor and classifier."""

from __future__ import annotations

import pytest

from inventory._catalogue import Catalogue
from inventory._classify import classify
from inventory._extract import extract_source
from inventory.config import MigratorConfig
from inventory.models import Job
from inventory.rule_examples import EXAMPLES, RuleExample, render_markdown
from inventory.summary import FileSummary


def summarise(path: str, source: str) -> FileSummary:
    is_package = path.endswith("/__init__.py")
    module = path.removesuffix(".py").removesuffix("/__init__").replace("/", ".")
    return extract_source(source, path, module, is_package)


def classify_example(example: RuleExample) -> Job:
    summaries = [summarise(path, source) for path, source in example.sources().items()]
    config = MigratorConfig.from_toml(example.pyproject)
    _, jobs = classify(summaries, config, Catalogue.load(config.catalogue))
    found = {job.qualname: job for job in jobs}
    assert example.job in found, f"job not found; jobs: {sorted(found)}"
    return found[example.job]


@pytest.mark.parametrize("example", EXAMPLES, ids=[e.title for e in EXAMPLES])
def test_example_gets_its_verdict_and_effects(example: RuleExample) -> None:
    job = classify_example(example)
    assert job.idempotency == example.expected_verdict, [e.message for e in job.evidence]
    assert {e.kind for e in job.effects} == example.expected_effect_kinds
    if example.evidence_mentions:
        assert any(example.evidence_mentions in e.message for e in job.evidence)


def test_every_verdict_has_an_example() -> None:
    from inventory.models import Idempotency

    assert {e.expected_verdict for e in EXAMPLES} == set(Idempotency)


def test_chains_are_reported_for_deep_effects() -> None:
    deep = next(e for e in EXAMPLES if e.title.startswith("effects two calls deep"))
    chain = classify_example(deep).effects[0].chain
    assert chain == ["shop.jobs.close_order", "shop.helpers.notify", "shop.helpers.post_webhook"]


def test_docs_render_every_example() -> None:
    page = render_markdown()
    assert all(f"## {e.title}" in page for e in EXAMPLES)
