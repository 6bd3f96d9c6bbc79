"""Every ``enqueue`` (moved) detector example: the classifier reports exactly its sites."""

from __future__ import annotations

import pytest

from inventory._catalogue import Catalogue
from inventory._classify import classify
from inventory._extract import extract_source
from inventory.config import MigratorConfig
from inventory.detector_examples import EXAMPLES, DetectorExample
from inventory.models import CallSite, Idempotency, Job, Pattern
from inventory.summary import TargetKind

MOVED = EXAMPLES[Pattern.ENQUEUE]


def _classified(source: str, modules: dict[str, str]) -> tuple[list[CallSite], list[Job]]:
    summaries = [extract_source(source, "app.py", "app")]
    for path, text in modules.items():
        summaries.append(extract_source(text, path, path.removesuffix(".py")))
    return classify(summaries, MigratorConfig(), Catalogue.load(), None)


@pytest.mark.parametrize("example", MOVED, ids=lambda e: e.title)
def test_moved_example_reports_exactly_its_sites(example: DetectorExample) -> None:
    sites, _ = _classified(example.source, example.modules)
    app_sites = [s for s in sites if s.location.path == "app.py"]
    assert [(s.job, TargetKind.FUNCTION) for s in app_sites] == example.expected
    assert all(s.pattern is Pattern.ENQUEUE for s in app_sites)


def test_a_moved_site_carries_its_jobs_verdict_from_the_body() -> None:
    sites, jobs = _classified(MOVED[0].source, {})
    verdicts = {job.qualname: job.idempotency for job in jobs}
    assert verdicts["app.send_digest"] is Idempotency.NON_IDEMPOTENT  # it sends mail
    assert [s.idempotency for s in sites] == [Idempotency.NON_IDEMPOTENT]


def test_an_enqueue_inside_a_thread_target_is_the_moved_site_only() -> None:
    """An enqueue written inside the function a thread runs: the thread's job is that
    function, the enqueue is a moved site of its own."""
    source = MOVED[0].source + (
        "\n\nimport threading\n\n\ndef later(user_id: int) -> None:\n"
        "    threading.Thread(target=subscribe, args=(user_id,)).start()\n"
    )
    sites, _ = _classified(source, {})
    assert {(s.pattern, s.job) for s in sites} == {
        (Pattern.ENQUEUE, "app.send_digest"),
        (Pattern.THREAD, "app.subscribe"),
    }


def test_moved_has_valid_and_invalid_examples() -> None:
    assert any(e.valid for e in MOVED) and any(not e.valid for e in MOVED)
