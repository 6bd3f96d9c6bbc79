"""Daily CSV reports: one day from the default executor, all days from a child process."""

from __future__ import annotations

import csv
import io

import pytest
from shop.reports import report_path


@pytest.fixture
def orders(client, settings, user, product, wait_until):
    """Three orders, placed one after the other: each waits for its stock decrement, whose
    read-modify-write would otherwise race the next order's (the app's known unsafe job)."""
    left = 10
    for qty, day in ((1, "2026-11-28"), (2, "2026-11-29"), (3, "2026-11-29")):
        body = {"user_id": user["id"], "product_id": product["id"], "qty": qty, "day": day}
        assert client.post("/orders", json=body).status_code == 201
        left -= qty
        wait_until(lambda left=left: _stock(settings, product) == left, message="the decrement")


def _stock(settings, product) -> int:
    from shop.db import connect
    from shop.repo import load_product

    with connect(settings.database) as conn:
        return load_product(conn, product["id"]).stock


def rows(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def test_exporting_a_day_writes_its_csv(client, orders, settings, wait_until, stock_settled):
    assert client.post("/reports/2026-11-29").status_code == 202

    wait_until(report_path(settings.reports_dir, "2026-11-29").exists, message="the report")
    exported = rows(client.get("/reports/2026-11-29").text)
    assert [r["qty"] for r in exported] == ["2", "3"]
    assert [r["amount_cents"] for r in exported] == ["2400", "3600"]


def test_exporting_twice_gives_the_same_file(client, orders, settings, wait_until, stock_settled):
    path = report_path(settings.reports_dir, "2026-11-29")
    client.post("/reports/2026-11-29")
    wait_until(path.exists, message="the first report")
    first = path.read_bytes()
    path.unlink()

    client.post("/reports/2026-11-29")

    wait_until(path.exists, message="the second report")
    assert path.read_bytes() == first


def test_rebuild_writes_every_day_from_a_child_process(
    client, orders, settings, wait_until, stock_settled
):
    assert client.post("/reports/rebuild").json() == {"days": ["2026-11-28", "2026-11-29"]}

    for day, count in (("2026-11-28", 1), ("2026-11-29", 2)):
        path = report_path(settings.reports_dir, day)
        wait_until(path.exists, timeout=10, message=f"the report of {day}")
        assert len(rows(path.read_text())) == count


def test_a_missing_report_is_404_and_a_bad_day_is_422(client):
    assert client.get("/reports/2026-01-01").status_code == 404
    assert client.post("/reports/yesterday").status_code == 422


@pytest.fixture
def stock_settled(client, settings, product, orders, wait_until):
    """The orders' stock decrements (threads) are done: 10 - (1 + 2 + 3)."""
    wait_until(lambda: _stock(settings, product) == 4, message="the stock decrements")
