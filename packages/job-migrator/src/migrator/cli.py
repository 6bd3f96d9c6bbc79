"""The ``migrator`` command line: parse options, call one library function, render.

Exit status (:class:`~migrator.errors.ExitCode`): OK clean, FINDINGS at or
above ``--fail-on`` (after the baseline), USAGE / ERROR for bad options and
anything that stopped the command (mapped in :mod:`migrator.entry`).
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import TYPE_CHECKING

import click
from rich.console import Console

from inventory import Idempotency
from migrator.console import stdout_console
from migrator.entry import MigratorGroup, finish
from migrator.errors import OutputError
from migrator.progress import ScanProgress
from migrator.report import ReportFormat, ReportView, render
from migrator.scan import ScanOutcome, ScanRequest, scan_project

if TYPE_CHECKING:  # migrator.plan imports the plan's checks: not paid by every scan
    from migrator.plan.model import SitePreview

# Commands other than scan are imported when used: libcst, psycopg and the
# runtime cost ~0.5 s of import time a warm `migrator scan` in CI should not pay.
LAZY_COMMANDS = {
    "apply": "migrator.commands.apply",
    "gate": "migrator.commands.gate",
    "loadtest": "migrator.commands.loadtest",
    "plan": "migrator.commands.plan",
    "rollout": "migrator.commands.rollout",
}


class _Group(MigratorGroup):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *LAZY_COMMANDS})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        module = LAZY_COMMANDS.get(cmd_name)
        if module is None:
            return super().get_command(ctx, cmd_name)
        command = getattr(importlib.import_module(module), cmd_name)
        assert isinstance(command, click.Command), module
        return command


@click.group(cls=_Group)
@click.version_option(package_name="job-migrator", prog_name="migrator")
def main() -> None:
    """Find in-process background work and move it onto a job queue safely."""


def _choice(enum: type[ReportFormat] | type[Idempotency]) -> click.Choice[str]:
    return click.Choice([member.value for member in enum])


@main.command()
@click.argument("path", type=click.Path(exists=True, path_type=Path))
@click.option(
    "--format",
    "fmt",
    type=_choice(ReportFormat),
    default=ReportFormat.TABLE.value,
    show_default=True,
)
@click.option(
    "-o", "--output", type=click.Path(dir_okay=False, path_type=Path), help="Write the report here."
)
@click.option(
    "--baseline",
    type=click.Path(dir_okay=False, path_type=Path),
    help="JSON file of accepted findings.",
)
@click.option(
    "--update-baseline", is_flag=True, help="Write the current findings to --baseline and exit 0."
)
@click.option(
    "--fail-on", type=_choice(Idempotency), help="Exit 1 on findings at or above this verdict."
)
@click.option(
    "--no-cache",
    is_flag=True,
    help="Summarise every file again; read and write no cache under PATH/.migrator/ "
    "(with -o, write nothing under PATH at all).",
)
@click.option("--include-tests", is_flag=True, help="Also scan test code.")
@click.option(
    "--jobs", type=click.IntRange(min=1), help="Worker processes (default: one per core)."
)
@click.option(
    "--ignore-errors",
    is_flag=True,
    help="Files that do not parse are listed but do not fail the run.",
)
@click.option(
    "--python",
    "python",
    type=click.Path(dir_okay=False, path_type=Path),
    help="The project's interpreter: jobs' calls into its installed libraries are followed "
    "(default: [tool.migrator] python, the project's virtualenv, else this interpreter).",
)
@click.option(
    "--no-apply-preview",
    is_flag=True,
    help="Leave out what `migrator apply` would do at each site (table and markdown reports; "
    "its dry run parses the files the scan names: seconds on a large project).",
)
def scan(
    path: Path,
    fmt: str,
    output: Path | None,
    baseline: Path | None,
    update_baseline: bool,
    fail_on: str | None,
    no_cache: bool,
    include_tests: bool,
    jobs: int | None,
    ignore_errors: bool,
    python: Path | None,
    no_apply_preview: bool,
) -> None:
    """Find every place PATH starts work in-process and classify each job.

    PATH is a folder, or one Python file (scanned with the rest of its project, reported alone).
    """
    if update_baseline and baseline is None:
        raise click.UsageError("--update-baseline needs --baseline FILE")
    request = ScanRequest(
        root=path,
        baseline=baseline,
        update_baseline=update_baseline,
        fail_on=Idempotency(fail_on) if fail_on else None,
        use_cache=not no_cache,
        include_tests=include_tests,
        jobs=jobs,
        ignore_errors=ignore_errors,
        python=str(python) if python else None,
        # --no-cache with -o leaves the scanned tree as it was: the report is in FILE.
        write_inventory=not (no_cache and output is not None),
    )
    with ScanProgress(Console(stderr=True)) as progress:
        outcome = scan_project(request, progress)
    report = ReportFormat(fmt)
    preview = not no_apply_preview and report in PREVIEWED and outcome.baseline_written is None
    _report(outcome, report, output, baseline is not None, preview)
    if outcome.baseline_written is not None:
        click.echo(f"wrote {outcome.baseline_written} fingerprints to {baseline}", err=True)
        return
    if outcome.unparsed:
        click.echo(_unparsed_message(outcome), err=True)
    finish(outcome.exit_code)


def _unparsed_message(outcome: ScanOutcome) -> str:
    first = outcome.unparsed[0]
    more = f" and {len(outcome.unparsed) - 1} more" if len(outcome.unparsed) > 1 else ""
    return (
        f"error: {first.path}{more} could not be parsed ({first.reason}): the scan is "
        "incomplete, so the run fails (pass --ignore-errors to list them only)"
    )


def _report(
    outcome: ScanOutcome,
    fmt: ReportFormat,
    output: Path | None,
    baseline_given: bool,
    preview: bool,
) -> None:
    sites, error = _preview(outcome) if preview else ([], "")
    view = ReportView(
        outcome.inventory,
        baseline_given=baseline_given and outcome.baseline_written is None,
        preview=tuple(sites),
        preview_error=error,
    )
    if output is None:
        render(fmt, view, stdout_console(soft_wrap=fmt is not ReportFormat.TABLE))
        return
    try:
        with output.open("w", encoding="utf-8") as handle:
            render(fmt, view, Console(file=handle, width=160, no_color=True))
    except OSError as exc:
        raise OutputError(f"cannot write {output}: {exc.strerror or exc}") from exc


# The reports people read say per site what `migrator apply` will do (JSON and SARIF stay
# the scan's own contract: `migrator plan --format json` carries the preview for machines).
PREVIEWED = frozenset({ReportFormat.TABLE, ReportFormat.MARKDOWN})


def _preview(outcome: ScanOutcome) -> tuple[list[SitePreview], str]:
    if not outcome.inventory.sites:
        return [], ""
    from migrator.plan.preview import apply_preview  # libcst: imported only when used

    with Console(stderr=True).status("what `migrator apply` would do at each site..."):
        return apply_preview(Path(outcome.inventory.root), outcome.inventory)
