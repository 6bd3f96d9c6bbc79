"""``migrator loadtest``: the report as a rich terminal view, Markdown, and JSON."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from rich.console import Console, Group, RenderableType
from rich.markup import escape
from rich.panel import Panel
from rich.table import Table

from migrator.errors import OutputError
from migrator.loadtest.report import DuplicateCompletion, LoadTestReport

MAX_DUPLICATES_SHOWN = 20


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f} ms"


def _rows(report: LoadTestReport) -> list[tuple[str, str]]:
    spec = report.spec
    lat = report.latency
    bursts = ", ".join(
        f"{b.factor:g}x for {b.seconds:g}s" + (f" from {b.start:g}s" if b.start is not None else "")
        for b in spec.bursts
    )
    return [
        (
            "load",
            f"{spec.rate:g}/s for {spec.duration:g}s" + (f", bursts {bursts}" if bursts else ""),
        ),
        ("workers", str(spec.workers)),
        ("chaos", ", ".join(k.value for k in spec.chaos) or "none"),
        ("enqueued", str(report.enqueued)),
        ("succeeded", str(report.succeeded)),
        ("lost", str(report.lost)),
        ("unfinished", str(report.unfinished)),
        ("dead-lettered (DLQ)", str(report.dead)),
        ("retries", str(report.retries)),
        ("throughput", f"{report.throughput:.1f} jobs/s"),
        ("dispatch latency p50", _ms(lat.p50_ms)),
        ("dispatch latency p95", _ms(lat.p95_ms)),
        ("dispatch latency p99", f"{_ms(lat.p99_ms)} (SLA {spec.sla_p99_ms:g} ms)"),
        ("executions", str(report.executions)),
        ("duplicate deliveries", str(report.duplicate_deliveries)),
        ("duplicate completions", str(len(report.duplicate_completions))),
        ("app's key", report.key_line()),
        ("fingerprint", (report.fingerprint or "-")[:16]),
    ]


def _verdict(report: LoadTestReport) -> str:
    if report.passed:
        cert = (
            f"; certified by {report.certified_by} at fingerprint {(report.fingerprint or '')[:12]}"
            if report.certified
            else "; not certified"
        )
        return f"PASSED{cert}"
    return "FAILED: " + "; ".join(report.reasons)


def _duplicate_line(d: DuplicateCompletion) -> str:
    label = f"key {d.key}" if d.keyed else f"job {d.key} (no key)"
    runs = ", ".join(
        f"job {e.job_id} attempt {e.attempt} pid {e.pid}"
        + (
            " completed"
            if e.finished_at and not e.failed
            else " cut short"
            if not e.finished_at
            else " raised"
        )
        for e in d.executions
    )
    why = f"; failed attempts: {'; '.join(d.attempt_errors)}" if d.attempt_errors else ""
    return f"{label}: completed {d.completions} times ({runs}){why}"


def render_terminal(report: LoadTestReport, console: Console) -> None:
    table = Table(show_header=False, box=None, pad_edge=False)
    table.add_column(style="bold")
    table.add_column()
    for name, value in _rows(report):
        table.add_row(name, escape(value))
    parts: list[RenderableType] = [table]
    if report.chaos_events:
        chaos = Table("at", "kind", "what happened", box=None, pad_edge=False)
        for e in report.chaos_events:
            chaos.add_row(f"{e.offset:.1f}s", e.kind.value, escape(e.detail))
        parts.append(chaos)
    if report.duplicate_completions:
        dup = Table("duplicate completions", box=None, pad_edge=False, style="red")
        for d in report.duplicate_completions[:MAX_DUPLICATES_SHOWN]:
            dup.add_row(escape(_duplicate_line(d)))
        more = len(report.duplicate_completions) - MAX_DUPLICATES_SHOWN
        if more > 0:
            dup.add_row(f"... and {more} more (see --json)")
        parts.append(dup)
    for note in report.notes:
        parts.append(f"[dim]{escape(note)}[/]")
    style = "green" if report.passed else "red"
    parts.append(f"[bold {style}]{escape(_verdict(report))}[/]")
    console.print(
        Panel(
            Group(*parts),
            title=f"loadtest {escape(report.job)} (run {report.run_id})",
            border_style=style,
        )
    )


def render_markdown(report: LoadTestReport) -> str:
    lines = [
        f"# Load test: `{report.job}`",
        "",
        f"**{_verdict(report)}**",
        "",
        f"Run `{report.run_id}`, {report.started_at.isoformat(timespec='seconds')} to"
        f" {report.finished_at.isoformat(timespec='seconds')}, sandbox `{report.spec.sandbox}`.",
        "",
        "| figure | value |",
        "|---|---|",
        *[f"| {name} | {value} |" for name, value in _rows(report)],
        "",
    ]
    if report.chaos_events:
        lines += ["## Chaos", "", "| at | kind | what happened |", "|---|---|---|"]
        lines += [
            f"| {e.offset:.1f}s ({e.at.isoformat(timespec='milliseconds')}) | {e.kind.value} | {e.detail} |"
            for e in report.chaos_events
        ]
        lines.append("")
    if report.duplicate_completions:
        lines += ["## Duplicate completions", ""]
        lines += [f"- {_duplicate_line(d)}" for d in report.duplicate_completions]
        lines.append("")
    if report.reasons:
        lines += ["## Why it failed", "", *[f"- {r}" for r in report.reasons], ""]
    if report.notes:
        lines += ["## Notes", "", *[f"- {n}" for n in report.notes], ""]
    return "\n".join(lines)


def render_json(report: LoadTestReport) -> str:
    return report.model_dump_json(indent=2)


def write_reports(report: LoadTestReport, json_out: Path | None, markdown_out: Path | None) -> None:
    """The report as JSON and as Markdown into the files asked for (OutputError if one fails)."""
    for path, text in ((json_out, render_json(report)), (markdown_out, render_markdown(report))):
        if path is None:
            continue
        try:
            path.write_text(text + "\n", encoding="utf-8")
        except OSError as exc:
            raise OutputError(f"cannot write {path}: {exc.strerror or exc}") from exc


def progress_printer() -> Callable[[str], None]:
    """The load test's progress lines, dimmed on stderr."""
    err = Console(stderr=True, soft_wrap=True)
    return lambda message: err.print(f"[dim]{message}[/]")
