"""SQLite access: one short-lived connection per unit of work.

Jobs run in threads, tasks and a child process, so nobody shares a
connection; WAL mode lets readers run while a job writes.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

SCHEMA = """
CREATE TABLE IF NOT EXISTS users (
    id INTEGER PRIMARY KEY, email TEXT NOT NULL UNIQUE, name TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS products (
    id INTEGER PRIMARY KEY, name TEXT NOT NULL, price_cents INTEGER NOT NULL,
    stock INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS images (
    id INTEGER PRIMARY KEY, product_id INTEGER NOT NULL REFERENCES products (id));
CREATE TABLE IF NOT EXISTS orders (
    id INTEGER PRIMARY KEY, user_id INTEGER NOT NULL REFERENCES users (id),
    product_id INTEGER NOT NULL REFERENCES products (id), qty INTEGER NOT NULL,
    amount_cents INTEGER NOT NULL, status TEXT NOT NULL, day TEXT NOT NULL,
    capture_id TEXT, refunded_cents INTEGER NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS audit_log (
    id INTEGER PRIMARY KEY, event TEXT NOT NULL, order_id INTEGER NOT NULL, at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS page_views (path TEXT PRIMARY KEY, n INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS cache (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""


@contextmanager
def connect(database: Path) -> Iterator[sqlite3.Connection]:
    """A connection that commits on success, rolls back on error, and is always closed."""
    conn = sqlite3.connect(database, timeout=10)
    conn.row_factory = sqlite3.Row
    try:
        with conn:
            yield conn
    finally:
        conn.close()


def init_db(database: Path) -> None:
    database.parent.mkdir(parents=True, exist_ok=True)
    with connect(database) as conn:
        conn.execute("PRAGMA journal_mode=WAL")
        conn.executescript(SCHEMA)
