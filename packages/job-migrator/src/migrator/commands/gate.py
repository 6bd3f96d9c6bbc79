"""``migrator gate status|certify|revoke``: certifications, from the terminal.

Thin: parse options, call :mod:`migrator.gating`, render. Exit status OK, or
ERROR (mapped by :mod:`migrator.entry`) when the command could not be done.

Register it in ``migrator/cli.py`` with ``main.add_command(gate)``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click
from rich.markup import escape
from rich.table import Table

from migrator.console import stdout_console
from migrator.entry import MigratorGroup
from migrator.gating import certify_job, gate_status, load_app, open_runtime, revoke_job

F = TypeVar("F", bound=Callable[..., Any])


def runtime_options(fn: F) -> F:
    """--project, --database-url, --redis-url: where the queue's tables are."""
    fn = click.option("--redis-url", help="Redis of the runtime (overrides the configuration).")(fn)
    fn = click.option(
        "--database-url", help="PostgreSQL of the runtime (overrides the configuration)."
    )(fn)
    return click.option(
        "--project",
        type=click.Path(exists=True, file_okay=False, path_type=Path),
        default=".",
        show_default=True,
        help="The app's folder (its pyproject.toml has [tool.queue_runtime]).",
    )(fn)


@click.group("gate", cls=MigratorGroup)
def gate() -> None:
    """Certifications: which gated jobs may run async, for which code."""


@gate.command("status")
@runtime_options
@click.option("--app", "app", help="The app module defining the jobs (for current fingerprints).")
def status(project: Path, database_url: str | None, redis_url: str | None, app: str | None) -> None:
    """Every job: classification, current fingerprint, certification, rollout, where it runs."""
    runtime = open_runtime(project, database_url, redis_url)
    try:
        jobs = load_app(app, project) if app else {}
        rows = gate_status(runtime, jobs)
    finally:
        runtime.close()
    table = Table("job", "class", "fingerprint", "certified", "by / at", "rollout", "runs")
    for row in rows:
        latest = row.latest
        by = f"{latest.certified_by} {latest.certified_at:%Y-%m-%d %H:%M}" if latest else "-"
        if latest and latest.revoked_at:
            by += " (revoked)"
        fp = row.fingerprint[:12] if row.fingerprint else "? (--app)"
        cert = "yes" if row.certified else ("n/a" if not row.gated else "no")
        values = (row.job, row.classification, fp, cert, by, row.rollout.label, row.runs)
        table.add_row(*(escape(str(v)) for v in values))
    stdout_console().print(table if rows else "no jobs: pass --app MODULE")


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
    runtime = open_runtime(project, database_url, redis_url)
    try:
        cert = certify_job(runtime, load_app(app, project), job, figures, who)
    finally:
        runtime.close()
    click.echo(
        f"certified {cert.job} at fingerprint {cert.fingerprint[:12]} by {cert.certified_by}"
    )


@gate.command("revoke")
@click.argument("job")
@runtime_options
def revoke_command(
    job: str, project: Path, database_url: str | None, redis_url: str | None
) -> None:
    """Revoke JOB's certifications: the gate closes (within the processes' refresh interval)."""
    runtime = open_runtime(project, database_url, redis_url)
    try:
        count = revoke_job(runtime, job)
    finally:
        runtime.close()
    click.echo(f"revoked {count} certification(s) of {job}")
