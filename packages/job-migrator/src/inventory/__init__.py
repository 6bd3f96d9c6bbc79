"""inventory: read a codebase, find in-process jobs, classify their idempotency.

Never imports or executes the code it reads.
"""

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
)

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
    "scan",
]
