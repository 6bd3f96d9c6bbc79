"""``migrator rollout set JOB inline|25%|async`` and ``migrator rollout status``.

Thin: parse options, call :mod:`migrator.gating`, render. Every process
running the app sees a change within ``rollout_refresh`` seconds (default 2);
``inline`` is the rollback.

Register it in ``migrator/cli.py`` with ``main.add_command(rollout)``.
"""

from __future__ import annotations

from pathlib import Path

import click
from rich.markup import escape
from rich.table import Table

from migrator.commands.gate import runtime_options
from migrator.console import stdout_console
from migrator.entry import MigratorGroup
from migrator.gating import open_runtime, rollout_status, set_job_rollout


@click.group("rollout", cls=MigratorGroup)
def rollout() -> None:
    """Rollout modes per job: inline, a percentage, async."""


@rollout.command("set")
@click.argument("job")
@click.argument("mode", metavar="inline|PERCENT%|async")
@runtime_options
@click.option("--by", "who", help="Who changed it (recorded).")
def set_command(
    job: str,
    mode: str,
    project: Path,
    database_url: str | None,
    redis_url: str | None,
    who: str | None,
) -> None:
    """Set JOB's rollout mode; every process follows within seconds."""
    runtime = open_runtime(project, database_url, redis_url)
    try:
        stored = set_job_rollout(runtime, job, mode, who)
    finally:
        runtime.close()
    click.echo(f"{stored.job}: {stored.label}")


@rollout.command("status")
@runtime_options
def status(project: Path, database_url: str | None, redis_url: str | None) -> None:
    """Every stored rollout (jobs without one use the configured default)."""
    runtime = open_runtime(project, database_url, redis_url)
    try:
        rows = rollout_status(runtime)
        default = runtime.settings.default_rollout
    finally:
        runtime.close()
    table = Table("job", "rollout", "updated", "by")
    for row in rows:
        when = f"{row.updated_at:%Y-%m-%d %H:%M:%S}" if row.updated_at else "-"
        table.add_row(*(escape(v) for v in (row.job, row.label, when, row.updated_by or "-")))
    console = stdout_console()
    if rows:
        console.print(table)
    console.print(f"jobs without a stored rollout: {default}")
