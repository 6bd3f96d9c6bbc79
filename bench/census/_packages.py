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
    requirement: str | None = None  # ``NAME==VERSION`` from packages.txt, for --environments


def _listed(listing: Path) -> dict[str, tuple[str, str]]:
    """``<name>-<version>`` -> (KIND, ``NAME==VERSION``) for every line of ``packages.txt``."""
    found: dict[str, tuple[str, str]] = {}
    if not listing.is_file():
        return found
    for line in listing.read_text().splitlines():
        fields = line.split()
        if not fields or line.startswith("#") or "==" not in fields[0]:
            continue
        name, version = fields[0].split("==", 1)
        found[f"{name}-{version}"] = (fields[-1], fields[0])
    return found


def discover(
    dest: Path, only: list[str] | None = None, listing: Path = PACKAGES_TXT
) -> list[Package]:
    """Unpacked packages in ``dest``, in name order; ``only`` keeps names starting with one of it.

    A folder counts once the fetch stamped it in ``DEST/.unpacked`` (or, when there is
    no stamp folder at all, any folder holding ``.py`` files), so a scan running next
    to the fetch never reads a half-unpacked tree.
    """
    listed = _listed(listing)
    stamps = dest / _UNPACKED
    found = []
    for folder in sorted(p for p in dest.iterdir() if p.is_dir() and not p.name.startswith(".")):
        if stamps.is_dir() and not (stamps / folder.name).exists():
            continue
        if only and not any(folder.name.startswith(o) for o in only):
            continue
        kind, requirement = listed.get(folder.name, ("?", None))
        found.append(Package(folder.name, kind, folder, requirement))
    return found
