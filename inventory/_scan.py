"""``scan``: walk, summarise (cached, in parallel), classify, write the Inventory.

The two halves of a scan meet here: per-file summaries (pure, cacheable,
parallel) and the classifier (global, fast, always rerun because a change in
one file can change the verdict of a job defined in another).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

from inventory import _cache
from inventory._catalogue import Catalogue
from inventory._pool import summarise_all
from inventory._walk import SourceFile, walk
from inventory.config import MigratorConfig
from inventory.models import Inventory, ScanError, ScanErrorKind, ScanStats
from inventory.summary import FileSummary

ProgressCallback = Callable[[int, int], None]
INVENTORY_FILE = Path(".migrator") / "inventory.json"


@dataclass
class _Summaries:
    """What the per-file half produced: summaries, failures, cache bookkeeping."""

    summaries: list[FileSummary] = field(default_factory=list)
    errors: list[ScanError] = field(default_factory=list)
    cached: int = 0


def scan(
    root: Path | str,
    *,
    config: MigratorConfig | None = None,
    use_cache: bool = True,
    jobs: int | None = None,
    progress: ProgressCallback | None = None,
    include_tests: bool = False,
) -> Inventory:
    """Scan the tree at ``root`` and return (and write) its Inventory.

    ``config`` defaults to ``[tool.migrator]`` of ``root/pyproject.toml``;
    ``jobs`` is the number of worker processes (default: one per core);
    ``progress(done, total)`` is called as files are summarised.
    """
    started = time.perf_counter()
    top = Path(root).resolve()
    config = config or MigratorConfig.from_project(top)
    walked = walk(top, include_tests=include_tests, exclude=config.exclude)
    found = _summarise(top, walked.files, config, use_cache, jobs, progress)
    found.errors[:0] = walked.errors
    inventory = _classify(top, found, config)
    inventory.stats.seconds = round(time.perf_counter() - started, 3)
    write_inventory(top, inventory)
    return inventory


def _summarise(
    top: Path,
    files: list[SourceFile],
    config: MigratorConfig,
    use_cache: bool,
    jobs: int | None,
    progress: ProgressCallback | None,
) -> _Summaries:
    cache = _cache.load(top) if use_cache else _cache.CacheFile(tool_key=_cache.tool_key())
    found = _cache.lookup(cache, files)
    if progress:
        progress(len(found.hits), len(files))
    report = _offset(progress, len(found.hits), len(files))
    outcomes = summarise_all(found.misses, config.max_file_size, jobs, report)
    fresh = {outcome.rel: _cache.entry_for_outcome(outcome) for outcome in outcomes}
    if use_cache and (fresh or found.refreshed or len(found.hits) != len(cache.entries)):
        kept = {rel: entry for rel, entry in fresh.items() if not _transient(entry)}
        _cache.save(top, _cache.CacheFile(tool_key=cache.tool_key, entries={**found.hits, **kept}))
    return _collect(found.hits, fresh)


def _offset(progress: ProgressCallback | None, done: int, total: int) -> ProgressCallback | None:
    if progress is None:
        return None
    return lambda finished, _: progress(done + finished, total)


def _transient(entry: _cache.CacheEntry) -> bool:
    # An unreadable file may be readable next time without its mtime changing.
    return entry.error is not None and entry.error.kind == ScanErrorKind.IO


def _collect(hits: dict[str, _cache.CacheEntry], fresh: dict[str, _cache.CacheEntry]) -> _Summaries:
    found = _Summaries(cached=sum(entry.summary is not None for entry in hits.values()))
    for rel in sorted({*hits, *fresh}):
        entry = fresh.get(rel) or hits[rel]
        if entry.summary is not None:
            found.summaries.append(entry.summary)
        elif entry.error is not None:
            found.errors.append(entry.error)
    return found


def _classify(top: Path, found: _Summaries, config: MigratorConfig) -> Inventory:
    from inventory._classify import classify

    sites, jobs = classify(found.summaries, config, Catalogue.load(config.catalogue))
    return Inventory(
        tool_version=_tool_version(),
        root=str(top),
        sites=sites,
        jobs=jobs,
        errors=found.errors,
        stats=_stats(found),
    )


def _stats(found: _Summaries) -> ScanStats:
    return ScanStats(
        files_scanned=len(found.summaries),
        files_cached=found.cached,
        files_skipped=len(found.errors),
        lines=sum(summary.lines for summary in found.summaries),
        functions=sum(len(summary.functions) for summary in found.summaries),
    )


def _tool_version() -> str:
    try:
        return metadata.version("job-migrator")
    except metadata.PackageNotFoundError:
        return ""


def write_inventory(top: Path, inventory: Inventory) -> Path:
    """Write ``ROOT/.migrator/inventory.json``; the folder ignores itself in git."""
    target = top / INVENTORY_FILE
    target.parent.mkdir(parents=True, exist_ok=True)
    ignore = target.parent / ".gitignore"
    if not ignore.exists():
        ignore.write_text("# written by migrator scan\n*\n", encoding="utf-8")
    temporary = target.with_suffix(f".{os.getpid()}.tmp")
    temporary.write_text(
        json.dumps(inventory.model_dump(mode="json"), indent=2) + "\n", encoding="utf-8"
    )
    os.replace(temporary, target)
    return target
