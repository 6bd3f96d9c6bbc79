"""PostgreSQL helpers for the bench: one fresh database per tool, WAL and dead tuples.

Every tool gets its own database so their tables, stats and dead tuples never
mix. WAL is cluster-wide, so besides the raw LSN difference (what the spec asks
for) we also sum, with ``pg_walinspect``, only the WAL records that touch the
tool's database: other engineers' tests write WAL on the same server while the
bench runs, and that filtered figure is immune to them.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import psycopg
from psycopg import sql

ADMIN_DSN = "postgresql://postgres@127.0.0.1:5432/postgres"

# Tables we never truncate between phases: schema version bookkeeping.
_KEEP_TABLES = ("alembic_version",)


def dsn_for(database: str, base: str = ADMIN_DSN) -> str:
    return base.rsplit("/", 1)[0] + "/" + database


def create_database(name: str) -> str:
    with psycopg.connect(ADMIN_DSN, autocommit=True) as conn:
        conn.execute(
            sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
        )
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    dsn = dsn_for(name)
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS pg_walinspect")
    return dsn


def drop_database(name: str) -> None:
    with psycopg.connect(ADMIN_DSN, autocommit=True) as conn:
        conn.execute(
            sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
        )


def database_oid(dsn: str) -> int:
    with psycopg.connect(dsn, autocommit=True) as conn:
        row = conn.execute(
            "SELECT oid FROM pg_database WHERE datname = current_database()"
        ).fetchone()
    assert row is not None
    return int(row[0])


def _user_tables(conn: psycopg.Connection) -> list[tuple[str, str]]:
    rows = conn.execute(
        "SELECT schemaname, relname FROM pg_stat_user_tables WHERE relname <> ALL(%s)",
        (list(_KEEP_TABLES),),
    ).fetchall()
    return [(str(s), str(r)) for s, r in rows]


def disable_autovacuum(dsn: str) -> int:
    """Turn autovacuum off on every table of the tool, so n_dead_tup stays readable."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        tables = _user_tables(conn)
        for schema, table in tables:
            stmt = sql.SQL("ALTER TABLE {}.{} SET (autovacuum_enabled = false)")
            conn.execute(stmt.format(sql.Identifier(schema), sql.Identifier(table)))
    return len(tables)


def truncate_all(dsn: str) -> None:
    """Empty every table of the tool (between the enqueue phases), keeping its schema."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        names = [
            sql.SQL("{}.{}").format(sql.Identifier(s), sql.Identifier(t))
            for s, t in _user_tables(conn)
        ]
        if names:
            conn.execute(
                sql.SQL("TRUNCATE {} RESTART IDENTITY CASCADE").format(sql.SQL(", ").join(names))
            )


def current_lsn(dsn: str) -> str:
    with psycopg.connect(dsn, autocommit=True) as conn:
        row = conn.execute("SELECT pg_current_wal_lsn()::text").fetchone()
    assert row is not None
    return str(row[0])


@contextmanager
def retain_wal(dsn: str) -> Iterator[None]:
    """Keep the WAL from now on readable by pg_walinspect, whatever checkpoints happen.

    Other sessions on the server checkpoint (DROP DATABASE does), and a checkpoint may
    recycle the segments of our LSN range before we read them. A temporary physical
    replication slot reserves WAL from its creation; it is dropped when this
    connection closes, so nothing is left behind even if the bench dies.
    """
    name = f"bench_wal_{os.getpid()}"
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("SELECT pg_create_physical_replication_slot(%s, true, true)", (name,))
        yield


@dataclass(frozen=True)
class WalUsage:
    total_bytes: int  # raw LSN difference: includes every other writer on the server
    database_bytes: int | None  # records with a block in the tool's database; None: see error
    error: str | None = None


_WAL_DIFF = "SELECT pg_wal_lsn_diff(%(end)s::pg_lsn, %(start)s::pg_lsn)::bigint"
# block_ref reads "blkref #0: rel 1663/<db oid>/<relfilenode> ...". Commit records carry no
# block reference, so this figure leaves out per-transaction commit records (~50 bytes each).
_WAL_OWN = """
    SELECT coalesce(sum(record_length), 0)::bigint
    FROM pg_get_wal_records_info(%(start)s::pg_lsn, %(end)s::pg_lsn)
    WHERE block_ref LIKE %(pat)s
"""


def wal_between(dsn: str, start: str, end: str, db_oid: int) -> WalUsage:
    params = {"start": start, "end": end, "pat": f"%/{db_oid}/%"}
    with psycopg.connect(dsn, autocommit=True) as conn:
        total = conn.execute(_WAL_DIFF, params).fetchone()
        try:
            own = conn.execute(_WAL_OWN, params).fetchone()
        except psycopg.Error as exc:  # e.g. segments recycled: keep the raw figure only
            return WalUsage(int(total[0]) if total else 0, None, str(exc).splitlines()[0])
    assert total is not None and own is not None
    return WalUsage(int(total[0]), int(own[0]))


# wal_breakdown: what the tool's WAL is made of (heap inserts, updates, deletes, index
# inserts, full-page images ...), to tell which statement costs what.
_WAL_BREAKDOWN = """
    SELECT resource_manager || '/' || record_type, count(*), sum(record_length)::bigint,
           sum(fpi_length)::bigint
    FROM pg_get_wal_records_info(%(start)s::pg_lsn, %(end)s::pg_lsn)
    WHERE block_ref LIKE %(pat)s
    GROUP BY 1 ORDER BY 3 DESC LIMIT %(top)s
"""


def wal_breakdown(dsn: str, start: str, end: str, db_oid: int, top: int = 8) -> list[str]:
    """The biggest WAL record kinds of the tool's database: 'Heap/INSERT: 2000 rec, 150000 B'."""
    params = {"start": start, "end": end, "pat": f"%/{db_oid}/%", "top": top}
    with psycopg.connect(dsn, autocommit=True) as conn:
        try:
            rows = conn.execute(_WAL_BREAKDOWN, params).fetchall()
        except psycopg.Error:  # segments recycled by a checkpoint
            return []
    return [f"{kind}: {n} rec, {size} B (FPI {fpi} B)" for kind, n, size, fpi in rows]


def checkpoint(dsn: str) -> None:
    """So that no timed checkpoint (and its full-page images) lands inside one tool's run."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("CHECKPOINT")


def dead_tuples(dsn: str, settle_deadline: float = 5.0) -> int:
    """Sum of n_dead_tup once the counters stop moving (backends flush stats on exit)."""
    deadline = time.monotonic() + settle_deadline
    previous = -1
    with psycopg.connect(dsn, autocommit=True) as conn:
        while True:
            row = conn.execute(
                "SELECT coalesce(sum(n_dead_tup), 0)::bigint FROM pg_stat_user_tables"
            ).fetchone()
            current = int(row[0]) if row else 0
            if current == previous or time.monotonic() > deadline:
                return current
            previous = current
            conn.execute("SELECT pg_stat_clear_snapshot()")
            time.sleep(0.3)  # stats are flushed asynchronously; compare two reads apart


def scalar(dsn: str, query: str) -> int:
    with psycopg.connect(dsn, autocommit=True) as conn:
        row = conn.execute(query).fetchone()
    return int(row[0]) if row and row[0] is not None else 0


def scalar_text(dsn: str, query: str) -> str:
    with psycopg.connect(dsn, autocommit=True) as conn:
        row = conn.execute(query).fetchone()
    return str(row[0]) if row else ""
