"""``migrator apply``: rewrite the call sites of safe jobs to enqueue through queue_runtime.

Thin: parse options, call :func:`migrator.apply.run_apply` (which calls
:mod:`codemods`), render (:mod:`migrator.render.apply`). Exit status: OK changes
shown or applied, FINDINGS nothing applicable or something refused, ERROR (mapped
by :mod:`migrator.cli.entry`) when it could not run, or ``--write`` wrote nothing
because the migration needs files with uncommitted changes (all or nothing).
"""

from __future__ import annotations

from pathlib import Path

import click

from migrator.apply import ApplyRequest, Output, run_apply
from migrator.cli._options import project_path
from migrator.cli.entry import MigratorCommand, finish
from migrator.render.apply import render_outcome
from migrator.render.console import stdout_console


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
@project_path
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
@click.option(
    "--hold-unknown",
    is_flag=True,
    help="Also move every job the scan could not decide, held: the gate runs it inline, as "
    "now, until its verdict is decided or a load test certifies it.",
)
def apply(
    path: Path,
    jobs: tuple[str, ...],
    dry_run: bool,
    branch: str | None,
    max_sites: int | None,
    allow_dirty: bool,
    keys: dict[str, str],
    hold_unknown: bool,
) -> None:
    """Rewrite call sites of idempotent jobs (and keyed needs_key jobs) to enqueue."""
    request = ApplyRequest(
        root=path,
        jobs=jobs,
        keys=keys,
        output=Output.BRANCH if branch else Output.DIFF if dry_run else Output.WRITE,
        branch=branch,
        max_sites=max_sites,
        allow_dirty=allow_dirty,
        hold_unknown=hold_unknown,
    )
    outcome = run_apply(request)
    render_outcome(stdout_console(), outcome)
    finish(outcome.exit_code)
