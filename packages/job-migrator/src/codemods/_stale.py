"""Never rewrite a position recorded for different content.

The Inventory records the sha256 of every file it scanned
(``Inventory.file_hashes``). A file whose bytes differ now is *stale*: its
sites' lines may point anywhere. Apply then rescans the root (the scanner is
passed in, so tests and callers choose) or, when rescanning is not allowed,
refuses every stale file with a clear message. Independently of hashes, a
transformer only rewrites a statement of the expected shape naming the job
at the recorded line (see ``_rewriter``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path

from inventory.models import APPLY_SCHEMA, Inventory

Scanner = Callable[[Path], Inventory]

STALE_REASON = "file changed since the scan: run `migrator scan` again (positions would be stale)"


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _named_files(inventory: Inventory) -> set[str]:
    return {s.location.path for s in inventory.sites} | {
        j.location.path for j in inventory.jobs if j.location
    }


def stale_files(root: Path, inventory: Inventory) -> list[str]:
    """Files the inventory has sites in whose content changed (or vanished) since the scan."""
    paths = sorted(_named_files(inventory))
    return [
        p
        for p in paths
        if p in inventory.file_hashes and _current(root / p) != inventory.file_hashes[p]
    ]


def _current(path: Path) -> str | None:
    try:
        return digest(path.read_bytes())
    except OSError:
        return None


def older_reason(inventory: Inventory) -> str:
    return (
        f"the inventory was written by an older migrator (schema {inventory.schema_version}), "
        "without facts apply reads: run `migrator scan` again"
    )


def refresh(
    root: Path, inventory: Inventory, scanner: Scanner | None
) -> tuple[Inventory, list[str], list[str]]:
    """``(inventory to use, files rescanned, files refused as stale)``.

    An inventory older than the schema apply reads (``APPLY_SCHEMA``) lacks facts its
    rules need (the ``try`` or transaction around a call would read as none): it is
    scanned again, or, when rescanning is not allowed, every file it names is refused."""
    if inventory.older_than(APPLY_SCHEMA):
        if scanner is None:
            return inventory, [], sorted(_named_files(inventory))
        fresh = scanner(root)
        return fresh, sorted(_named_files(fresh)), stale_files(root, fresh)
    stale = stale_files(root, inventory)
    if not stale:
        return inventory, [], []
    if scanner is None:
        return inventory, [], stale
    fresh = scanner(root)
    return fresh, stale, stale_files(root, fresh)


def default_scanner(root: Path) -> Inventory:
    from inventory import scan  # the scanner is only needed when a file changed

    return scan(root)
