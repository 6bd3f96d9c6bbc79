"""``migrator rollout`` in the terminal: the status and history tables, their JSON, the lines."""

from __future__ import annotations

import json
from datetime import datetime

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from migrator.gate import RolloutOverview, RolloutSet, RolloutUnset, StatusRow, evidence_json
from queue_runtime.gate import RolloutChange


def set_lines(job: str, outcome: RolloutSet) -> tuple[str, str | None]:
    """The line on stdout, and the warning on stderr for a job not known (or None)."""
    line = f"{outcome.stored.job}: {outcome.stored.label}"
    if outcome.known:
        return line, None
    why = "staged (--force)" if outcome.forced else "rolled back (the runtime has a record of it)"
    return line, f"warning: {job} is not a known job: {why}"


def unset_line(job: str, outcome: RolloutUnset) -> str:
    return f"{job}: {outcome.removed.label} removed, follows the default ({outcome.default})"


def status_json(overview: RolloutOverview) -> str:
    return json.dumps([_row_json(row) for row in overview.rows], indent=2)


def render_status(console: Console, overview: RolloutOverview) -> None:
    rows = overview.rows
    table = Table("job", "rollout", "updated", "by", "shadow evidence", "note")
    for row in rows:
        r = row.rollout
        values = (r.job, r.label, _when(r.updated_at), r.updated_by or "-", _evidence(row))
        table.add_row(*(escape(v) for v in (*values, row.note or "-")))
    if rows:
        console.print(table)
    console.print(f"jobs without a stored rollout: {overview.default}")


def render_history(console: Console, changes: list[RolloutChange]) -> None:
    table = Table("when", "job", "from", "to", "by", "cause", "reason")
    for c in changes:
        values = (_when(c.changed_at), c.job, c.before_label, c.after_label)
        more = (c.changed_by or "-", c.cause.value, c.reason or "-")
        table.add_row(*(escape(v) for v in (*values, *more)))
    console.print(table if changes else "no rollout changes recorded")


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


def _when(at: datetime | None) -> str:
    return f"{at:%Y-%m-%d %H:%M:%S}" if at else "-"
