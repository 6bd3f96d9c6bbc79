"""The periodic cache warm-up: every 15 minutes, every cached product refreshed.

Before the migration the warm-up is registered with the ``schedule`` library's
in-process scheduler (``shop.cron.install_schedules``); after ``migrator apply``
it is declared on the job itself (``@job(every="15m")``) and the queue's
workers tick it. These tests hold for either form: what they check is the
shop's behaviour (which job, how often, what it does), not where the schedule
is written.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import timedelta

import pytest
import schedule
from shop.cron import install_schedules
from shop.db import connect
from shop.jobs import cached_product, warm_all_product_caches


@pytest.fixture
def scheduled() -> Iterator[list[tuple[Callable[[], object], timedelta]]]:
    """Every periodic job of the shop with its interval, wherever it is declared."""
    install_schedules()
    found = [(j.job_func, timedelta(**{j.unit: j.interval})) for j in schedule.get_jobs()]
    declared = getattr(getattr(warm_all_product_caches, "definition", None), "schedule", None)
    if declared is not None and declared.every is not None:
        found.append((warm_all_product_caches, declared.every))
    yield found
    schedule.clear()  # the default scheduler is process-wide


def test_the_scheduled_warm_up_refreshes_every_cached_product(client, settings, product, scheduled):
    with connect(settings.database) as conn:  # a change made behind the cache's back
        conn.execute("UPDATE products SET price_cents = 999 WHERE id = ?", (product["id"],))
    assert cached_product(product["id"]) == {"name": "Mug", "price_cents": 1200}

    for run, _ in scheduled:
        run()

    assert cached_product(product["id"]) == {"name": "Mug", "price_cents": 999}


def test_the_warm_up_runs_every_15_minutes(scheduled):
    [(_, every)] = scheduled
    assert every == timedelta(minutes=15)
