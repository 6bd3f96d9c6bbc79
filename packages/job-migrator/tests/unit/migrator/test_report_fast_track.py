"""The Markdown report shows a job's declared (or suggested) key and the notification fast track."""

from __future__ import annotations

from inventory import Inventory
from migrator.render.scan import ReportView, render_markdown


def test_the_key_column_shows_the_declared_key_and_the_fast_track(inventory: Inventory) -> None:
    job = next(j for j in inventory.jobs if j.qualname == "shop.tasks.send_mail")
    job.declared_key, job.fast_track = "mail:{user_id}", True
    text = render_markdown(ReportView(inventory))
    assert "| Key |" in text
    assert "`mail:{user_id}` (declared) (notification fast track)" in text


def test_without_a_declaration_the_suggestion_is_shown(inventory: Inventory) -> None:
    job = next(j for j in inventory.jobs if j.qualname == "shop.tasks.send_mail")
    job.suggested_key, job.declared_key, job.fast_track = (
        "shop.tasks.send_mail:{user_id}",
        None,
        False,
    )
    assert "`shop.tasks.send_mail:{user_id}` (suggested)" in render_markdown(ReportView(inventory))
