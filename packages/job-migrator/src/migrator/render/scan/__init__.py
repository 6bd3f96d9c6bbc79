"""Renderers for a scan: a rich table, JSON, SARIF 2.1.0 and Markdown.

Each takes the same :class:`~migrator.render.scan.view.ReportView` and returns text
(the table renders into a rich ``Console``), so the CLI picks one by format;
:func:`write_report` writes the chosen one to the terminal or to ``-o FILE``.
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path

from rich.console import Console

from migrator.errors import OutputError
from migrator.render.console import stdout_console
from migrator.render.scan._json import render_json
from migrator.render.scan._markdown import render_markdown
from migrator.render.scan._sarif import render_sarif
from migrator.render.scan._table import render_table
from migrator.render.scan.view import ReportView
from migrator.scan import ScanOutcome


class ReportFormat(StrEnum):
    TABLE = "table"
    JSON = "json"
    SARIF = "sarif"
    MARKDOWN = "markdown"


# The reports people read say per site what `migrator apply` will do (JSON and SARIF stay
# the scan's own contract: `migrator plan --format json` carries the preview for machines).
PREVIEWED = frozenset({ReportFormat.TABLE, ReportFormat.MARKDOWN})


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


def write_report(fmt: ReportFormat, view: ReportView, output: Path | None) -> None:
    """The report on stdout, or in ``output`` (OutputError when it cannot be written)."""
    if output is None:
        render(fmt, view, stdout_console(soft_wrap=fmt is not ReportFormat.TABLE))
        return
    try:
        with output.open("w", encoding="utf-8") as handle:
            render(fmt, view, Console(file=handle, width=160, no_color=True))
    except OSError as exc:
        raise OutputError(f"cannot write {output}: {exc.strerror or exc}") from exc


def unparsed_message(outcome: ScanOutcome) -> str:
    """The line saying which files did not parse, and that the run fails for it."""
    first = outcome.unparsed[0]
    more = f" and {len(outcome.unparsed) - 1} more" if len(outcome.unparsed) > 1 else ""
    return (
        f"error: {first.path}{more} could not be parsed ({first.reason}): the scan is "
        "incomplete, so the run fails (pass --ignore-errors to list them only)"
    )


__all__ = [
    "PREVIEWED",
    "ReportFormat",
    "ReportView",
    "render",
    "render_json",
    "render_markdown",
    "render_sarif",
    "render_table",
    "unparsed_message",
    "write_report",
]
