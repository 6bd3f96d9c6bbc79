"""``migrator rollout set|unset|status|history``: rollout modes per job, from the terminal.

Thin: parse options, call :mod:`migrator.gate`, render (:mod:`migrator.render.rollout`).
Every process running the app sees a change within ``rollout_refresh`` seconds
(default 2); ``inline`` is the rollback. ``set`` refuses a job neither ``--app`` nor
the inventory knows (``--force`` stages it), except ``set J inline`` for a job with a
stored rollout or certification (never refused), ``unset`` one with no stored mode:
one line on stderr and exit status 2.
"""

from __future__ import annotations

from pathlib import Path

import click

from migrator.cli._options import runtime_options
from migrator.cli.entry import MigratorGroup
from migrator.gate import (
    QueueTarget,
    RolloutRequest,
    rollout_changes,
    rollout_overview,
    set_rollout_mode,
    unset_rollout_mode,
)
from migrator.render.console import stdout_console
from migrator.render.rollout import (
    render_history,
    render_status,
    set_lines,
    status_json,
    unset_line,
)


@click.group("rollout", cls=MigratorGroup)
def rollout() -> None:
    """Rollout modes per job: inline, a percentage, async."""


@rollout.command("set")
@click.argument("job")
@click.argument("mode", metavar="inline|PERCENT%|async")
@runtime_options
@click.option("--by", "who", help="Who changed it (recorded).")
@click.option("--app", "app", help="The app module defining the jobs (JOB must be one of them).")
@click.option(
    "--force",
    is_flag=True,
    help="Stage a rollout for a job not known (yet); promote past the shadow evidence (audited).",
)
@click.option("--reason", help="Why (recorded in the audit; say it when forcing).")
def set_command(
    job: str,
    mode: str,
    project: Path,
    database_url: str | None,
    redis_url: str | None,
    who: str | None,
    app: str | None,
    force: bool,
    reason: str | None,
) -> None:
    """Set JOB's rollout mode; every process follows within seconds.

    async or a percentage needs clean shadow evidence (``rollout status``);
    inline never refuses.
    """
    request = RolloutRequest(job, mode, who, app, force, reason)
    outcome = set_rollout_mode(QueueTarget(project, database_url, redis_url), request)
    line, warning = set_lines(job, outcome)
    click.echo(line)
    if warning is not None:
        click.echo(warning, err=True)


@rollout.command("unset")
@click.argument("job")
@runtime_options
@click.option("--by", "who", help="Who changed it (recorded).")
def unset_command(
    job: str, project: Path, database_url: str | None, redis_url: str | None, who: str | None
) -> None:
    """Remove JOB's stored mode: it follows the configured default again."""
    outcome = unset_rollout_mode(QueueTarget(project, database_url, redis_url), job, who)
    click.echo(unset_line(job, outcome))


@rollout.command("status")
@runtime_options
@click.option("--json", "as_json", is_flag=True, help="Rows as JSON, with the shadow evidence.")
def status(project: Path, database_url: str | None, redis_url: str | None, as_json: bool) -> None:
    """Every stored rollout and every job with shadow evidence: mode, last change, evidence."""
    overview = rollout_overview(QueueTarget(project, database_url, redis_url))
    if as_json:
        click.echo(status_json(overview))
        return
    render_status(stdout_console(), overview)


@rollout.command("history")
@click.argument("job", required=False)
@runtime_options
@click.option("--limit", type=click.IntRange(min=1), default=50, show_default=True)
def history_command(
    job: str | None, project: Path, database_url: str | None, redis_url: str | None, limit: int
) -> None:
    """The audited rollout changes, newest first (of JOB if given): who, when, from, to, why."""
    changes = rollout_changes(QueueTarget(project, database_url, redis_url), job, limit)
    render_history(stdout_console(), changes)
