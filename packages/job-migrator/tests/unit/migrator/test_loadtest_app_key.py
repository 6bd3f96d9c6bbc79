"""Issue 12: the load test exercises the app's real key with pairs of different calls.

The enqueue loop runs for real on the in-memory store (``queue_runtime.testing``);
the pair rule and the report's verdict are the ones ``migrator loadtest`` uses.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from migrator.loadtest import KeyMerge, LoadTestSpec, SpecError, declared_key, evaluate
from migrator.loadtest.load import Enqueuer, LoadResult, signature_generator
from queue_runtime.jobs import JobFunction, job
from queue_runtime.registry import Registry
from queue_runtime.testing import memory_runtime
from tests.unit.migrator.test_loadtest_logic import report


def send_notification(subject: str, message: str, from_email: str, recipient: str) -> None:
    """The Django mail-helper shape."""


MAIL: JobFunction[..., None] = job(name="notify.mail", registry=Registry())(send_notification)


def load(app_key: str | None, count: int = 12) -> LoadResult:
    spec = LoadTestSpec(
        job=MAIL.name, sandbox="sandbox", rate=1000.0, duration=count / 1000.0, app_key=app_key
    )
    runtime = memory_runtime()
    enqueuer = Enqueuer(runtime, MAIL, spec, "run1", signature_generator(MAIL))
    enqueuer.start(time.monotonic())
    return enqueuer.join()


def test_the_digest_key_gives_every_call_of_every_pair_its_own_job() -> None:
    result = load("notify.mail:{*}")
    assert result.errors == [] and result.key_merges == []
    assert result.key_pairs == len(result.enqueued) // 2 > 0
    assert all(e.created and e.key and e.key.startswith("notify.mail:") for e in result.enqueued)


def test_a_key_without_the_recipient_merges_pairs_and_fails_the_run() -> None:
    result = load("notify.mail:{subject}:{from_email}")
    assert result.key_merges, "a pair differing only in the recipient shares the key"
    assert {m.differs_in for m in result.key_merges} <= {"message", "recipient"}
    assert all(m.second == m.first + 1 for m in result.key_merges)
    failed = report(
        app_key="notify.mail:{subject}:{from_email}",
        key_pairs=result.key_pairs,
        key_merges=result.key_merges,
    )
    passed, reasons = evaluate(failed)
    assert not passed
    assert any("gave" in r and "the second never runs" in r for r in reasons), reasons
    assert "merged into one key" in failed.key_line()


def test_the_report_says_which_key_was_exercised() -> None:
    assert "not exercised" in report().key_line()
    merged = [KeyMerge(key="k", first=0, second=1, differs_in="recipient")]
    assert (
        "differing in recipient" in evaluate(report(app_key="k:{subject}", key_merges=merged))[1][0]
    )


def test_a_key_that_does_not_fit_the_job_is_refused_before_the_load() -> None:
    with pytest.raises(SpecError, match=r"\{to\} is not a parameter of notify.mail"):
        load("notify.mail:{to}")


def test_the_apps_declared_key_is_the_default(tmp_path: Path) -> None:
    assert declared_key(MAIL.name, tmp_path) is None
    (tmp_path / "pyproject.toml").write_text(
        '[tool.migrator.jobs."notify.mail"]\nkey = "notify.mail:{*}"\n'
    )
    assert declared_key(MAIL.name, tmp_path) == "notify.mail:{*}"
