"""``migrator loadtest``: run a job through the real runtime under load and chaos; certify on a pass.

Thin: parse options into a :class:`~migrator.loadtest.LoadTestSpec`, call
:func:`~migrator.loadtest.run_loadtest`, render the report (terminal, and
``--markdown`` / ``--json`` files). Exit status: OK passed and certified,
FINDINGS failed (the reasons and any duplicate completions are printed) or
passed but could not certify (the note says why),
USAGE / ERROR it could not run (a bad option; no ``--sandbox``, an
unreachable sandbox: mapped by :mod:`migrator.cli.entry`).
"""

from __future__ import annotations

from pathlib import Path

import click
from pydantic import ValidationError

from migrator.cli.entry import MigratorCommand, finish
from migrator.errors import NoSandbox
from migrator.loadtest import (
    LoadTestSpec,
    SpecError,
    certify_target,
    declared_key,
    parse_burst,
    parse_chaos,
    parse_duration,
    run_loadtest,
)
from migrator.render.console import stdout_console
from migrator.render.loadtest import progress_printer, render_terminal, write_reports

NO_SANDBOX = (
    "refusing to run without --sandbox SETTINGS: name the settings module whose import"
    " configures queue_runtime for a sandbox database and Redis (the job's effects really happen)"
)


@click.command("loadtest", cls=MigratorCommand)
@click.argument("job")
@click.option(
    "--sandbox", help="Settings module configuring queue_runtime for a sandbox (required)."
)
@click.option("--rate", required=True, type=float, help="Steady enqueue rate, jobs per second.")
@click.option("--duration", required=True, help="How long the load lasts: 30s, 2m, 500ms.")
@click.option("--burst", help="Burst profile: FACTORx:DURATION[@START],... e.g. 10x:30s.")
@click.option("--chaos", help="Comma-separated: kill-workers, redis-restart, pg-terminate.")
@click.option("--args", "args_", metavar="MODULE:FUNC", help="Argument generator, called with i.")
@click.option("--key", metavar="TEMPLATE", help="Idempotency key per job, e.g. 'order-{run}-{i}'.")
@click.option(
    "--app-key",
    metavar="KEY",
    help="The app's real idempotency key (default: its [tool.migrator.jobs] key): pairs of"
    " different calls enqueued with it must both run.",
)
@click.option("--job-module", help="Module registering JOB (default: derived from its name).")
@click.option("--workers", default=2, show_default=True, type=click.IntRange(1, 32))
@click.option("--concurrency", type=click.IntRange(min=1), help="Per-pool concurrency of workers.")
@click.option(
    "--kills",
    default=2,
    show_default=True,
    type=click.IntRange(1, 20),
    help="SIGKILLs by kill-workers.",
)
@click.option("--sla-p99-ms", default=1000.0, show_default=True, type=float)
@click.option(
    "--drain-timeout", default="60s", show_default=True, help="Wait for the queue after the load."
)
@click.option("--certify-by", help="Who certifies on a pass (default: $USER).")
@click.option(
    "--certify-into",
    "certify_into",
    help="The app's PostgreSQL URL: a pass certifies there (schema from the app's"
    " [tool.queue_runtime]). Default: the app's own [tool.queue_runtime] settings here;"
    " the sandbox's schema only when the app has no database_url.",
)
@click.option("--json", "json_out", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--markdown", "markdown_out", type=click.Path(dir_okay=False, path_type=Path))
def loadtest(
    job: str,
    sandbox: str | None,
    rate: float,
    duration: str,
    burst: str | None,
    chaos: str | None,
    args_: str | None,
    key: str | None,
    app_key: str | None,
    job_module: str | None,
    workers: int,
    concurrency: int | None,
    kills: int,
    sla_p99_ms: float,
    drain_timeout: str,
    certify_by: str | None,
    certify_into: str | None,
    json_out: Path | None,
    markdown_out: Path | None,
) -> None:
    """Load-test JOB in the sandbox with chaos; a pass certifies its current code."""
    if not sandbox:
        raise NoSandbox(NO_SANDBOX)
    try:
        spec = LoadTestSpec(
            job=job,
            sandbox=sandbox,
            job_module=job_module,
            rate=rate,
            duration=parse_duration(duration),
            bursts=parse_burst(burst),
            chaos=parse_chaos(chaos),
            args=args_,
            key=key,
            app_key=app_key or declared_key(job, Path.cwd()),
            workers=workers,
            concurrency=concurrency,
            kill_count=kills,
            sla_p99_ms=sla_p99_ms,
            drain_timeout=parse_duration(drain_timeout),
            certify_by=certify_by,
        )
    except (SpecError, ValidationError) as exc:
        raise click.UsageError(str(exc)) from exc
    target = certify_target(Path.cwd(), certify_into)
    report = run_loadtest(spec, progress=progress_printer(), certify_into=target)
    render_terminal(report, stdout_console())
    write_reports(report, json_out, markdown_out)
    finish(report.exit_code)
