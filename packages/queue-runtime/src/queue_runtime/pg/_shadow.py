"""Shadow evidence on PostgreSQL: the ``shadow_evidence`` table (migration 0007).

One row per (job, fingerprint). A flush adds a process's counts with an
UPSERT (``checked = checked + EXCLUDED.checked``...): the row lock of
``ON CONFLICT DO UPDATE`` serialises concurrent flushes of one record, so no
count is lost. The examples keep the newest ``KEPT_EXAMPLES`` failures. A
flush is one transaction for all its rows, in (job, fingerprint) order so two
processes flushing the same records cannot deadlock.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from psycopg import sql
from psycopg.rows import TupleRow
from psycopg.types.json import Jsonb

from queue_runtime.pg.connect import Conn
from queue_runtime.shadow_model import KEPT_EXAMPLES, ShadowDelta, ShadowEvidence, ShadowFailure

_COLUMNS = "job, fingerprint, checked, failed, unencodable, examples, first_seen, last_seen"

UPSERT_SHADOW = f"""
INSERT INTO {{s}}.shadow_evidence AS e (job, fingerprint, checked, failed, unencodable, examples)
VALUES (%s, %s, %s, %s, %s, %s)
ON CONFLICT (job, fingerprint) DO UPDATE SET
    checked = e.checked + EXCLUDED.checked,
    failed = e.failed + EXCLUDED.failed,
    unencodable = e.unencodable + EXCLUDED.unencodable,
    examples = (
        SELECT coalesce(jsonb_agg(x.v ORDER BY x.n), '[]'::jsonb) FROM (
            SELECT v, n FROM jsonb_array_elements(EXCLUDED.examples || e.examples)
                WITH ORDINALITY AS t(v, n)
            ORDER BY n LIMIT {KEPT_EXAMPLES}
        ) x
    ),
    last_seen = now()
"""
SELECT_SHADOW = (
    f"SELECT {_COLUMNS} FROM {{s}}.shadow_evidence WHERE (%s::text IS NULL OR job = %s)"
    " ORDER BY last_seen DESC, job, fingerprint"
)


def add_shadow(conn: Conn, schema: str, deltas: Sequence[ShadowDelta]) -> None:
    """Add every delta in one transaction, in key order (no deadlock between flushers)."""
    query = sql.SQL(UPSERT_SHADOW).format(s=sql.Identifier(schema))
    rows = [_params(d) for d in sorted(deltas, key=lambda d: (d.job, d.fingerprint))]
    with conn.transaction(), conn.cursor() as cur:
        cur.executemany(query, rows)


def shadow_evidence(conn: Conn, schema: str, job: str | None) -> list[ShadowEvidence]:
    query = sql.SQL(SELECT_SHADOW).format(s=sql.Identifier(schema))
    return [_evidence(row) for row in conn.execute(query, (job, job)).fetchall()]


def _params(delta: ShadowDelta) -> tuple[Any, ...]:
    examples = [
        {"param": f.param, "type": f.type_name, "reason": f.reason, "fallback": f.fallback}
        for f in delta.examples[:KEPT_EXAMPLES]
    ]
    counts = (delta.checked, delta.failed, delta.unencodable)
    return (delta.job, delta.fingerprint, *counts, Jsonb(examples))


def _evidence(row: TupleRow) -> ShadowEvidence:
    job, fingerprint, checked, failed, unencodable, examples, first_seen, last_seen = row
    failures = tuple(
        ShadowFailure(str(e["param"]), str(e["type"]), str(e["reason"]), bool(e.get("fallback")))
        for e in examples or []
    )
    counts = (int(checked), int(failed), int(unencodable))
    return ShadowEvidence(job, fingerprint, *counts, failures, first_seen, last_seen)
