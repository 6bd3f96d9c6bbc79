"""``scan``: walk, summarise (cached, in parallel), classify, write the Inventory.

The two halves of a scan meet here: per-file summaries (pure, cacheable,
parallel) and the classifier (global: a change in one file can change the
verdict of a job defined in another, so it runs over every summary whenever
anything changed, and its result is reused only when nothing did).
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from inventory._cachedir import write_atomically
from inventory._env import Environment, find_environment
from inventory._heap import bulk_work
from inventory._scan import _cache, _store
from inventory._scan._files import Summarised
from inventory._scan._memo import load_memo, result_key, save_memo
from inventory._scan._pool import summarise_all
from inventory._scan._walk import WalkResult, walk
from inventory.config import MigratorConfig
from inventory.models import Inventory, ScanError, ScanStats
from inventory.summary import FileSummary

ProgressCallback = Callable[[int, int], None]
INVENTORY_FILE = Path(".migrator") / "inventory.json"


@dataclass
class _Run:
    """One scan's inputs, and what the cache said about them."""

    top: Path
    config: MigratorConfig
    walked: WalkResult
    use_cache: bool
    include_tests: bool
    index: _cache.Index
    env: Environment
    found: _cache.Lookup = field(default_factory=_cache.Lookup)

    def key(self) -> str | None:
        """The memo key, when every file is a cache hit (and the environment is unchanged:
        a library installed or upgraded can change a verdict)."""
        if not self.use_cache or self.found.misses:
            return None
        stamps, errors = self.found.hits, self.walked.errors
        key = result_key(self.top, stamps, errors, self.config, self.include_tests)
        return hashlib.sha256(f"{key}:{self.env.fingerprint()}".encode()).hexdigest()[:32]


def scan(
    root: Path | str,
    *,
    config: MigratorConfig | None = None,
    use_cache: bool = True,
    jobs: int | None = None,
    progress: ProgressCallback | None = None,
    include_tests: bool = False,
    python: str | None = None,
    write: bool = True,
) -> Inventory:
    """Scan the tree at ``root`` and return (and, with ``write``, write) its Inventory.

    ``config`` defaults to ``[tool.migrator]`` of ``root/pyproject.toml``;
    ``jobs`` is the number of worker processes (default: one per core, or
    in-process for small sets); ``progress(done, total)`` follows the files;
    ``python`` is the project's interpreter, whose installed libraries are read
    where jobs call them (default: ``[tool.migrator] python``, the project's
    virtualenv, else the interpreter running the scan; see ``inventory._env``).
    With ``use_cache=False`` and ``write=False`` nothing is written under ``root``.
    """
    started = time.perf_counter()
    top = Path(root).resolve()
    if not top.is_dir():
        raise NotADirectoryError(f"{top} is not a folder")  # never create .migrator/ in a typo
    with bulk_work():  # the collector paused while the summaries are loaded and classified
        run = _prepare(top, config, use_cache, include_tests, python)
        key = run.key()
        inventory = load_memo(run.top, key) if key else None
        if inventory is None:
            inventory = _fresh(run, jobs, progress)
        else:
            inventory.stats.files_cached = inventory.stats.files_scanned
            if run.found.refreshed:
                _cache.save_index(
                    run.top, _cache.Index(tool_key=run.index.tool_key, files=run.found.hits)
                )
    inventory.stats.seconds = round(time.perf_counter() - started, 3)
    if write:
        write_inventory(run.top, inventory)
    return inventory


def _prepare(
    top: Path,
    config: MigratorConfig | None,
    use_cache: bool,
    include_tests: bool,
    python: str | None,
) -> _Run:
    config = config or MigratorConfig.from_project(top)
    walked = walk(top, include_tests=include_tests, exclude=config.exclude)
    index = _cache.load_index(top) if use_cache else _cache.Index(tool_key=_cache.tool_key())
    env = find_environment(top, python, config.python, remember=use_cache)
    run = _Run(top, config, walked, use_cache, include_tests, index, env)
    run.found = _cache.lookup(index, walked.files)
    return run


