"""``migrator plan``: write the phased rollout checklist, optionally verified live.

Thin: parse options, call :func:`migrator.plan.run_plan`, render a tree per
phase (:mod:`migrator.render.plan`). Exit status: OK written (with ``--check``: and every checkable
prerequisite is in place), FINDINGS with ``--check`` when one is not, ERROR
(mapped by :mod:`migrator.cli.entry`; no inventory: run ``migrator scan`` first).
"""

from __future__ import annotations

from pathlib import Path

import click

from migrator.cli._options import project_path
from migrator.cli.entry import MigratorCommand, finish
from migrator.plan import run_plan
from migrator.render.console import stdout_console
from migrator.render.plan import render_outcome


@click.command("plan", cls=MigratorCommand)
@project_path
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
    render_outcome(stdout_console(), outcome)
    finish(outcome.exit_code)
