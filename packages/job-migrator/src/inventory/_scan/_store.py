"""The summaries half of the cache: ``.migrator/cache/summaries-v{SUMMARY_VERSION}.sqlite``.

One row per file: path, the sha256 of the content it summarises, the
extractor's ``tool_key``, and the summary as JSON (defaults left out).

sqlite rather than one JSON document, by measurement on Django (877 files,
11 MB of summaries, on this 2-core machine under load): loading everything
costs the same either way (one document 2.1-3.2 s, rows validated one by one
1.8-3.2 s: pydantic's validation dominates), but after an edit sqlite
rewrites one row where a document rewrites all 11 MB. A row is only used
when its sha256 and tool_key match what the index expects, so a crash
between the two writes can never pair a file with another content's summary.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Mapping
from contextlib import closing, contextmanager
from pathlib import Path

from pydantic import ValidationError

from inventory.summary import SUMMARY_VERSION, FileSummary

_SCHEMA = """
CREATE TABLE IF NOT EXISTS summaries (
    path     TEXT PRIMARY KEY,
    sha256   TEXT NOT NULL,
    tool_key TEXT NOT NULL,
    summary  BLOB NOT NULL
)
"""


def store_path(root: Path) -> Path:
    return root / ".migrator" / "cache" / f"summaries-v{SUMMARY_VERSION}.sqlite"


@contextmanager
def _connect(root: Path) -> Iterator[sqlite3.Connection]:
    path = store_path(root)
    path.parent.mkdir(parents=True, exist_ok=True)
    with closing(sqlite3.connect(path, timeout=30)) as connection:
        connection.execute("PRAGMA synchronous = NORMAL")
        connection.execute(_SCHEMA)
        yield connection


def load(root: Path, wanted: Mapping[str, str], tool_key: str) -> dict[str, FileSummary]:
    """Summaries of ``wanted`` (path -> sha256) that the store holds for that content."""
    if not wanted or not store_path(root).exists():
        return {}
    try:
        with _connect(root) as connection:
            rows = connection.execute(
                "SELECT path, sha256, tool_key, summary FROM summaries"
            ).fetchall()
    except sqlite3.Error:
        return {}  # unreadable store: everything is summarised again and rewritten
    return {
        path: summary
        for path, digest, key, data in rows
        if key == tool_key and wanted.get(path) == digest and (summary := _parse(data)) is not None
    }


def _parse(data: bytes) -> FileSummary | None:
    try:
        return FileSummary.model_validate_json(data)
    except ValidationError:
        return None


def save(root: Path, fresh: Mapping[str, tuple[str, bytes]], keep: set[str], tool_key: str) -> None:
    """Upsert ``fresh`` (path -> (sha256, summary JSON)), drop rows not in ``keep``.

    Best effort: a tree we cannot write to still scans, it only scans slower.
    A corrupt store is deleted and written again from what this scan has.
    """
    rows = [(path, digest, tool_key, data) for path, (digest, data) in fresh.items()]
    for _ in range(2):
        try:
            _write(root, rows, keep)
            return
        except sqlite3.DatabaseError:
            store_path(root).unlink(missing_ok=True)
        except (sqlite3.Error, OSError):
            return


def _write(root: Path, rows: list[tuple[str, str, str, bytes]], keep: set[str]) -> None:
    with _connect(root) as connection, connection:
        known = [path for (path,) in connection.execute("SELECT path FROM summaries")]
        gone = [(path,) for path in known if path not in keep]
        connection.executemany("DELETE FROM summaries WHERE path = ?", gone)
        connection.executemany("INSERT OR REPLACE INTO summaries VALUES (?, ?, ?, ?)", rows)
