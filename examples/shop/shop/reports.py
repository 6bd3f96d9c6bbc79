"""Daily sales reports: one CSV per business day, rebuilt from the orders table."""

from __future__ import annotations

import csv
from pathlib import Path

from shop.db import connect
from shop.repo import orders_of_day
from shop.services import current

COLUMNS = ("order_id", "user_id", "product_id", "qty", "amount_cents", "status")


def report_path(reports_dir: Path, day: str) -> Path:
    return reports_dir / f"{day}.csv"


def write_report(database: Path, reports_dir: Path, day: str) -> Path:
    with connect(database) as conn:
        orders = orders_of_day(conn, day)
    dest = report_path(reports_dir, day)
    dest.parent.mkdir(parents=True, exist_ok=True)
    partial = dest.with_suffix(".part")
    with open(partial, "w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(COLUMNS)
        for o in orders:
            writer.writerow((o.id, o.user_id, o.product_id, o.qty, o.amount_cents, o.status))
    partial.replace(dest)
    return dest


def export_daily_report(day: str) -> None:
    """Job (idempotent: overwrites reports/{day}.csv with the same content)."""
    settings = current().settings
    write_report(settings.database, settings.reports_dir, day)


def rebuild_reports(database: str, reports_dir: str, days: list[str]) -> None:
    """Job run in a child process (idempotent); takes plain strings because it is pickled."""
    for day in days:
        write_report(Path(database), Path(reports_dir), day)
