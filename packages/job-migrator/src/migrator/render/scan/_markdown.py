"""A Markdown report for pull requests: a table per verdict, evidence as lists."""

from __future__ import annotations

from inventory import Idempotency
from migrator.render.scan.view import VERDICT_ORDER, JobGroup, ReportView, chain_text, site_label
from migrator.vocabulary import MOVES

HEADINGS = {
    Idempotency.UNSAFE: "Unsafe: money or account state, never moved before a load test",
    Idempotency.NON_IDEMPOTENT: "Not idempotent: runs twice, acts twice",
    Idempotency.NEEDS_KEY: "Needs an idempotency key",
    Idempotency.UNKNOWN: "Unknown: review by hand",
    Idempotency.IDEMPOTENT: "Idempotent: safe to retry",
}


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render_markdown(view: ReportView) -> str:
    lines = ["# migrator scan", "", *_summary(view)]
    for verdict in VERDICT_ORDER:
        groups = [group for group in view.groups if group.verdict is verdict]
        if groups:
            lines += ["", f"## {HEADINGS[verdict]} ({len(groups)})", "", *_verdict_table(groups)]
            for group in groups:
                lines += ["", *_job_details(view, group)]
    lines += _errors(view)
    return "\n".join(lines) + "\n"


def _summary(view: ReportView) -> list[str]:
    stats = view.inventory.stats
    counts = view.counts()
    rows = [
        "| Verdict | Jobs |",
        "|---|---:|",
        *(f"| `{v.value}` | {counts[v]} |" for v in VERDICT_ORDER),
    ]
    scanned = f"{stats.files_scanned} files, {stats.lines} lines, {len(view.inventory.errors)} files not scanned."
    baseline = f" {view.baselined_sites} sites are in the baseline." if view.baselined_sites else ""
    return [
        f"{len(view.groups)} jobs started from {len(view.inventory.sites)} sites. {scanned}{baseline}",
        *_apply_summary(view),
        "",
        *rows,
    ]


def _apply_summary(view: ReportView) -> list[str]:
    if view.preview_error:
        return ["", f"`migrator apply`: {view.preview_error}"]
    if not view.preview:
        return []
    moves = sum(item.outcome == MOVES for item in view.preview)
    return [
        "",
        f"`migrator apply` (its dry run, with its defaults) moves {moves} of "
        f"{len(view.preview)} sites; each site below says what it will do and why.",
    ]


def _verdict_table(groups: list[JobGroup]) -> list[str]:
    rows = ["| Job | Confidence | Sites | Key |", "|---|---|---:|---|"]
    for group in groups:
        confidence = group.job.confidence.value if group.job else "-"
        key = _key_cell(group)
        rows.append(
            f"| `{_cell(group.title)}` | {confidence} | {len(group.sites)} | {_cell(key)} |"
        )
    return rows


def _key_cell(group: JobGroup) -> str:
    """The declared key, else the suggested one; notification fast-track jobs say so."""
    job = group.job
    if job is None:
        return ""
    key = f"`{job.declared_key}` (declared)" if job.declared_key else ""
    if not key and job.suggested_key:
        key = f"`{job.suggested_key}` (suggested)"
    return (key + " (notification fast track)").strip() if job.fast_track else key


def _job_details(view: ReportView, group: JobGroup) -> list[str]:
    lines = [f"### `{group.title}`", "", *_reasons(group), "Started at:", ""]
    previews = {item.site: item for item in view.previews(group)}
    for site in group.sites:
        mark = " (baseline)" if site.baselined else ""
        preview = previews.get(site_label(site))
        apply = ""
        if preview is not None:
            why = f": {preview.why}" if preview.why else ""
            apply = f"; `migrator apply`: **{preview.outcome}**{why}"
        lines.append(f"- `{site_label(site)}` via `{site.pattern.value}`{mark}{apply}")
    evidence = group.job.evidence if group.job else []
    if evidence:
        lines += ["", "Evidence:", ""]
    for item in evidence:
        where = f" (`{item.location.path}:{item.location.line}`)" if item.location else ""
        chain = f"\n  - chain: {chain_text(item.chain)}" if item.chain else ""
        lines.append(f"- {item.message}{where}{chain}")
    return lines


def _reasons(group: JobGroup) -> list[str]:
    if not group.unresolved_call:
        return []
    found = sorted({site.unresolved_reason for site in group.sites if site.unresolved_reason})
    return [f"Why unresolved: {_cell(found[0])}", ""] if found else []


def _errors(view: ReportView) -> list[str]:
    if not view.inventory.errors:
        return []
    rows = ["", "## Files not scanned", "", "| Path | Kind | Reason |", "|---|---|---|"]
    for error in view.inventory.errors:
        rows.append(f"| `{_cell(error.path)}` | {error.kind.value} | {_cell(error.reason)} |")
    return rows
