"""The root of every error inventory raises on purpose.

Callers (the migrator CLI among them) catch ``InventoryError`` to tell a
problem the user can act on from a bug in the scanner.
"""

from __future__ import annotations


class InventoryError(Exception):
    """Something about the scanned project stops inventory from doing its job."""
