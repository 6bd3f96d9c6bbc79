"""The summary cache: ``ROOT/.migrator/cache/summaries-v{SUMMARY_VERSION}.json``.

One JSON document maps each relative path to ``(size, mtime_ns, sha256)`` and
the file's summary (or the reason it could not be summarised). One document
rather than a file per path or a sqlite table: pydantic validates a single
JSON document in one call into native code, which measured faster than
per-row validation, and the whole cache is read on every scan anyway.

A file is reused without being read when its size and mtime match; when they
differ it is read and hashed, and still reused if the content is the same
(``git checkout``, ``touch``). The cache is also keyed by the extractor's own
code (``tool_key``), so editing the extractor never serves stale summaries.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel, ValidationError

from inventory._files import Failed, Outcome, Summarised, sha256_of
from inventory._walk import SourceFile
from inventory.models import ScanError
from inventory.summary import SUMMARY_VERSION, FileSummary

CACHE_DIR = Path(".migrator") / "cache"


class CacheEntry(BaseModel):
    size: int
    mtime_ns: int
    sha256: str
    summary: FileSummary | None = None
    error: ScanError | None = None


class CacheFile(BaseModel):
    version: str = SUMMARY_VERSION
    tool_key: str = ""
    entries: dict[str, CacheEntry] = {}


def cache_path(root: Path) -> Path:
    return root / CACHE_DIR / f"summaries-v{SUMMARY_VERSION}.json"


def tool_key() -> str:
    """Changes whenever the code that produces summaries changes (cheap: stats only)."""
    here = Path(__file__).parent
    sources = sorted([here / "summary.py", here / "_files.py", *here.glob("_extract/**/*.py")])
    digest = hashlib.sha256(SUMMARY_VERSION.encode())
    for source in sources:
        stat = source.stat()
        digest.update(f"{source.name}:{stat.st_size}:{stat.st_mtime_ns};".encode())
    return digest.hexdigest()[:16]


def load(root: Path) -> CacheFile:
    """The cache of ``root``; an empty one when it is absent, stale or corrupt."""
    key = tool_key()
    try:
        cache = CacheFile.model_validate_json(cache_path(root).read_bytes())
    except (OSError, ValidationError, ValueError):
        return CacheFile(tool_key=key)
    return cache if cache.tool_key == key else CacheFile(tool_key=key)


def save(root: Path, cache: CacheFile) -> None:
    """Write atomically, so a concurrent or interrupted scan never reads half a file.

    A read-only tree still scans: the cache only saves time, so failing to
    write it is not an error.
    """
    target = cache_path(root)
    temporary = target.with_suffix(f".{os.getpid()}.tmp")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        temporary.write_bytes(cache.model_dump_json().encode())
        os.replace(temporary, target)
    except OSError:
        temporary.unlink(missing_ok=True)


@dataclass
class Lookup:
    """The cache's answer for a walk: reused entries, and files to summarise."""

    hits: dict[str, CacheEntry] = field(default_factory=dict)
    misses: list[SourceFile] = field(default_factory=list)
    refreshed: bool = False  # an entry's size/mtime changed: the cache needs saving


def _fits(entry: CacheEntry, file: SourceFile) -> bool:
    summary = entry.summary
    return summary is None or (
        summary.module == file.module and summary.is_package == file.is_package
    )


def _same_content(entry: CacheEntry, file: SourceFile) -> bool:
    if not entry.sha256:
        return False
    try:
        with open(file.path, "rb") as handle:
            return sha256_of(handle.read()) == entry.sha256
    except OSError:
        return False


def lookup(cache: CacheFile, files: Iterable[SourceFile]) -> Lookup:
    found = Lookup()
    for file in files:
        entry = cache.entries.get(file.rel)
        if entry is None or not _fits(entry, file):
            found.misses.append(file)
        elif entry.size == file.size and entry.mtime_ns == file.mtime_ns:
            found.hits[file.rel] = entry
        elif _same_content(entry, file):
            found.hits[file.rel] = entry.model_copy(
                update={"size": file.size, "mtime_ns": file.mtime_ns}
            )
            found.refreshed = True
        else:
            found.misses.append(file)
    return found


def entry_for_outcome(outcome: Outcome) -> CacheEntry:
    """The cache entry (and so the result) of one freshly summarised file."""
    stamp = {"size": outcome.size, "mtime_ns": outcome.mtime_ns, "sha256": outcome.sha256}
    if isinstance(outcome, Summarised):
        return CacheEntry(**stamp, summary=FileSummary.model_validate_json(outcome.summary_json))
    return CacheEntry(**stamp, error=error_of(outcome))


def error_of(failed: Failed) -> ScanError:
    return ScanError(path=failed.rel, reason=failed.reason, kind=failed.kind)
