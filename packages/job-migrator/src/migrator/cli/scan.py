"""``migrator scan``: find in-process background work and classify each job.

Parse options, call :func:`migrator.scan.scan_project`, render the outcome
(:mod:`migrator.render.scan`). Exit status: OK clean, FINDINGS a site at or above
``--fail-on`` outside the baseline or a file that does not parse, USAGE / ERROR
(mapped by :mod:`migrator.cli.entry`).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from inventory import Idempotency
from migrator.cli._options import choice
from migrator.cli.entry import MigratorCommand, finish
from migrator.render.progress import ScanProgress, status
from migrator.render.scan import (
    PREVIEWED,
    ReportFormat,
    ReportView,
    unparsed_message,
    write_report,
)
from migrator.scan import ScanOutcome, ScanRequest, scan_project

if TYPE_CHECKING:  # migrator.plan imports the plan's checks: not paid by every scan
    from migrator.plan.model import SitePreview


@click.command("scan", cls=MigratorCommand)
@click.argument("path", type=click.Path(exists=True, path_type=Path))
@click.option(
    "--format",
    "fmt",
    type=choice(ReportFormat),
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
    "--fail-on", type=choice(Idempotency), help="Exit 1 on findings at or above this verdict."
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
    with ScanProgress.on_stderr() as progress:
        outcome = scan_project(request, progress)
    report = ReportFormat(fmt)
    preview = not no_apply_preview and report in PREVIEWED and outcome.baseline_written is None
    sites, error = _preview(outcome) if preview else ([], "")
    view = ReportView(
        outcome.inventory,
        baseline_given=baseline is not None and outcome.baseline_written is None,
        preview=tuple(sites),
        preview_error=error,
    )
    write_report(report, view, output)
    if outcome.baseline_written is not None:
        click.echo(f"wrote {outcome.baseline_written} fingerprints to {baseline}", err=True)
        return
    if outcome.unparsed:
        click.echo(unparsed_message(outcome), err=True)
    finish(outcome.exit_code)


def _preview(outcome: ScanOutcome) -> tuple[list[SitePreview], str]:
    """What `migrator apply` would do at each site: its own dry run (the plan's library)."""
    if not outcome.inventory.sites:
        return [], ""
    from migrator.plan.preview import apply_preview  # libcst: imported only when used

    with status("what `migrator apply` would do at each site..."):
        return apply_preview(Path(outcome.inventory.root), outcome.inventory)
