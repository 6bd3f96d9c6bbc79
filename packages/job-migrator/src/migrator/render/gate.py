"""``migrator gate`` in the terminal: the status table and the one-line confirmations."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from migrator.gate import GateRow
from queue_runtime.gate import Certification


def render_status(console: Console, rows: list[GateRow]) -> None:
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
    console.print(table if rows else "no jobs: pass --app MODULE")


def certified_line(cert: Certification) -> str:
    return f"certified {cert.job} at fingerprint {cert.fingerprint[:12]} by {cert.certified_by}"


def revoked_line(job: str, count: int) -> str:
    return f"revoked {count} certification(s) of {job}"
