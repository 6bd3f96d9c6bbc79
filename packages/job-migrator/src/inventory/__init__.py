"""inventory: read a codebase, find in-process jobs, classify their idempotency.

Never imports or executes the code it reads.
"""

from inventory._extract import extract_source
from inventory._scan._scan import ProgressCallback, scan
from inventory.errors import InventoryError
from inventory.models import (
    Argument,
    CallSite,
    Confidence,
    Effect,
    EffectKind,
    Evidence,
    Framework,
    Idempotency,
    Inventory,
    Job,
    Location,
    Pattern,
    ScanError,
    ScanErrorKind,
    ScanStats,
    Surroundings,
)


def surroundings_at(source: str, line: int) -> Surroundings:
    """What encloses line ``line`` of ``source`` (a module's text): the ``except`` clauses
    and ``transaction.atomic`` blocks a call written there runs inside, as ``scan`` gives
    each site (``CallSite.surroundings``). Reads the text; never imports it."""
    from inventory._classify._surroundings import surroundings_at as at

    return at(extract_source(source, "<source>", "module"), line)


__all__ = [
    "Argument",
    "CallSite",
    "Confidence",
    "Effect",
    "EffectKind",
    "Evidence",
    "Framework",
    "Idempotency",
    "Inventory",
    "InventoryError",
    "Job",
    "Location",
    "Pattern",
    "ProgressCallback",
    "ScanError",
    "ScanErrorKind",
    "ScanStats",
    "Surroundings",
    "scan",
    "surroundings_at",
]
