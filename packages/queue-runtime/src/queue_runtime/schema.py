"""The schema the code expects, and how to read the actual one from the catalog.

``EXPECTED`` is what the queries in ``pg/queries.py`` rely on; the migrations
test checks that ``migrate()`` produces exactly this (after procrastinate's
"migrations produce the schema the code expects" test).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import psycopg


@dataclass(frozen=True)
class Table:
    columns: dict[str, tuple[str, bool]]  # name -> (type, not null)
    indexes: dict[str, str]  # name -> definition from pg_get_indexdef, schema stripped
    options: tuple[str, ...] = ()  # reloptions, e.g. ("fillfactor=70",)


@dataclass(frozen=True)
class Schema:
    tables: dict[str, Table] = field(default_factory=dict)
    enums: dict[str, tuple[str, ...]] = field(default_factory=dict)


def _cols(*spec: str) -> dict[str, tuple[str, bool]]:
    """``"name type"`` (nullable) or ``"name type!"`` (NOT NULL)."""
    out = {}
    for item in spec:
        name, kind = item.split(" ", 1)
        out[name] = (kind.rstrip("!"), kind.endswith("!"))
    return out


EXPECTED = Schema(
    enums={"job_state": ("pending", "running"), "final_status": ("succeeded", "dead", "cancelled")},
    tables={
        "jobs": Table(
            columns=_cols(
                "id bigint!",
                "name text!",
                "pool text!",
                "priority smallint!",
                "state job_state!",
                "attempt integer!",
                "max_attempts integer!",
                "run_at timestamp with time zone!",
                "enqueued_at timestamp with time zone!",
                "claimed_at timestamp with time zone",
                "worker text",
                "tenant text",
                "idempotency_key text",
                "args jsonb!",
                "errors jsonb",
            ),
            indexes={
                "jobs_pkey": "UNIQUE btree (id)",
                "jobs_claim_idx": "btree (pool, priority DESC, run_at) WHERE (state = 'pending'::job_state)",
                "jobs_running_idx": "btree (claimed_at) WHERE (state = 'running'::job_state)",
            },
            options=(
                "autovacuum_analyze_scale_factor=0.05",
                "autovacuum_vacuum_scale_factor=0.02",
                "fillfactor=70",
            ),
        ),
        "job_history": Table(
            columns=_cols(
                "id bigint!",
                "name text!",
                "pool text!",
                "status final_status!",
                "priority smallint!",
                "attempt integer!",
                "max_attempts integer!",
                "tenant text",
                "idempotency_key text",
                "enqueued_at timestamp with time zone!",
                "finished_at timestamp with time zone!",
                "args jsonb",
                "result jsonb",
                "error text",
                "traceback text",
                "errors jsonb",
            ),
            indexes={
                "job_history_pkey": "UNIQUE btree (id)",
                "job_history_finished_brin": "brin (finished_at)",
                "job_history_dead_idx": "btree (finished_at) WHERE (status = 'dead'::final_status)",
            },
        ),
        "idempotency_keys": Table(
            columns=_cols("key text!", "job_id bigint!"),
            indexes={"idempotency_keys_pkey": "UNIQUE btree (key)"},
        ),
        "job_audit": Table(
            columns=_cols(
                "id bigint!",
                "job_id bigint!",
                "action text!",
                "new_job_id bigint",
                "at timestamp with time zone!",
                "detail jsonb",
            ),
            indexes={"job_audit_pkey": "UNIQUE btree (id)", "job_audit_job_idx": "btree (job_id)"},
        ),
        "certifications": Table(
            columns=_cols(
                "id bigint!",
                "job text!",
                "fingerprint text!",
                "certified_at timestamp with time zone!",
                "certified_by text!",
                "figures jsonb!",
                "revoked_at timestamp with time zone",
            ),
            indexes={
                "certifications_pkey": "UNIQUE btree (id)",
                "certifications_job_idx": "btree (job, fingerprint)",
            },
        ),
        "rollouts": Table(
            columns=_cols(
                "job text!",
                "mode text!",
                "percent smallint!",
                "updated_at timestamp with time zone!",
                "updated_by text",
            ),
            indexes={"rollouts_pkey": "UNIQUE btree (job)"},
        ),
        "job_keys": Table(
            columns=_cols(
                "key text!",
                "job text!",
                "state text!",
                "result jsonb",
                "job_id bigint",
                "updated_at timestamp with time zone!",
            ),
            indexes={"job_keys_pkey": "UNIQUE btree (key)"},
        ),
        "alembic_version": Table(
            columns=_cols("version_num character varying(32)!"),
            indexes={"alembic_version_pkc": "UNIQUE btree (version_num)"},
        ),
    },
)

_COLUMNS = """
SELECT c.relname, a.attname, format_type(a.atttypid, a.atttypmod), a.attnotnull
FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
WHERE c.relnamespace = to_regnamespace(%s) AND c.relkind = 'r' AND a.attnum > 0 AND NOT a.attisdropped
ORDER BY c.relname, a.attnum
"""
_INDEXES = """
SELECT t.relname, i.relname, pg_get_indexdef(i.oid)
FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class t ON t.oid = x.indrelid
WHERE t.relnamespace = to_regnamespace(%s)
"""
_OPTIONS = """
SELECT relname, coalesce(reloptions, '{}') FROM pg_class
WHERE relnamespace = to_regnamespace(%s) AND relkind = 'r'
"""
_ENUMS = """
SELECT t.typname, array_agg(e.enumlabel ORDER BY e.enumsortorder)
FROM pg_type t JOIN pg_enum e ON e.enumtypid = t.oid
WHERE t.typnamespace = to_regnamespace(%s) GROUP BY t.typname
"""


def inspect_schema(conn: psycopg.Connection[Any], schema: str) -> Schema:
    """The actual schema, read from the catalog, in the shape of ``EXPECTED``."""
    with conn.transaction():
        # Types print unqualified when their schema is on the search path.
        conn.execute("SELECT set_config('search_path', %s, true)", (f'"{schema}"',))
        columns = conn.execute(_COLUMNS, (schema,)).fetchall()
        indexes = conn.execute(_INDEXES, (schema,)).fetchall()
        options = dict(conn.execute(_OPTIONS, (schema,)).fetchall())
        enums = {name: tuple(labels) for name, labels in conn.execute(_ENUMS, (schema,)).fetchall()}
    tables: dict[str, Table] = {}
    for name in options:
        cols = {col: (kind, notnull) for t, col, kind, notnull in columns if t == name}
        idx = {i: _index_body(d) for t, i, d in indexes if t == name}
        tables[name] = Table(cols, idx, tuple(sorted(options[name])))
    return Schema(tables, enums)


def _index_body(definition: str) -> str:
    """``CREATE INDEX x ON s.t USING btree (a)`` -> ``btree (a)`` (UNIQUE kept)."""
    unique = "UNIQUE " if definition.startswith("CREATE UNIQUE") else ""
    return unique + definition.split(" USING ", 1)[1]
