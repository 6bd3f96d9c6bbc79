"""The default terminal report: one row per job, then a summary and the errors."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.console import Console
from rich.table import Table
from rich.text import Text

from inventory import Idempotency, ScanError
from migrator.render.scan.view import (
    VERDICT_ORDER,
    JobGroup,
    ReportView,
    site_label,
)
from migrator.vocabulary import APPLY_OUTCOMES, MOVES

if TYPE_CHECKING:  # migrator.plan imports the plan's checks: not paid by every scan
    from migrator.plan.model import SitePreview

VERDICT_STYLE = {
    Idempotency.UNSAFE: "bold red",
    Idempotency.NON_IDEMPOTENT: "red",
    Idempotency.NEEDS_KEY: "yellow",
    Idempotency.UNKNOWN: "magenta",
    Idempotency.IDEMPOTENT: "green",
}
MAX_SITES_SHOWN = 5
# apply's outcomes, in the order the Apply column lists them, and their colour
OUTCOME_STYLE = dict(zip(APPLY_OUTCOMES, ("green", "cyan", "yellow", "default"), strict=True))
REASON_CHARS = 120  # the Apply column's reason is cut here; the Markdown report has it whole


def render_table(view: ReportView, console: Console) -> None:
    if view.groups:
        console.print(_jobs_table(view))
    else:
        console.print("No in-process jobs found.")
    console.print(_summary(view))
    if view.preview:
        console.print(
            "Apply: what `migrator apply` will do at the job's sites (its dry run, defaults); "
            "`--format markdown` and `migrator plan` give each site's whole reason.",
            style="dim",
        )
    elif view.preview_error and view.groups:
        console.print(Text(f"Apply: {view.preview_error}", style="dim"))  # not rich markup
    if view.inventory.errors:
        console.print(_errors_table(view.inventory.errors))


def _jobs_table(view: ReportView) -> Table:
    table = Table(title=f"In-process jobs in {view.inventory.root}", show_lines=True, expand=False)
    # Evidence takes the spare width; names and places fold only on narrow terminals.
    table.add_column("Job", overflow="fold")
    table.add_column("Verdict", no_wrap=True)
    table.add_column("Confidence", overflow="fold")
    table.add_column("Top evidence", overflow="fold", ratio=1)
    table.add_column("Sites", justify="right", no_wrap=True)
    table.add_column("Where", overflow="fold")
    if view.preview:
        table.add_column("Apply", overflow="fold", ratio=1)
    for group in view.groups:
        apply = (_apply_cell(view.previews(group)),) if view.preview else ()
        table.add_row(*_row(group), *apply)
    return table


def _apply_cell(previews: list[SitePreview]) -> Text:
    """``moves``, or ``2 moves, 1 stays: <the first reason a site stays>``."""
    text = Text()
    counts = {outcome: 0 for outcome in OUTCOME_STYLE}
    for item in previews:
        counts[item.outcome] = counts.get(item.outcome, 0) + 1
    shown = [(outcome, n) for outcome, n in counts.items() if n]
    for index, (outcome, n) in enumerate(shown):
        text.append(", " if index else "")
        label = outcome if len(shown) == 1 and len(previews) == 1 else f"{n} {outcome}"
        text.append(label, style=OUTCOME_STYLE.get(outcome, "default"))
    reason = next((item.why for item in previews if item.outcome != MOVES and item.why), "")
    if reason:
        cut = reason if len(reason) <= REASON_CHARS else reason[: REASON_CHARS - 1].rstrip() + "…"
        text.append(f": {cut}")
    return text


def _row(group: JobGroup) -> tuple[str | Text, ...]:
    evidence = group.top_evidence
    confidence = group.job.confidence.value if group.job else "-"
    reason = evidence.message if evidence else _unresolved_reason(group)
    return (
        Text(group.title),
        Text(group.verdict.value, style=VERDICT_STYLE[group.verdict]),
        confidence,
        Text(reason),
        str(len(group.sites)),
        Text(_where(group)),
    )


def _unresolved_reason(group: JobGroup) -> str:
    reasons = sorted({site.unresolved_reason for site in group.sites if site.unresolved_reason})
    return "; ".join(reasons) or "no evidence"


def _where(group: JobGroup) -> str:
    labels = [site_label(site) + (" (baseline)" if site.baselined else "") for site in group.sites]
    hidden = len(labels) - MAX_SITES_SHOWN
    shown = labels[:MAX_SITES_SHOWN] + ([f"... and {hidden} more"] if hidden > 0 else [])
    return "\n".join(shown)


def _summary(view: ReportView) -> Text:
    stats = view.inventory.stats
    text = Text(f"{len(view.groups)} jobs, {len(view.inventory.sites)} sites: ")
    folded = view.unresolved_groups
    if folded:
        unresolved = sum(len(group.sites) for group in folded)
        text = Text(
            f"{len(view.groups)} jobs ({len(folded)} of them unresolved calls, "
            f"{unresolved} sites folded by call), {len(view.inventory.sites)} sites: "
        )
    for index, verdict in enumerate(VERDICT_ORDER):
        text.append(", " if index else "")
        text.append(f"{verdict.value} {view.counts()[verdict]}", style=VERDICT_STYLE[verdict])
    if view.baselined_sites:
        text.append(f"; {view.baselined_sites} sites in the baseline")
    text.append(
        f"\n{stats.files_scanned} files ({stats.files_cached} from cache), {stats.lines} lines, "
        f"{len(view.inventory.errors)} errors, {stats.seconds:.2f}s"
    )
    return text


def _errors_table(errors: list[ScanError]) -> Table:
    table = Table(title="Files not scanned", title_style="bold yellow")
    for header in ("Path", "Kind", "Reason"):
        table.add_column(header, overflow="fold")
    for error in errors:
        table.add_row(Text(error.path), error.kind.value, Text(error.reason))
    return table
