"""``migrator rollout set|unset|status|history``: rollout modes per job, from the terminal.

Thin: parse options, call :mod:`migrator.rollouts`, render. Every process
running the app sees a change within ``rollout_refresh`` seconds (default 2);
``inline`` is the rollback. ``set`` refuses a job neither ``--app`` nor the
inventory knows (``--force`` stages it), except ``set J inline`` for a job with a
stored rollout or certification (never refused), ``unset`` one with no stored mode:
one line on stderr and exit status 2.

Register it in ``migrator/cli.py`` with ``main.add_command(rollout)``.
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import click
from rich.markup import escape
from rich.table import Table

from migrator.commands.gate import runtime_options
from migrator.console import stdout_console
from migrator.entry import MigratorGroup
from migrator.gating import open_runtime
from migrator.promotion import evidence_json
from migrator.rollouts import (
    StatusRow,
    history,
    known_jobs,
    rollout_status,
    set_job_rollout,
    unset_job_rollout,
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
    runtime = open_runtime(project, database_url, redis_url)
    try:
        known = known_jobs(runtime, project, app)
        stored = set_job_rollout(runtime, known, job, mode, who, force, reason)
    finally:
        runtime.close()
    click.echo(f"{stored.job}: {stored.label}")
    if job not in known:
        why = "staged (--force)" if force else "rolled back (the runtime has a record of it)"
        click.echo(f"warning: {job} is not a known job: {why}", err=True)


@rollout.command("unset")
@click.argument("job")
@runtime_options
@click.option("--by", "who", help="Who changed it (recorded).")
def unset_command(
    job: str, project: Path, database_url: str | None, redis_url: str | None, who: str | None
) -> None:
    """Remove JOB's stored mode: it follows the configured default again."""
    runtime = open_runtime(project, database_url, redis_url)
    try:
        removed = unset_job_rollout(runtime, job, who)
        default = runtime.settings.default_rollout
    finally:
        runtime.close()
    click.echo(f"{job}: {removed.label} removed, follows the default ({default})")


@rollout.command("status")
@runtime_options
@click.option("--json", "as_json", is_flag=True, help="Rows as JSON, with the shadow evidence.")
def status(project: Path, database_url: str | None, redis_url: str | None, as_json: bool) -> None:
    """Every stored rollout and every job with shadow evidence: mode, last change, evidence."""
    runtime = open_runtime(project, database_url, redis_url)
    try:
        rows = rollout_status(runtime)
        default = runtime.settings.default_rollout
    finally:
        runtime.close()
    if as_json:
        click.echo(json.dumps([_row_json(row) for row in rows], indent=2))
        return
    table = Table("job", "rollout", "updated", "by", "shadow evidence", "note")
    for row in rows:
        r = row.rollout
        values = (r.job, r.label, _when(r.updated_at), r.updated_by or "-", _evidence(row))
        table.add_row(*(escape(v) for v in (*values, row.note or "-")))
    console = stdout_console()
    if rows:
        console.print(table)
    console.print(f"jobs without a stored rollout: {default}")


def _evidence(row: StatusRow) -> str:
    found = row.promotion
    if found is None:
        return "-"
    figures = found.evidence.summary() if found.evidence else "none"
    verdict = "promotable" if found.refusal is None else f"not promotable: {found.refusal}"
    return f"{figures} ({verdict})"


def _row_json(row: StatusRow) -> dict[str, object]:
    r = row.rollout
    stored = r.updated_at is not None
    out: dict[str, object] = {"job": r.job, "rollout": r.label, "stored": stored}
    out |= {"updated_at": r.updated_at.isoformat() if r.updated_at else None}
    out |= {"updated_by": r.updated_by, "note": row.note or None}
    out["shadow"] = evidence_json(row.promotion) if row.promotion else None
    return out


@rollout.command("history")
@click.argument("job", required=False)
@runtime_options
@click.option("--limit", type=click.IntRange(min=1), default=50, show_default=True)
def history_command(
    job: str | None, project: Path, database_url: str | None, redis_url: str | None, limit: int
) -> None:
    """The audited rollout changes, newest first (of JOB if given): who, when, from, to, why."""
    runtime = open_runtime(project, database_url, redis_url)
    try:
        changes = history(runtime, job, limit)
    finally:
        runtime.close()
    table = Table("when", "job", "from", "to", "by", "cause", "reason")
    for c in changes:
        values = (_when(c.changed_at), c.job, c.before_label, c.after_label)
        more = (c.changed_by or "-", c.cause.value, c.reason or "-")
        table.add_row(*(escape(v) for v in (*values, *more)))
    stdout_console().print(table if changes else "no rollout changes recorded")


def _when(at: datetime | None) -> str:
    return f"{at:%Y-%m-%d %H:%M:%S}" if at else "-"
