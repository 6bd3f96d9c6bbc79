"""Where the caches live (``ROOT/.migrator/cache``), how a file there is written, and
the digest of our own code that keys them.

At the bottom of ``inventory`` because the scan's cache (``_scan._cache``), the
environment's memo (``_env``) and the libraries' summaries (``_thirdparty``) all
write there. Patterns given to :func:`code_key` are relative to the ``inventory``
package folder.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable
from pathlib import Path

from inventory.summary import SUMMARY_VERSION

CACHE_DIR = Path(".migrator") / "cache"
_HERE = Path(__file__).parent


def code_key(patterns: Iterable[str]) -> str:
    """A digest of our own source files matching ``patterns`` (stats only: cheap)."""
    sources = sorted({path for pattern in patterns for path in _HERE.glob(pattern)})
    digest = hashlib.sha256(SUMMARY_VERSION.encode())
    for source in sources:
        stat = source.stat()
        digest.update(f"{source.relative_to(_HERE)}:{stat.st_size}:{stat.st_mtime_ns};".encode())
    return digest.hexdigest()[:16]


def write_atomically(target: Path, data: bytes, *, best_effort: bool = True) -> None:
    """Never leave half a file. Cache writes are ``best_effort``: a tree we
    cannot write to still scans, it only scans slower."""
    temporary = target.with_suffix(f".{os.getpid()}.tmp")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        temporary.write_bytes(data)
        os.replace(temporary, target)
    except OSError:
        temporary.unlink(missing_ok=True)
        if not best_effort:
            raise
