"""Scheduler registrations become periodic declarations: translations, and what is skipped."""

from __future__ import annotations

from pathlib import Path

import libcst as cst
import pytest

from codemods import ApplyOptions, plan_apply
from codemods._triggers import Trigger, translate
from codemods.examples import Example
from inventory.models import Pattern
from tools.apply_docs import inventory_for

_TICK = "def refresh():\n    ...\n"


@pytest.mark.parametrize(
    ("registration", "expected"),
    [
        ("schedule.every(30).seconds.do(refresh)", Trigger(every="30s")),
        ("schedule.every().hour.do(refresh)", Trigger(every="1h")),
        ("schedule.every(2).days.do(refresh)", Trigger(every="2d")),
        (
            'schedule.every().monday.at("09:00", "UTC").do(refresh)',
            Trigger(cron="0 9 * * MON", timezone="UTC"),
        ),
        (
            'schedule.every().hour.at(":15", "UTC").do(refresh)',
            Trigger(cron="15 * * * *", timezone="UTC"),
        ),
        ('s.add_job(refresh, "interval", weeks=1)', Trigger(every="7d")),
        ('s.add_job(refresh, trigger="interval", seconds=90)', Trigger(every="1m30s")),
        (
            's.add_job(refresh, "cron", minute="*/5", timezone="Europe/Berlin")',
            Trigger(cron="*/5 * * * *", timezone="Europe/Berlin"),
        ),
        (
            's.add_job(refresh, "cron", day=1, timezone="UTC", coalesce=True)',
            Trigger(cron="0 0 1 * *", timezone="UTC"),
        ),
    ],
)
def test_exact_translations(registration: str, expected: Trigger) -> None:
    assert translate(cst.parse_expression(registration)) == expected  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("registration", "reason"),
    [
        ('s.add_job(refresh, "interval", minutes=5, start_date="2026-01-01")', "start_date="),
        ('s.add_job(refresh, "interval", minutes=5, kwargs={"n": 1})', "takes no arguments"),
        ('s.add_job(refresh, "interval", minutes=5, coalesce=False)', "coalesce=False"),
        ('s.add_job(refresh, "interval", minutes=5, misfire_grace_time=30)', "catch-up"),
        ('s.add_job(refresh, "cron", hour=3)', "timezone="),
        ('s.add_job(refresh, "cron", day_of_week="0-4", timezone="UTC")', "as names"),
        ('s.add_job(refresh, "cron", second=30, timezone="UTC")', "minute resolution"),
        ('s.add_job(refresh, "date", run_date="2026-01-01")', "'interval' and 'cron'"),
        ("s.add_job(refresh, IntervalTrigger(minutes=5))", "'interval' and 'cron'"),
        ('s.add_job(refresh, "interval", minutes=n)', "whole literal numbers"),
        ("schedule.every().monday.do(refresh)", "registration time"),
        ('schedule.every(2).days.at("10:00", "UTC").do(refresh)', "no cron form"),
        ("schedule.every(1).to(5).minutes.do(refresh)", "not a plain"),
        ('s.add_job(refresh, "cron", minute="61", timezone="UTC")', "would not accept"),
    ],
)
def test_inexact_registrations_give_the_reason(registration: str, reason: str) -> None:
    found = translate(cst.parse_expression(registration))  # type: ignore[arg-type]
    assert isinstance(found, str) and reason in found, found


def _apply(tmp_path: Path, example: Example, *extra: Example) -> tuple[list[str], str]:
    (tmp_path / "app.py").write_text(example.before)
    inventory = inventory_for(example, tmp_path)
    for other in extra:
        inventory.sites.extend(inventory_for(other, tmp_path).sites)
    result = plan_apply(tmp_path, inventory, ApplyOptions(), scanner=None)
    after = next((c.after for c in result.changes if c.path == "app.py"), example.before)
    return [f"{o.status}: {o.reason}" for o in result.outcomes], after


@pytest.mark.parametrize("decorator", ["@job(pool='batch')", "@job"])
def test_an_already_registered_job_is_left_with_the_schedule_to_add(
    tmp_path: Path, decorator: str
) -> None:
    # Bare ``@job`` registers as ``@job(...)`` does: apply would not decorate it again, so the
    # schedule would be lost if the site were counted as moved.
    before = (
        f"import schedule\nfrom queue_runtime import job\n\n\n{decorator}\n"
        + _TICK
        + "\n\nschedule.every(10).minutes.do(refresh)\n"
    )
    example = Example("t", Pattern.SCHEDULER, before, before, "schedule.every", job="refresh")

    outcomes, after = _apply(tmp_path, example)

    assert outcomes == ['skipped: the job already has @job(...): add every="10m" to it by hand']
    assert after == before


def test_a_job_registered_twice_keeps_both_registrations(tmp_path: Path) -> None:
    before = (
        "import schedule\n\n\n"
        + _TICK
        + "\n\nschedule.every(10).minutes.do(refresh)\nschedule.every(1).hours.do(refresh)\n"
    )
    first = Example("a", Pattern.SCHEDULER, before, before, "minutes.do", job="refresh")
    second = Example("b", Pattern.SCHEDULER, before, before, "hours.do", job="refresh")

    outcomes, after = _apply(tmp_path, first, second)

    assert after == before
    assert all("registered on a scheduler more than once" in o for o in outcomes), outcomes


def test_the_schedule_is_declared_only_when_the_registration_is_removed(tmp_path: Path) -> None:
    """A tagged registration is not removed: the job gets no ``every=`` while it still runs."""
    before = (
        "import schedule\n\n\n" + _TICK + '\n\nschedule.every(10).minutes.do(refresh).tag("t")\n'
    )
    example = Example("t", Pattern.SCHEDULER, before, before, "schedule.every", job="refresh")

    outcomes, after = _apply(tmp_path, example)

    assert [o.split(":")[0] for o in outcomes] == ["skipped"]
    assert after == before
