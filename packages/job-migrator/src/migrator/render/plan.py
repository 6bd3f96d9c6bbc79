"""``migrator plan`` in the terminal: a tree per phase, then where the plan was written."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.tree import Tree

from migrator.plan import ItemState, Phase, Plan, PlanItem, PlanOutcome
from migrator.plan.model import NOT_BUILT

_MARK = {
    ItemState.TICKED: "[green]✔[/]",
    ItemState.UNTICKED: "[red]✘[/]",
    ItemState.NOT_CHECKABLE: "[dim]○[/]",
}


def render_outcome(console: Console, outcome: PlanOutcome) -> None:
    """The plan's phases, and the line saying where it went (and, checked, whether it holds)."""
    render(console, outcome.plan)
    verdict = ""
    if outcome.checked:
        verdict = (
            "; every checkable prerequisite is in place"
            if outcome.plan.prerequisites_pass
            else "; some prerequisites are not in place"
        )
    console.print(f"wrote {escape(str(outcome.path))}{verdict}")


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
