"""Find the Python files a scan reads, and name their modules.

The walk never reads file contents (only directory entries and ``stat``), so a
warm scan of an unchanged tree costs one ``scandir`` per directory. What is
skipped and why:

* ``.gitignore``d paths: every ``.gitignore`` from the enclosing git work tree
  down to the directory being walked applies, each relative to its own folder;
* tool and environment folders (``.git``, virtualenvs, ``node_modules``,
  ``__pycache__``, ``build``/``dist``, ``.tox``, ``.nox``, ``.migrator``);
* test code, unless ``include_tests``: it starts no production work and
  would drown the report in fixtures;
* database migrations (``migrations/`` folders: Django's, Alembic's,
  Flask-Migrate's): generated schema changes run by a deploy, never by a
  request or a worker. Skipped quietly, like tests: listing each one as a
  ``generated`` error buried the real errors (122 rows in wagtail).

Symbolic links to directories are followed once; a link back to one of its
own ancestors is a loop, reported as a :class:`ScanError`, and the walk goes on.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import pathspec

from inventory.models import ScanError, ScanErrorKind

SKIP_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        "node_modules",
        "__pycache__",
        "build",
        "dist",
        ".tox",
        ".nox",
        ".migrator",
        ".venv",
        "site-packages",
        ".mypy_cache",
        ".ruff_cache",
        ".pytest_cache",
        ".eggs",
        ".hypothesis",
    }
)
TEST_DIRS = frozenset({"tests", "test"})
MIGRATION_DIRS = frozenset({"migrations"})


@dataclass(frozen=True, slots=True)
class SourceFile:
    """One file to summarise; ``rel`` is POSIX and relative to the scan root."""

    path: str
    rel: str
    module: str
    is_package: bool
    size: int
    mtime_ns: int


@dataclass(slots=True)
class WalkResult:
    files: list[SourceFile] = field(default_factory=list)
    errors: list[ScanError] = field(default_factory=list)


def is_test_file(name: str) -> bool:
    """pytest's ``test_*.py`` / ``*_test.py`` / ``conftest.py``, and the ``tests.py`` module
    Django's ``startapp`` creates in every app."""
    return (
        name in ("conftest.py", "tests.py") or name.startswith("test_") or name.endswith("_test.py")
    )


def is_test_path(rel: str) -> bool:
    """Test code: a POSIX path (relative to the project) whose file name is a test module's
    (:func:`is_test_file`) or that lies under a ``tests`` / ``test`` folder."""
    *folders, name = rel.split("/")
    return is_test_file(name) or any(folder in TEST_DIRS for folder in folders)


@dataclass(frozen=True, slots=True)
class _Ignore:
    """The compiled ``.gitignore`` of one folder, matched relative to that folder."""

    base: str
    spec: pathspec.GitIgnoreSpec

    def verdict(self, path: str, is_dir: bool) -> bool | None:
        """True: ignored here; False: re-included by a ``!`` pattern; None: no opinion."""
        rel = os.path.relpath(path, self.base).replace(os.sep, "/")
        if rel.startswith("../"):
            return None
        return self.spec.check_file(rel + "/" if is_dir else rel).include


def ignored(ignores: list[_Ignore], path: str, is_dir: bool) -> bool:
    """As git decides: the deepest ``.gitignore`` with an opinion wins."""
    decision = False
    for ignore in ignores:
        verdict = ignore.verdict(path, is_dir)
        if verdict is not None:
            decision = verdict
    return decision


def _load_ignore(directory: str) -> _Ignore | None:
    gitignore = os.path.join(directory, ".gitignore")
    try:
        with open(gitignore, encoding="utf-8", errors="replace") as handle:
            return _Ignore(directory, pathspec.GitIgnoreSpec.from_lines(handle))
    except OSError:
        return None


def _ancestor_ignores(root: str) -> list[_Ignore]:
    """``.gitignore`` files above the root, up to the top of its git work tree."""
    found: list[_Ignore] = []
    current = root
    while not os.path.exists(os.path.join(current, ".git")):
        parent = os.path.dirname(current)
        if parent == current:
            return []  # not inside a git work tree: outer .gitignore files do not apply
        current = parent
        ignore = _load_ignore(current)
        if ignore:
            found.append(ignore)
    return found[::-1]


class ModuleNamer:
    """Dotted module names from paths: climb while the folder is a package.

    ``root/shop/views.py`` with ``shop/__init__.py`` is ``shop.views``; in a
    ``src/`` layout the climb stops below ``src``; a folder without
    ``__init__.py`` right inside a package is a namespace portion of it and is
    climbed through; a file whose folder is neither is a loose script named by
    its stem. The climb may go above the
    scan root, so scanning ``django/`` itself still names ``django.db``.
    """

    def __init__(self) -> None:
        self._is_package: dict[str, bool] = {}

    def know(self, directory: str, is_package: bool) -> None:
        """Record what a directory listing already showed, saving a ``stat``."""
        self._is_package[directory] = is_package

    def _package_dir(self, directory: str) -> bool:
        known = self._is_package.get(directory)
        if known is None:
            known = os.path.isfile(os.path.join(directory, "__init__.py"))
            self._is_package[directory] = known
        return known

    def name(self, path: str) -> tuple[str, bool]:
        """Module name of the file at ``path`` and whether it is a package ``__init__``."""
        directory, filename = os.path.split(path)
        stem = filename[: -len(".py")] if filename.endswith(".py") else filename
        is_package = stem == "__init__"
        parts = [] if is_package else [stem]
        while self._package_dir(directory) or self._namespace_portion(directory):
            directory, package = os.path.split(directory)
            if not package:
                break
            parts.append(package)
        return ".".join(reversed(parts)) or stem, is_package

    def _namespace_portion(self, directory: str) -> bool:
        """A folder without ``__init__.py`` right inside a package is a PEP 420 portion of it:
        ``litellm/proxy/management_helpers/audit_logs.py`` is imported as
        ``litellm.proxy.management_helpers.audit_logs``."""
        parent = os.path.dirname(directory)
        return parent != directory and self._package_dir(parent)


