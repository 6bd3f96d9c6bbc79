"""Renderers for a scan: a rich table, JSON, SARIF 2.1.0 and Markdown.

Each takes the same :class:`~migrator.report.view.ReportView` and returns text
(the table renders into a rich ``Console``), so the CLI picks one by format.
"""

from __future__ import annotations

from enum import StrEnum

from rich.console import Console

from migrator.report._json import render_json
from migrator.report._markdown import render_markdown
from migrator.report._sarif import render_sarif
from migrator.report._table import render_table
from migrator.report.view import ReportView


class ReportFormat(StrEnum):
    TABLE = "table"
    JSON = "json"
    SARIF = "sarif"
    MARKDOWN = "markdown"


def render(fmt: ReportFormat, view: ReportView, console: Console) -> None:
    """Write the report in ``fmt`` to ``console`` (a terminal or a file)."""
    if fmt is ReportFormat.TABLE:
        render_table(view, console)
        return
    renderers = {
        ReportFormat.JSON: render_json,
        ReportFormat.SARIF: render_sarif,
        ReportFormat.MARKDOWN: render_markdown,
    }
    console.file.write(renderers[fmt](view))


__all__ = [
    "ReportFormat",
    "ReportView",
    "render",
    "render_json",
    "render_markdown",
    "render_sarif",
    "render_table",
]
