"""``bench.apply_why`` on a tiny labelled package: one site moves, one is refused with
apply's own reason, one is not a site, and the protected one is left as it was."""

from __future__ import annotations

import json
from pathlib import Path

from bench import apply_why
from codemods import SiteOutcome, Status
from inventory.models import CallSite, Location, Pattern

FIXTURE = Path(__file__).parent / "fixtures" / "apply_why"


def test_each_labelled_site_gets_apply_outcome(tmp_path: Path) -> None:
    out = tmp_path / "why.json"
    code = apply_why.main(
        [
            str(FIXTURE / "labels.jsonl"),
            str(FIXTURE),
            "--work",
            str(tmp_path / "w"),
            "--json",
            str(out),
        ]
    )
    report = json.loads(out.read_text())
    sites = {s["id"]: s for s in report["sites"]}
    assert code == 0
    assert (report["moved"], report["idempotent"], report["protected_changed"]) == (1, 3, 0)
    assert sites["tiny-001"]["kind"] == apply_why.MOVED
    refused = sites["tiny-004"]
    assert refused["kind"] == "exceptions handled"
    assert refused["status"] == "manual"
    assert refused["reason"].startswith("the caller handles the job's exceptions")
    assert sites["tiny-003"]["kind"] == apply_why.NOT_FOUND
    assert "tiny-002" not in sites  # non-idempotent: only checked to be unchanged
    assert report["packages"][0]["kinds"] == {
        apply_why.MOVED: 1,
        "exceptions handled": 1,
        apply_why.NOT_FOUND: 1,
    }
    # Nothing written: the scratch copy keeps the original call.
    views = (tmp_path / "w" / "tinyshop-1.0" / "tinyshop" / "views.py").read_text()
    assert "threading.Thread(target=publish_summary" in views


def test_a_reason_apply_writes_is_grouped_by_its_opening() -> None:
    assert [kind for kind, _ in apply_why.KINDS].count("result used") == 1
    line = "the caller uses the result (lines 4 read it): an enqueue returns a job handle"
    assert apply_why.kind_of(_outcome(line)) == "result used"
    assert apply_why.kind_of(_outcome("something new")) == apply_why.OTHER
    assert apply_why.kind_of(_outcome("anything"), resolved=False) == "job not resolved"


def _outcome(reason: str, line: int = 1, job: str = "a.f") -> SiteOutcome:
    site = CallSite(location=Location(path="a.py", line=line), pattern=Pattern.THREAD, job=job)
    return SiteOutcome(site=site, status=Status.SKIPPED, reason=reason)


def test_a_receiver_labelled_on_its_def_is_found_on_its_decorator() -> None:
    # The scan reports a decorated receiver on its decorator; the labeller points at the
    # def and gives the span (score_corpus.sh's line_span): the site is found, not missed.
    text = "@receiver(post_delete, sender=Offer)\ndef tidy(instance, **kwargs):\n    pass\n"
    label = apply_why.Label(
        id="x-1",
        package="p-1",
        path="a.py",
        line=2,
        snippet="def tidy(instance, **kwargs):",
        job="a.tidy",
        label="idempotent",
        acceptable=("idempotent",),
        must_detect=True,
        span=frozenset({1, 2}),
    )
    on_decorator = _outcome("job is non_idempotent", line=1, job="a.tidy")
    assert apply_why.match(label, [on_decorator], text) is on_decorator
    unlabelled = apply_why.Label(**{**label.__dict__, "span": frozenset({2})})
    assert apply_why.match(unlabelled, [on_decorator], text) is None


def test_the_class_and_local_name_reasons_have_kinds_of_their_own() -> None:
    from codemods._rewriter import THROUGH_NAME
    from codemods._select import _LOCAL_CLASS

    through = THROUGH_NAME.format(line=4, name="w", job="send")
    assert apply_why.kind_of(_outcome(through)) == "through a local name"
    local = _LOCAL_CLASS.format(kind="@classmethod")
    assert apply_why.kind_of(_outcome(local)) == "class inside a function"
    overridden = "@classmethod `cls.refresh` is read from a class that may be app.Mirror, which"
    assert apply_why.kind_of(_outcome(overridden)) == "classmethod overridden"
