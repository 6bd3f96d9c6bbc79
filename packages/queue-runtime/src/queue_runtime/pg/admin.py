"""Administrative SQL for test isolation: probe a server, make and drop databases and schemas.

Here rather than in ``queue_runtime.testing`` because ``pg/`` is the only
package that imports psycopg. Names are quoted with ``sql.Identifier``; every
statement runs on its own autocommit connection (CREATE/DROP DATABASE cannot
run inside a transaction).
"""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

import psycopg
from psycopg import sql

from queue_runtime.errors import StoreError


def probe(url: str, timeout: int = 3) -> str | None:
    """Why the server at ``url`` cannot be used, or None when it answers a query."""
    try:
        with psycopg.connect(url, connect_timeout=timeout) as conn:
            conn.execute("SELECT 1")
    except psycopg.Error as exc:
        return f"{type(exc).__name__}: {exc}"
    return None


def with_database(url: str, dbname: str) -> str:
    """``url`` pointing at the database ``dbname`` (same server, user, options)."""
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, f"/{dbname}", parts.query, parts.fragment))


def create_database(admin_url: str, dbname: str) -> None:
    _run(admin_url, sql.SQL("CREATE DATABASE {}").format(sql.Identifier(dbname)))


def drop_database(admin_url: str, dbname: str) -> None:
    """Drop it even while connections are open (``WITH (FORCE)``: tests leave pools behind)."""
    text = sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)")
    _run(admin_url, text.format(sql.Identifier(dbname)))


def create_schema(url: str, schema: str) -> None:
    _run(url, sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(schema)))


def drop_schema(url: str, schema: str) -> None:
    _run(url, sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))


def _run(url: str, statement: sql.Composed) -> None:
    try:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(statement)
    except psycopg.Error as exc:
        raise StoreError(f"{type(exc).__name__}: {exc}") from exc
