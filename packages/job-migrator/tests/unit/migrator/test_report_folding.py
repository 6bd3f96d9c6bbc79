"""Noise control: the sites of one unresolved call are one finding, after the actionable ones."""

from __future__ import annotations

import io
import json

from rich.console import Console

from inventory import CallSite, Idempotency, Inventory, Location, Pattern
from migrator.render.scan import ReportView, render_json, render_markdown, render_table

_REASON = "db.query: a method of an object whose type is not known here"


def unresolved(path: str, line: int, call: str, reason: str = _REASON) -> CallSite:
    return CallSite(
        location=Location(path=path, line=line, column=4),
        pattern=Pattern.DIRECT_CALL,
        job="unknown",
        target_source=call,
        unresolved_reason=reason,
        idempotency=Idempotency.UNKNOWN,
    )


def flooded(inventory: Inventory) -> Inventory:
    flood = [unresolved(f"shop/views{i % 7}.py", i, "db.query") for i in range(1, 41)]
    other = unresolved("shop/admin.py", 3, "hooks.fire", "hooks.fire: not resolved")
    return inventory.model_copy(update={"sites": [*flood, other, *inventory.sites]})


def table_text(inventory: Inventory) -> str:
    buffer = io.StringIO()
    render_table(ReportView(inventory), Console(file=buffer, width=200, no_color=True))
    return buffer.getvalue()


def test_forty_sites_of_one_unresolved_call_are_one_row_with_a_count(
    inventory: Inventory,
) -> None:
    view = ReportView(flooded(inventory))
    folded = view.unresolved_groups
    assert [(g.title, len(g.sites)) for g in folded] == [
        ("unknown: db.query", 40),
        ("unknown: hooks.fire", 1),
    ]
    text = table_text(flooded(inventory))
    assert "2 of them unresolved calls, 41 sites folded by call" in text
    assert "... and 35 more" in text


def test_actionable_findings_come_before_unresolved_calls(inventory: Inventory) -> None:
    text = table_text(flooded(inventory))
    assert text.index("shop.tasks.thumbnail") < text.index("unknown: db.query")
    assert text.index("shop.tasks.refund") < text.index("shop.tasks.thumbnail")


def test_json_keeps_every_site_and_markdown_says_why(inventory: Inventory) -> None:
    view = ReportView(flooded(inventory))
    assert len(json.loads(render_json(view))["sites"]) == 45
    markdown = render_markdown(view)
    assert "### `unknown: db.query`" in markdown
    assert f"Why unresolved: {_REASON}" in markdown