@dataclass
class _Walker:
    root: str
    include_tests: bool
    result: WalkResult = field(default_factory=WalkResult)
    namer: ModuleNamer = field(default_factory=ModuleNamer)
    visited: set[str] = field(default_factory=set)

    @property
    def prefix(self) -> str:
        return os.path.join(self.root, "")

    def walk_dir(
        self, path: str, real: str, ignores: list[_Ignore], ancestors: frozenset[str]
    ) -> None:
        """Read one folder; ``real`` is its resolved path, tracked without a syscall."""
        if real in ancestors:
            self._error(path, ScanErrorKind.SYMLINK_LOOP, f"symbolic link loops back to {real}")
            return
        if real in self.visited:
            return  # the same folder reached through another link: already read once
        self.visited.add(real)
        entries = self._entries(path)
        if entries is None or (path != self.root and "pyvenv.cfg" in entries):
            return  # a virtualenv, whatever its name
        self.namer.know(path, "__init__.py" in entries)
        own = _load_ignore(path) if ".gitignore" in entries else None
        scope = [*ignores, own] if own else ignores
        inside = ancestors | {real}
        for entry in sorted(entries.values(), key=lambda e: e.name):
            self._visit(entry, real, scope, inside)

    def _entries(self, path: str) -> dict[str, os.DirEntry[str]] | None:
        try:
            with os.scandir(path) as it:
                return {entry.name: entry for entry in it}
        except OSError as exc:
            self._error(path, ScanErrorKind.IO, f"cannot list folder: {exc.strerror or exc}")
            return None

    def _visit(
        self,
        entry: os.DirEntry[str],
        parent_real: str,
        ignores: list[_Ignore],
        ancestors: frozenset[str],
    ) -> None:
        is_dir = self._is_dir(entry)
        if ignores and ignored(ignores, entry.path, is_dir):
            return
        if is_dir:
            if not self._skip_dir(entry.name):
                self.walk_dir(entry.path, self._real(entry, parent_real), ignores, ancestors)
        elif entry.name.endswith(".py") and (self.include_tests or not is_test_file(entry.name)):
            self._add_file(entry)

    @staticmethod
    def _real(entry: os.DirEntry[str], parent_real: str) -> str:
        if entry.is_symlink():
            return os.path.realpath(entry.path)
        return os.path.join(parent_real, entry.name)

    @staticmethod
    def _is_dir(entry: os.DirEntry[str]) -> bool:
        try:
            return entry.is_dir()
        except OSError:
            return False

    def _skip_dir(self, name: str) -> bool:
        if name in SKIP_DIRS or name in MIGRATION_DIRS or name.endswith(".egg-info"):
            return True
        return not self.include_tests and name in TEST_DIRS

    def _add_file(self, entry: os.DirEntry[str]) -> None:
        try:
            stat = entry.stat()
        except OSError as exc:
            self._error(entry.path, ScanErrorKind.IO, f"cannot stat: {exc.strerror or exc}")
            return
        module, is_package = self.namer.name(entry.path)
        rel = self._rel(entry.path)
        self.result.files.append(
            SourceFile(entry.path, rel, module, is_package, stat.st_size, stat.st_mtime_ns)
        )

    def _rel(self, path: str) -> str:
        if path.startswith(self.prefix):
            return path[len(self.prefix) :].replace(os.sep, "/")
        return os.path.relpath(path, self.root).replace(os.sep, "/")

    def _error(self, path: str, kind: ScanErrorKind, reason: str) -> None:
        self.result.errors.append(ScanError(path=self._rel(path), reason=reason, kind=kind))


def walk(
    root: Path | str, *, include_tests: bool = False, exclude: Iterable[str] = ()
) -> WalkResult:
    """Every Python file under ``root`` that a scan should read, in path order.

    ``exclude`` holds gitignore-style globs relative to the root
    (``[tool.migrator] exclude``).
    """
    top = os.path.abspath(root)
    ignores = _ancestor_ignores(top)
    if ignored(ignores, top, is_dir=True):
        ignores = []  # the user asked for an ignored folder by name: scan it
    patterns = list(exclude)
    if patterns:
        ignores.append(_Ignore(top, pathspec.GitIgnoreSpec.from_lines(patterns)))
    walker = _Walker(top, include_tests)
    walker.walk_dir(top, os.path.realpath(top), ignores, frozenset())
    return walker.result
