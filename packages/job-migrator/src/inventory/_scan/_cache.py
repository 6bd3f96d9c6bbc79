"""The index of the summary cache: ``ROOT/.migrator/cache/index-v{SUMMARY_VERSION}.json``.

Per relative path: ``(size, mtime_ns, sha256)``, the module name, and why
the file failed if it did. Small (~200 KB for Django's 877 files), read on
every scan; the summaries themselves live in ``inventory._scan._store`` and are
read only when something changed and the classifier must run.

A file is reused without being read when its size and mtime match; when they
differ it is read and hashed, and still reused if the content is the same
(``git checkout``, ``touch``). The index carries ``tool_key``, a digest of the
extractor's own code, so a changed extractor never serves stale summaries.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from inventory._cachedir import CACHE_DIR, code_key, write_atomically
from inventory._scan._files import Outcome, Summarised, sha256_of
from inventory._scan._walk import SourceFile
from inventory.models import ScanError, ScanErrorKind
from inventory.summary import SUMMARY_VERSION

EXTRACTOR_SOURCES = ("summary.py", "_scan/_files.py", "_extract/**/*.py")


class Stamp(BaseModel):
    """What the index knows about one file without reading it."""

    size: int
    mtime_ns: int
    sha256: str
    module: str
    is_package: bool
    error: ScanError | None = None


class Index(BaseModel):
    version: str = SUMMARY_VERSION
    tool_key: str = ""
    files: dict[str, Stamp] = {}


def cache_path(root: Path, kind: str) -> Path:
    return root / CACHE_DIR / f"{kind}-v{SUMMARY_VERSION}.json"


def tool_key() -> str:
    """Changes whenever the code that produces summaries changes."""
    return code_key(EXTRACTOR_SOURCES)


M = TypeVar("M", bound=BaseModel)


def _read(model: type[M], path: Path) -> M | None:
    try:
        return model.model_validate_json(path.read_bytes())
    except (OSError, ValidationError, ValueError):
        return None


def load_index(root: Path) -> Index:
    """The index of ``root``; an empty one when it is absent, stale or corrupt."""
    key = tool_key()
    index = _read(Index, cache_path(root, "index"))
    return index if index is not None and index.tool_key == key else Index(tool_key=key)


def save_index(root: Path, index: Index) -> None:
    write_atomically(cache_path(root, "index"), index.model_dump_json().encode())


@dataclass
class Lookup:
    """The index's answer for a walk: reused stamps, and files to summarise."""

    hits: dict[str, Stamp] = field(default_factory=dict)
    misses: list[SourceFile] = field(default_factory=list)
    refreshed: bool = False  # a stamp's size/mtime changed: the index needs saving


def _fits(stamp: Stamp, file: SourceFile) -> bool:
    return stamp.module == file.module and stamp.is_package == file.is_package


def _same_content(stamp: Stamp, file: SourceFile) -> bool:
    if not stamp.sha256:
        return False
    try:
        with open(file.path, "rb") as handle:
            return sha256_of(handle.read()) == stamp.sha256
    except OSError:
        return False


def lookup(index: Index, files: Iterable[SourceFile]) -> Lookup:
    found = Lookup()
    for file in files:
        stamp = index.files.get(file.rel)
        if stamp is None or not _fits(stamp, file):
            found.misses.append(file)
        elif stamp.size == file.size and stamp.mtime_ns == file.mtime_ns:
            found.hits[file.rel] = stamp
        elif _same_content(stamp, file):
            found.hits[file.rel] = stamp.model_copy(
                update={"size": file.size, "mtime_ns": file.mtime_ns}
            )
            found.refreshed = True
        else:
            found.misses.append(file)
    return found


def stamp_of(file: SourceFile, outcome: Outcome) -> Stamp:
    """The index entry of one freshly summarised file."""
    error = None
    if not isinstance(outcome, Summarised):
        error = ScanError(path=outcome.rel, reason=outcome.reason, kind=outcome.kind)
    return Stamp(
        size=outcome.size,
        mtime_ns=outcome.mtime_ns,
        sha256=outcome.sha256,
        module=file.module,
        is_package=file.is_package,
        error=error,
    )


def cacheable(stamp: Stamp) -> bool:
    # An unreadable file may be readable next time without its mtime changing.
    return stamp.error is None or stamp.error.kind != ScanErrorKind.IO
