"""The actual schema of the queue, read from PostgreSQL's catalog in the shape of ``EXPECTED``.

The migrations test compares it with :data:`queue_runtime.schema.EXPECTED`.
"""

from __future__ import annotations

from typing import Any

import psycopg

from queue_runtime.schema import Schema, Table

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
