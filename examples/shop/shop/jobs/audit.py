"""The audit trail of orders."""

from __future__ import annotations

from datetime import UTC, datetime

from ..db import connect
from ..services import current


def write_audit(event: str, order_id: int) -> None:
    """Job (non-idempotent: a second run writes a second row)."""
    at = datetime.now(UTC).isoformat()
    with connect(current().settings.database) as conn:
        conn.execute(
            "INSERT INTO audit_log (event, order_id, at) VALUES (?, ?, ?)", (event, order_id, at)
        )


def audit_events(order_id: int) -> list[str]:
    with connect(current().settings.database) as conn:
        rows = conn.execute(
            "SELECT event FROM audit_log WHERE order_id = ? ORDER BY id", (order_id,)
        )
        return [row[0] for row in rows]
