"""Which census packages are on disk, and of which KIND (from ``packages.txt``)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

PACKAGES_TXT = Path("/work/shared/census/packages.txt")
_UNPACKED = ".unpacked"


@dataclass(frozen=True)
class Package:
    name: str  # the folder name, ``<name>-<version>``
    kind: str  # django-site, flask-ext, ... (``?`` when packages.txt does not list it)
    path: Path


def read_kinds(listing: Path = PACKAGES_TXT) -> dict[str, str]:
    """``<name>-<version>`` -> KIND for every line of ``packages.txt``."""
    kinds: dict[str, str] = {}
    if not listing.is_file():
        return kinds
    for line in listing.read_text().splitlines():
        fields = line.split()
        if not fields or line.startswith("#") or "==" not in fields[0]:
            continue
        name, version = fields[0].split("==", 1)
        kinds[f"{name}-{version}"] = fields[-1]
    return kinds


def discover(
    dest: Path, only: list[str] | None = None, listing: Path = PACKAGES_TXT
) -> list[Package]:
    """Unpacked packages in ``dest``, in name order; ``only`` keeps names starting with one of it.

    A folder counts once the fetch stamped it in ``DEST/.unpacked`` (or, when there is
    no stamp folder at all, any folder holding ``.py`` files), so a scan running next
    to the fetch never reads a half-unpacked tree.
    """
    kinds = read_kinds(listing)
    stamps = dest / _UNPACKED
    found = []
    for folder in sorted(p for p in dest.iterdir() if p.is_dir() and not p.name.startswith(".")):
        if stamps.is_dir() and not (stamps / folder.name).exists():
            continue
        if only and not any(folder.name.startswith(o) for o in only):
            continue
        found.append(Package(folder.name, kinds.get(folder.name, "?"), folder))
    return found
