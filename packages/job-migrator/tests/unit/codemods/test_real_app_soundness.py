"""Rewrites that real apps showed to be unsound, each refused now with the fact it lacks.

Found by running apply over 180 Django packages from PyPI (docs/realapps.md):

- django-comments-dab: a receiver ``decrease_count`` whose body calls the model method
  ``instance.flag.decrease_count()``; the method call was taken for the job and became
  ``instance.flag.decrease_count.enqueue()``, an AttributeError at run time.
- tendenci: ``time.sleep(60)`` in a view, the job being the view itself, became
  ``time.sleep.enqueue(60)``; and ``return render_csv(...)``, whose job returns an
  ``HttpResponse``, became a 202 whose status endpoint could never serve that result;
  its ``table_data = []`` then ``table_data.append(row)`` (rows of datetimes) was taken
  for plain JSON.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from codemods import Crossing, Status, plan_apply
from inventory.models import Argument, Framework, Pattern
from tests.unit.codemods.conftest import build_inventory

MODELS = """class Counter:
    def __init__(self) -> None:
        self.count = 0

    def decrease_count(self) -> None:
        self.count -= 1


class Flag:
    flag: Counter
"""

SIGNALS = """from django.db.models import signals
from django.dispatch import receiver

from comments.models import Flag


@receiver(signals.post_delete, sender=Flag)
def decrease_count(sender, instance, using, **kwargs):
    instance.flag.decrease_count()
"""

VIEWS = """import time

from django.http import HttpResponse

from shop.exports import render_csv, send_rows


def timeout_test(request):
    time.sleep(60)


def download(request):
    return render_csv("a.csv", ["a"], [])


def built(request, row: str):
    rows = []
    rows.append(row)
    send_rows(rows)  # built


def filled(request):
    rows = []
    fill(rows)
    send_rows(rows)  # filled


def fill(rows):
    rows.append(object())


def literal(request):
    rows = ["a", "b"]
    print(len(rows))
    send_rows(rows)  # literal
"""

EXPORTS = """import csv

from django.http import HttpResponse


def render_csv(filename, title_list, data_list):
    response = HttpResponse(content_type="text/csv")
    csv.writer(response).writerow(title_list)
    return response


def send_rows(rows):
    ...
"""


URLS = """from django.urls import path

from . import views

app_name = "shop"

urlpatterns = [path("download/", views.download, name="download")]
"""


@pytest.fixture
def root(write_files: Callable[[dict[str, str]], Path]) -> Path:
    return write_files(
        {
            "comments/__init__.py": "",
            "comments/models.py": MODELS,
            "comments/signals.py": SIGNALS,
            "shop/__init__.py": "",
            "shop/views.py": VIEWS,
            "shop/exports.py": EXPORTS,
            "shop/urls.py": URLS,
        }
    )


def test_a_delete_receiver_that_calls_a_method_on_its_instance_stays(root: Path) -> None:
    """The receiver is the job, for post_delete, and calls ``instance.flag.decrease_count()``,
    which sets ``self.count`` (the scan reads the method): by value, a worker would act on a
    copy of the deleted row, not on the caller's object, so it stays (with the change that
    would move it); the method of the same name is untouched."""
    inventory = build_inventory(
        root,
        [
            (
                "comments/signals.py",
                "@receiver(",
                Pattern.SIGNAL_RECEIVER,
                "comments.signals.decrease_count",
                "decrease_count",
            )
        ],
    )

    result = plan_apply(root, inventory, scanner=None)

    [outcome] = result.outcomes
    assert outcome.status is Status.SKIPPED
    assert (
        "changes the instance it is given (`instance.flag.decrease_count(), which changes it: "
        "`self.count -= 1``, comments/models.py:6)"
    ) in outcome.reason
    assert result.changes == []


def test_a_library_call_inside_the_job_itself_is_not_rewritten(root: Path) -> None:
    inventory = build_inventory(
        root,
        [
            (
                "shop/views.py",
                "time.sleep(60)",
                Pattern.DIRECT_CALL,
                "shop.views.timeout_test",
                "time.sleep",
            )
        ],
        enclosing_function="shop.views.timeout_test",
        handler=Framework.DJANGO,
    )

    result = plan_apply(root, inventory, scanner=None)

    [outcome] = result.outcomes
    assert outcome.status is Status.SKIPPED and result.changes == []
    assert "the function this site is in" in outcome.reason
    assert "`time.sleep(...)`" in outcome.reason


def test_a_handler_returning_a_job_that_returns_a_response_stays_manual(root: Path) -> None:
    inventory = build_inventory(
        root,
        [("shop/views.py", "return render_csv(", Pattern.DIRECT_CALL, "shop.exports.render_csv")],
        handler=Framework.DJANGO,
        result_used=True,
    )
    inventory.sites[0].arguments = [
        Argument(name=f"#{i}", source=s, serialisable=None)
        for i, s in enumerate(['"a.csv"', '["a"]', "[]"])
    ]

    result = plan_apply(root, inventory, scanner=None)

    [outcome] = result.outcomes
    assert outcome.status is Status.MANUAL and result.changes == []
    assert "a 202 answer needs a result the status endpoint can serve as JSON" in outcome.reason


@pytest.mark.parametrize(
    ("marker", "how", "why"),
    [
        ("built", Crossing.RUNTIME, "`rows` is built here and then changed (line 18)"),
        ("filled", Crossing.RUNTIME, "`rows` is built here and then changed (line 24)"),
        ("literal", Crossing.JSON, ""),
    ],
)
def test_a_container_built_then_changed_is_not_taken_for_its_literal(
    root: Path, marker: str, how: Crossing, why: str
) -> None:
    """Moved either way; only a literal left as written is proven JSON."""
    inventory = build_inventory(
        root, [("shop/views.py", f"# {marker}", Pattern.DIRECT_CALL, "shop.exports.send_rows")]
    )
    inventory.sites[0].arguments = [Argument(name="#0", source="rows", serialisable=None)]

    result = plan_apply(root, inventory, scanner=None)

    [outcome] = result.outcomes
    assert outcome.status is Status.REWRITTEN, outcome.reason
    [crossing] = outcome.crossings
    assert crossing.how is how and why in crossing.detail
