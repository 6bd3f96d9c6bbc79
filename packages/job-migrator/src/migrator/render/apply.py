"""``migrator apply`` in the terminal: the diff, the sites' outcomes, the files not touched."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.syntax import Syntax
from rich.table import Table

from codemods import ApplyResult, BranchReport, Status
from migrator.apply import ApplyOutcome, Output

_STYLE = {
    Status.REWRITTEN: "green",
    Status.SKIPPED: "yellow",
    Status.MANUAL: "magenta",
    Status.ALREADY: "dim",
}


def render_outcome(console: Console, outcome: ApplyOutcome) -> None:
    """Everything ``migrator apply`` prints: unknown jobs, the rewrite, jobs that did not move."""
    if outcome.unknown:
        console.print(f"[yellow]not in the inventory:[/] {escape(', '.join(outcome.unknown))}")
    render(console, outcome.result, outcome.branches, outcome.mode)
    for job, reason in outcome.not_moved.items():
        console.print(f"[red]not moved:[/] {escape(job)}: {escape(reason)}")


def render(
    console: Console, result: ApplyResult, branches: list[BranchReport], mode: Output
) -> None:
    if mode is Output.DIFF and result.diff:
        console.print(Syntax(result.diff, "diff", theme="ansi_dark", word_wrap=True))
    console.print(_sites_table(result))
    if result.refused:
        console.print(_refused_table(result))
    if result.dirty and mode is Output.DIFF:
        waiting = ", ".join(result.dirty)
        console.print(
            f"--write writes nothing until these are committed or stashed: {escape(waiting)}"
        )
    for report in branches:
        console.print(
            f"branch [bold]{escape(report.name)}[/]: {len(report.commits)} commit(s), "
            f"PR text in {escape(report.pr_path)}"
        )
    if result.worker:
        console.print(f"[bold]workers:[/] {escape(result.worker)}")
    console.print(escape(_summary(result, mode)))


def _sites_table(result: ApplyResult) -> Table:
    table = Table(title="call sites", show_lines=False)
    for column in ("site", "pattern", "job", "outcome", "why"):
        table.add_column(column, overflow="fold")
    for o in result.outcomes:
        why = o.reason + (f" (lines {', '.join(map(str, o.lines))})" if o.lines else "")
        loc = f"{o.site.location.path}:{o.site.location.line}"
        outcome = f"[{_STYLE[o.status]}]{o.status.value}[/]"
        table.add_row(loc, o.site.pattern.value, escape(o.site.job), outcome, escape(why))
    return table


def _refused_table(result: ApplyResult) -> Table:
    table = Table(title="files not touched")
    table.add_column("file")
    table.add_column("why", overflow="fold")
    for path, why in sorted(result.refused.items()):
        table.add_row(escape(path), escape(why))
    return table


def _moved(result: ApplyResult) -> list[str]:
    """The moved jobs; one of which only Django mail deliveries moved says so (it stays)."""
    return [
        f"{job} (its Django mail delivery)" if result.delivered_only(job) else job
        for job in result.jobs
    ]


def _summary(result: ApplyResult, mode: Output) -> str:
    counts = {s: len(result.by_status(s)) for s in Status}
    verb = {Output.DIFF: "would change", Output.WRITE: "wrote", Output.BRANCH: "committed"}[mode]
    parts = [
        f"{verb} {len(result.changes)} file(s)",
        f"jobs moved: {', '.join(_moved(result)) or 'none'}",
    ]
    parts += [f"{n} {s.value}" for s, n in counts.items() if n]
    return "; ".join(parts)
