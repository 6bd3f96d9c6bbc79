"""``migrator gate status|certify|revoke``: certifications, from the terminal.

Thin: parse options, call :mod:`migrator.gate`, render (:mod:`migrator.render.gate`).
Exit status OK, or ERROR (mapped by :mod:`migrator.cli.entry`) when the command
could not be done.
"""

from __future__ import annotations

from pathlib import Path

import click

from migrator.cli._options import runtime_options
from migrator.cli.entry import MigratorGroup
from migrator.gate import QueueTarget, certify_with_report, revoke_certifications, show_gate
from migrator.render.console import stdout_console
from migrator.render.gate import certified_line, render_status, revoked_line


@click.group("gate", cls=MigratorGroup)
def gate() -> None:
    """Certifications: which gated jobs may run async, for which code."""


@gate.command("status")
@runtime_options
@click.option("--app", "app", help="The app module defining the jobs (for current fingerprints).")
def status(project: Path, database_url: str | None, redis_url: str | None, app: str | None) -> None:
    """Every job: classification, current fingerprint, certification, rollout, where it runs."""
    rows = show_gate(QueueTarget(project, database_url, redis_url), app)
    render_status(stdout_console(), rows)


@gate.command("certify")
@click.argument("job")
@runtime_options
@click.option("--app", "app", required=True, help="The app module defining the job.")
@click.option(
    "--figures",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    required=True,
    help="The load test's report (`migrator loadtest --json`): passed, this job, its current code.",
)
@click.option("--by", "who", required=True, help="Who certifies (a name).")
def certify_command(
    job: str,
    project: Path,
    database_url: str | None,
    redis_url: str | None,
    app: str,
    figures: Path,
    who: str,
) -> None:
    """Certify JOB for its current code (the fingerprint of the loaded --app)."""
    target = QueueTarget(project, database_url, redis_url)
    click.echo(certified_line(certify_with_report(target, app, job, figures, who)))


@gate.command("revoke")
@click.argument("job")
@runtime_options
def revoke_command(
    job: str, project: Path, database_url: str | None, redis_url: str | None
) -> None:
    """Revoke JOB's certifications: the gate closes (within the processes' refresh interval)."""
    count = revoke_certifications(QueueTarget(project, database_url, redis_url), job)
    click.echo(revoked_line(job, count))
