"""The table, Markdown and JSON reports say what a reviewer needs to see."""

from __future__ import annotations

import io
import json

from rich.console import Console

from inventory import Inventory
from migrator.render.scan import ReportView, render_json, render_markdown, render_table


def table_text(inventory: Inventory) -> str:
    buffer = io.StringIO()
    render_table(ReportView(inventory), Console(file=buffer, width=200, no_color=True))
    return buffer.getvalue()


def test_table_groups_sites_by_job_most_dangerous_first(inventory: Inventory) -> None:
    text = table_text(inventory)
    assert (
        text.index("shop.tasks.refund")
        < text.index("shop.tasks.send_mail")
        < text.index("shop.tasks.thumbnail")
    )
    assert "shop/api.py:5" in text and "shop/views.py:30" in text
    assert "calls stripe.Refund.create" in text  # the last evidence line decided the verdict
    assert "reads the database" not in text


def test_table_summary_counts_verdicts_and_lists_errors(inventory: Inventory) -> None:
    text = table_text(inventory)
    assert (
        "3 jobs, 4 sites: unsafe 1, non_idempotent 0, needs_key 1, unknown 0, idempotent 1" in text
    )
    assert "shop/broken.py" in text and "invalid syntax (line 3)" in text


def test_table_marks_baselined_sites(inventory: Inventory) -> None:
    inventory.sites[0].baselined = True
    assert "shop/views.py:12 (baseline)" in table_text(inventory)


def test_markdown_has_a_section_per_verdict_with_evidence_chains(inventory: Inventory) -> None:
    text = render_markdown(ReportView(inventory))
    assert (
        text.index("## Unsafe")
        < text.index("## Needs an idempotency key")
        < text.index("## Idempotent")
    )
    assert "## Not idempotent" not in text
    assert "| `shop.tasks.refund` | high | 1 |" in text
    assert (
        "- calls stripe.Refund.create \\| payment" not in text
    )  # pipes are escaped only in tables
    assert "  - chain: shop.tasks.refund → shop.billing.pay" in text
    assert "| `shop/broken.py` | syntax | invalid syntax (line 3) |" in text


def test_json_is_the_inventory_contract(inventory: Inventory) -> None:
    data = json.loads(render_json(ReportView(inventory)))
    assert Inventory.model_validate(data) == inventory
    assert data["schema_version"] == "1.12"
