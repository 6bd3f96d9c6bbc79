"""``migrator plan``: write the phased rollout checklist, optionally verified live.

Thin: parse options, call :func:`migrator.plan.run_plan`, render a tree per
phase. Exit status: OK written (with ``--check``: and every checkable
prerequisite is in place), FINDINGS with ``--check`` when one is not, ERROR
(mapped by :mod:`migrator.entry`; no inventory: run ``migrator scan`` first).

Register it in ``migrator/cli.py`` with ``main.add_command(plan)``.
"""

from __future__ import annotations

from pathlib import Path

import click
from rich.console import Console
from rich.markup import escape
from rich.tree import Tree

from migrator.console import stdout_console
from migrator.entry import MigratorCommand, finish
from migrator.plan import ItemState, Phase, Plan, PlanItem, run_plan
from migrator.plan.model import NOT_BUILT

_MARK = {
    ItemState.TICKED: "[green]✔[/]",
    ItemState.UNTICKED: "[red]✘[/]",
    ItemState.NOT_CHECKABLE: "[dim]○[/]",
}


@click.command("plan", cls=MigratorCommand)
@click.argument("path", default=".", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--check", "live", is_flag=True, help="Verify the prerequisites on the live servers.")
@click.option("--database-url", help="PostgreSQL of the runtime (overrides the configuration).")
@click.option("--redis-url", help="Redis of the runtime (overrides the configuration).")
@click.option(
    "--metrics-url",
    help="A worker's metrics endpoint (overrides [tool.migrator.plan] metrics_url).",
)
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write the plan here (default: PATH/MIGRATION_PLAN.md).",
)
def plan(
    path: Path,
    live: bool,
    database_url: str | None,
    redis_url: str | None,
    metrics_url: str | None,
    output: Path | None,
) -> None:
    """Write PATH/MIGRATION_PLAN.md: prerequisites, then the jobs phase by phase."""
    outcome = run_plan(
        path,
        output,
        live=live,
        database_url=database_url,
        redis_url=redis_url,
        metrics_url=metrics_url,
    )
    console = stdout_console()
    render(console, outcome.plan)
    verdict = ""
    if outcome.checked:
        verdict = (
            "; every checkable prerequisite is in place"
            if outcome.plan.prerequisites_pass
            else "; some prerequisites are not in place"
        )
    console.print(f"wrote {escape(str(outcome.path))}{verdict}")
    finish(outcome.exit_code)


def render(console: Console, plan: Plan) -> None:
    for phase in plan.phases:
        console.print(_phase_tree(phase))


def _phase_tree(phase: Phase) -> Tree:
    items = phase.all_items()
    done = sum(i.state is ItemState.TICKED for i in items)
    tree = Tree(f"[bold]{escape(phase.title)}[/] [dim]({done}/{len(items)})[/]")
    if not items:
        tree.add("[dim]no jobs in this phase[/]")
    for item in phase.items:
        _leaf(tree, item)
    for group in phase.groups:
        branch = tree.add(escape(group.header))
        for item in group.items:
            _leaf(branch, item)
    return tree


def _leaf(tree: Tree, item: PlanItem) -> None:
    text = f"{_MARK[item.state]} {escape(item.title)}"
    if item.state is ItemState.NOT_CHECKABLE:
        text += f" [dim]— {NOT_BUILT}[/]"
    elif item.evidence:
        text += f"\n  [dim]{escape(item.evidence)}[/]"
    if item.command and item.state is not ItemState.TICKED:
        text += f"\n  [cyan]{escape(item.command)}[/]"
    tree.add(text)
