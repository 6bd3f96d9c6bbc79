"""Installed libraries' source, summarised on demand like project code.

When a job calls into a library that no catalogue entry explains, the symbol
index asks here for the module behind the name: its file is found in the
environment's site-packages, read (never imported), summarised by the same
extractor as project files, and cached in
``ROOT/.migrator/cache/libraries-v{SUMMARY_VERSION}.sqlite`` under its
distribution's name and version (from ``*.dist-info``), so a module is read
once per installed version. Only modules a job reaches are read, up to a
budget per scan; past it, or where no source is installed, a call stays an
unresolved external call (a gap).
"""

from __future__ import annotations

import sqlite3
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from inventory._cachedir import CACHE_DIR, code_key
from inventory._env import Environment
from inventory._extract import extract_source
from inventory.summary import SUMMARY_VERSION, FileSummary

MODULE_BUDGET = 600  # library modules read per scan, at most
_SCHEMA = """
CREATE TABLE IF NOT EXISTS modules (
    dist TEXT NOT NULL, version TEXT NOT NULL, module TEXT NOT NULL,
    tool_key TEXT NOT NULL, summary BLOB NOT NULL,
    PRIMARY KEY (dist, version, module)
)
"""
_EXTRACTOR = ("summary.py", "_scan/_files.py", "_extract/**/*.py")


@dataclass(frozen=True)
class Distribution:
    name: str
    version: str


@dataclass(frozen=True)
class _Source:
    path: Path
    is_package: bool
    dist: Distribution


@dataclass
class Library:
    """The environment's libraries, read module by module as the classifier asks."""

    env: Environment
    top: Path
    budget: int = MODULE_BUDGET
    loaded: int = 0
    _owners: dict[str, Distribution] | None = None
    _fresh: dict[tuple[str, str, str], bytes] = field(default_factory=dict)
    _found: dict[str, str | None] = field(default_factory=dict)
    _tool_key: str = field(default_factory=lambda: code_key(_EXTRACTOR))

    def missing(self, top_level: str) -> str | None:
        """Why ``top_level`` cannot be read, or None when its source is installed."""
        if self._root_of(top_level) is not None:
            return None
        return f"{top_level} is not installed in {self.env.how} ({self.env.python})"

    def find(self, name: str) -> str | None:
        """The longest dotted prefix of ``name`` that is an installed module (memoised: the
        environment does not change during a scan)."""
        if name not in self._found:
            self._found[name] = self._find(name)
        return self._found[name]

    def _find(self, name: str) -> str | None:
        parts = name.split(".")
        root = self._root_of(parts[0])
        if root is None:
            return None
        for cut in range(len(parts), 0, -1):
            if _source_file(root, parts[:cut]) is not None:
                return ".".join(parts[:cut])
        return None

    def module(self, module: str) -> FileSummary | None:
        """The summary of an installed module (cached per distribution version), or None."""
        source = self._source(module)
        if source is None or self.loaded >= self.budget:
            return None
        self.loaded += 1
        key = (source.dist.name, source.dist.version, module)
        cached = self._cached(key)
        if cached is not None:
            return cached
        summary = _summarise(source, module)
        if summary is not None:
            self._fresh[key] = summary.model_dump_json(exclude_defaults=True).encode()
        return summary

    def save(self) -> None:
        """Keep what this scan read for the next one (best effort: a cache)."""
        if not self._fresh:
            return
        rows = [(*key, self._tool_key, blob) for key, blob in self._fresh.items()]
        try:
            with closing(self._connect()) as db, db:
                db.executemany("INSERT OR REPLACE INTO modules VALUES (?, ?, ?, ?, ?)", rows)
        except (OSError, sqlite3.Error):
            return
        self._fresh.clear()

    def _cached(self, key: tuple[str, str, str]) -> FileSummary | None:
        query = "SELECT summary FROM modules WHERE dist=? AND version=? AND module=? AND tool_key=?"
        try:
            with closing(self._connect()) as db:
                row = db.execute(query, (*key, self._tool_key)).fetchone()
            return FileSummary.model_validate_json(row[0]) if row else None
        except (OSError, sqlite3.Error, ValidationError):
            return None

    def _connect(self) -> sqlite3.Connection:
        path = self.top / CACHE_DIR / f"libraries-v{SUMMARY_VERSION}.sqlite"
        path.parent.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(path)
        db.execute(_SCHEMA)
        return db

    def _source(self, module: str) -> _Source | None:
        parts = module.split(".")
        root = self._root_of(parts[0])
        found = _source_file(root, parts) if root is not None else None
        if found is None:
            return None
        owner = self._owners_map().get(parts[0]) or Distribution(parts[0], str(_mtime(found[0])))
        return _Source(found[0], found[1], owner)

    def _root_of(self, top_level: str) -> Path | None:
        """The site dir holding package or module ``top_level``."""
        for folder in self.env.site_dirs:
            if (folder / top_level).is_dir() or (folder / f"{top_level}.py").is_file():
                return folder
        return None

    def _owners_map(self) -> dict[str, Distribution]:
        if self._owners is None:
            self._owners = {}
            for folder in reversed(self.env.site_dirs):  # the first site dir wins
                self._owners.update(distributions(folder))
        return self._owners


def distributions(folder: Path) -> dict[str, Distribution]:
    """Top-level module -> its distribution, from ``*.dist-info`` (top_level.txt or RECORD)."""
    owners: dict[str, Distribution] = {}
    for info in sorted(folder.glob("*.dist-info")):
        name, _, version = info.name.removesuffix(".dist-info").partition("-")
        dist = Distribution(name, version)
        for top_level in _top_levels(info):
            owners.setdefault(top_level, dist)
    return owners


def _top_levels(info: Path) -> set[str]:
    try:
        listed = (info / "top_level.txt").read_text(encoding="utf-8").split()
        return set(listed)
    except OSError:
        pass
    try:
        lines = (info / "RECORD").read_text(encoding="utf-8").splitlines()
    except OSError:
        return set()
    firsts = (line.split(",", 1)[0].split("/", 1) for line in lines)
    return {
        parts[0].removesuffix(".py")
        for parts in firsts
        if parts[0]
        and not parts[0].endswith((".dist-info", ".data", ".pth"))
        and (len(parts) > 1 or parts[0].endswith(".py"))
    }


def _source_file(root: Path, parts: list[str]) -> tuple[Path, bool] | None:
    base = root.joinpath(*parts)
    if (base / "__init__.py").is_file():
        return base / "__init__.py", True
    module = base.with_name(base.name + ".py")
    return (module, False) if module.is_file() else None


def _summarise(source: _Source, module: str) -> FileSummary | None:
    try:
        text = source.path.read_bytes().decode("utf-8")
        return extract_source(text, str(source.path), module, source.is_package)
    except (OSError, UnicodeDecodeError, SyntaxError, ValueError, RecursionError):
        return None  # unreadable: its calls stay gaps


def _mtime(path: Path) -> int:
    try:
        return path.stat().st_mtime_ns
    except OSError:
        return 0
