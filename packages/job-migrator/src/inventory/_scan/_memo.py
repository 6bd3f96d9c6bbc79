"""Reuse the last Inventory when nothing the classifier reads has changed.

The classifier is a pure function of the summaries, the configuration and
its own code (catalogue included). When every file is a cache hit, a digest
of those inputs (each file's content hash, module name and failure; the
configuration; the scan options; a digest of our source files) names the
result, and the stored Inventory is returned without loading a single
summary. Any difference, even in one file, runs the classifier on all of them.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from pydantic import BaseModel, ValidationError

from inventory._cachedir import code_key, write_atomically
from inventory._scan._cache import EXTRACTOR_SOURCES, Stamp, cache_path
from inventory.config import MigratorConfig
from inventory.models import Inventory, ScanError

CLASSIFIER_SOURCES = (
    *EXTRACTOR_SOURCES,
    "_classify/**/*.py",
    "_catalogue.py",
    "catalogue.toml",
    "config.py",
    "models.py",
    "_scan/_scan.py",
    "_scan/_walk.py",
    "_scan/_memo.py",
)


class Memo(BaseModel):
    key: str
    inventory: Inventory


def result_key(
    top: Path,
    stamps: dict[str, Stamp],
    walk_errors: list[ScanError],
    config: MigratorConfig,
    include_tests: bool,
) -> str:
    digest = hashlib.sha256(code_key(CLASSIFIER_SOURCES).encode())
    digest.update(f"{top}\0{include_tests}\0{config.model_dump_json()}\n".encode())
    for rel in sorted(stamps):
        stamp = stamps[rel]
        failure = f"{stamp.error.kind}:{stamp.error.reason}" if stamp.error else ""
        digest.update(
            f"{rel}\0{stamp.sha256}\0{stamp.module}\0{stamp.is_package}\0{failure}\n".encode()
        )
    for error in walk_errors:
        digest.update(f"{error.path}\0{error.kind}\n".encode())
    return digest.hexdigest()


def load_memo(top: Path, key: str) -> Inventory | None:
    try:
        memo = Memo.model_validate_json(cache_path(top, "result").read_bytes())
    except (OSError, ValidationError, ValueError):
        return None
    return memo.inventory if memo.key == key else None


def save_memo(top: Path, key: str, inventory: Inventory) -> None:
    write_atomically(
        cache_path(top, "result"), Memo(key=key, inventory=inventory).model_dump_json().encode()
    )
