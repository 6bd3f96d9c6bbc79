"""Page-view counters."""

from __future__ import annotations

from shop.db import connect
from shop.services import current


async def record_page_view(path: str) -> None:
    """Job, an asyncio task (non-idempotent: every run adds one)."""
    with connect(current().settings.database) as conn:
        conn.execute(
            "INSERT INTO page_views (path, n) VALUES (?, 0) ON CONFLICT (path) DO NOTHING", (path,)
        )
        conn.execute("UPDATE page_views SET n = n + 1 WHERE path = ?", (path,))


def page_views(path: str) -> int:
    with connect(current().settings.database) as conn:
        row = conn.execute("SELECT n FROM page_views WHERE path = ?", (path,)).fetchone()
    return int(row[0]) if row else 0
