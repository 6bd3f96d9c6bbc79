"""The periodic cache warm-up registered with ``schedule``."""

from __future__ import annotations

import pytest
import schedule
from shop.cron import install_schedules
from shop.db import connect
from shop.jobs import cached_product


@pytest.fixture
def schedules():
    install_schedules()
    yield schedule
    schedule.clear()  # the default scheduler is process-wide


def test_the_scheduled_warm_up_refreshes_every_cached_product(client, settings, product, schedules):
    with connect(settings.database) as conn:  # a change made behind the cache's back
        conn.execute("UPDATE products SET price_cents = 999 WHERE id = ?", (product["id"],))
    assert cached_product(product["id"]) == {"name": "Mug", "price_cents": 1200}

    schedules.run_all()

    assert cached_product(product["id"]) == {"name": "Mug", "price_cents": 999}


def test_the_warm_up_runs_every_15_minutes(schedules):
    [job] = schedules.get_jobs()
    assert (job.interval, job.unit) == (15, "minutes")
