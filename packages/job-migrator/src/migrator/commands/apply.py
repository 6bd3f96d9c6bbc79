"""``migrator apply``: rewrite the call sites of safe jobs to enqueue through queue_runtime.

Thin: parse options, call :mod:`codemods` (``plan_apply`` / ``write`` /
``create_branches``), render. Exit status: OK changes shown or applied,
FINDINGS nothing applicable or something refused, ERROR (mapped by
:mod:`migrator.entry`) when it could not run, or ``--write`` wrote nothing
because the migration needs files with uncommitted changes (all or nothing).

Register it in ``migrator/cli.py`` with ``main.add_command(apply)``.
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path

import click
from rich.console import Console
from rich.markup import escape
from rich.syntax import Syntax
from rich.table import Table

from codemods import (
    ApplyOptions,
    ApplyResult,
    BranchReport,
    Status,
    create_branches,
    load_inventory,
    plan_apply,
    write,
)
from inventory.models import Inventory
from migrator.console import stdout_console
from migrator.entry import MigratorCommand, finish
from migrator.errors import ExitCode, PlanFileError
from migrator.plan import PLAN_FILE, recorded_signoffs

_STYLE = {
    Status.REWRITTEN: "green",
    Status.SKIPPED: "yellow",
    Status.MANUAL: "magenta",
    Status.ALREADY: "dim",
}


class Output(StrEnum):
    DIFF = "diff"  # show, write nothing
    WRITE = "write"
    BRANCH = "branch"  # commits on review branches; the checkout is untouched


def _parse_keys(
    _ctx: click.Context, _param: click.Parameter, values: tuple[str, ...]
) -> dict[str, str]:
    keys: dict[str, str] = {}
    for value in values:
        job, sep, template = value.partition("=")
        if not sep or not job.strip() or not template:
            raise click.BadParameter(
                f"{value!r}: expected JOB=TEMPLATE, e.g. shop.mail.send=mail-{{user_id}}"
            )
        keys[job.strip()] = template
    return keys


@click.command("apply", cls=MigratorCommand)
@click.argument("path", default=".", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option(
    "--job", "jobs", multiple=True, metavar="QUALNAME", help="Only this job (repeatable)."
)
@click.option(
    "--diff/--write", "dry_run", default=True, help="Show the unified diff (default) or write it."
)
@click.option(
    "--branch", metavar="NAME", help="Create review branch(es), one commit per job, and PR text."
)
@click.option(
    "--max-sites", type=click.IntRange(min=1), help="With --branch: at most N sites per branch."
)
@click.option("--allow-dirty", is_flag=True, help="Also rewrite files with uncommitted changes.")
@click.option(
    "--key",
    "keys",
    multiple=True,
    metavar="JOB=TEMPLATE",
    callback=_parse_keys,
    help="Idempotency key template for a needs_key job, e.g. shop.pay.capture=capture-{order_id}.",
)
def apply(
    path: Path,
    jobs: tuple[str, ...],
    dry_run: bool,
    branch: str | None,
    max_sites: int | None,
    allow_dirty: bool,
    keys: dict[str, str],
) -> None:
    """Rewrite call sites of idempotent jobs (and keyed needs_key jobs) to enqueue."""
    console = stdout_console()
    options = ApplyOptions(
        jobs=jobs,
        keys=keys,
        allow_dirty=allow_dirty,
        max_sites=max_sites,
        signoffs=_signoffs(path),
    )
    mode = Output.BRANCH if branch else Output.DIFF if dry_run else Output.WRITE
    inventory = load_inventory(path)
    result, branches = _run(path, inventory, options, mode, branch)
    unknown = sorted(set(jobs) - {j.qualname for j in inventory.jobs})
    if unknown:
        console.print(f"[yellow]not in the inventory:[/] {escape(', '.join(unknown))}")
    render(console, result, branches, mode)
    for job, reason in _not_moved(result, jobs).items():
        console.print(f"[red]not moved:[/] {escape(job)}: {escape(reason)}")
    finish(ExitCode.OK if result.changes and not result.refused else ExitCode.FINDINGS)


def _signoffs(root: Path) -> dict[str, str]:
    """The phase-4 sign-offs a human recorded in the project's MIGRATION_PLAN.md."""
    plan = root / PLAN_FILE
    if not plan.is_file():
        return {}
    try:
        return recorded_signoffs(plan.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise PlanFileError(f"cannot read {plan}: {exc}") from exc


def _not_moved(result: ApplyResult, jobs: tuple[str, ...]) -> dict[str, str]:
    """Jobs named with --job none of whose sites moved, with the first reason given."""
    found: dict[str, str] = {}
    moved = {o.site.job for o in result.outcomes if o.status in (Status.REWRITTEN, Status.ALREADY)}
    for outcome in result.outcomes:
        job = outcome.site.job
        if job in jobs and job not in moved and outcome.reason:
            found.setdefault(job, outcome.reason)
    return found


def _run(
    path: Path, inventory: Inventory, options: ApplyOptions, mode: Output, branch: str | None
) -> tuple[ApplyResult, list[BranchReport]]:
    if mode is Output.BRANCH and branch:
        return create_branches(path, inventory, branch, options)
    result = plan_apply(path, inventory, options)
    if mode is Output.WRITE:
        write(result)
    return result, []


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