def _fresh(run: _Run, jobs: int | None, progress: ProgressCallback | None) -> Inventory:
    """Summarise what the cache lacks, classify everything, update the cache."""
    cached = _cached_summaries(run)
    files = {file.rel: file for file in run.walked.files}
    done = len(files) - len(run.found.misses)
    if progress:
        progress(done, len(files))
    report = None if progress is None else (lambda n, _: progress(done + n, len(files)))
    stamps, fresh = dict(run.found.hits), {}
    for outcome in summarise_all(run.found.misses, run.config.max_file_size, jobs, report):
        stamps[outcome.rel] = _cache.stamp_of(files[outcome.rel], outcome)
        if isinstance(outcome, Summarised):
            cached[outcome.rel] = FileSummary.model_validate_json(outcome.summary_json)
            fresh[outcome.rel] = (outcome.sha256, outcome.summary_json)
    inventory = _classify(run, stamps, cached)
    if run.use_cache:
        _save(run, stamps, fresh, inventory)
    return inventory


def _cached_summaries(run: _Run) -> dict[str, FileSummary]:
    """Summaries of the hits; a hit whose summary is lost becomes a miss."""
    wanted = {rel: stamp.sha256 for rel, stamp in run.found.hits.items() if stamp.error is None}
    stored = _store.load(run.top, wanted, run.index.tool_key)
    lost = {rel for rel in wanted if rel not in stored}
    if lost:
        run.found.misses += [file for file in run.walked.files if file.rel in lost]
        run.found.hits = {rel: s for rel, s in run.found.hits.items() if rel not in lost}
    return {rel: stored[rel] for rel in wanted if rel in stored}


def _classify(
    run: _Run, stamps: dict[str, _cache.Stamp], summaries: dict[str, FileSummary]
) -> Inventory:
    from inventory._catalogue import Catalogue
    from inventory._classify import classify
    from inventory._thirdparty import Library

    ordered = [summaries[rel] for rel in sorted(summaries)]
    failed = [error for rel in sorted(stamps) if (error := stamps[rel].error) is not None]
    errors: list[ScanError] = [*run.walked.errors, *failed]
    library = Library(run.env, run.top)
    sites, jobs = classify(ordered, run.config, Catalogue.load(run.config.catalogue), library)
    if run.use_cache:
        library.save()
    cached = sum(1 for rel in summaries if rel in run.found.hits)
    return Inventory(
        tool_version=_tool_version(),
        root=str(run.top),
        sites=sites,
        jobs=jobs,
        errors=errors,
        stats=_stats(ordered, cached, len(errors)),
        file_hashes={rel: stamps[rel].sha256 for rel in sorted(summaries)},
        atomic_requests=[f"{s.path}:{line}" for s in ordered for line in s.atomic_requests],
    )


def _save(
    run: _Run,
    stamps: dict[str, _cache.Stamp],
    fresh: dict[str, tuple[str, bytes]],
    inventory: Inventory,
) -> None:
    """Save new summaries (as the workers sent them), the index and the memo."""
    kept = {rel: stamp for rel, stamp in stamps.items() if _cache.cacheable(stamp)}
    if run.found.misses or len(kept) != len(run.index.files):
        summarised = {rel for rel, stamp in kept.items() if stamp.error is None}
        _store.save(run.top, fresh, summarised, run.index.tool_key)
    _cache.save_index(run.top, _cache.Index(tool_key=run.index.tool_key, files=kept))
    run.found = _cache.Lookup(hits=kept)
    key = run.key() if len(kept) == len(stamps) else None
    if key:
        save_memo(run.top, key, inventory)


def _stats(summaries: list[FileSummary], cached: int, errors: int) -> ScanStats:
    return ScanStats(
        files_scanned=len(summaries),
        files_cached=cached,
        files_skipped=errors,
        lines=sum(summary.lines for summary in summaries),
        functions=sum(len(summary.functions) for summary in summaries),
    )


def _tool_version() -> str:
    from importlib import metadata  # only when classifying: a warm scan skips it

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
    text = inventory.model_dump_json(indent=2) + "\n"
    write_atomically(target, text.encode(), best_effort=False)
    return target
