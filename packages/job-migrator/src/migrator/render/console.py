"""The terminal the commands write to."""

from __future__ import annotations

import os
import sys

from rich.console import Console

PIPED_WIDTH = 160


def stdout_console(*, soft_wrap: bool = False) -> Console:
    """A console for stdout that does not fold reports to 80 columns when piped (CI logs)."""
    width = None if sys.stdout.isatty() or os.environ.get("COLUMNS") else PIPED_WIDTH
    return Console(soft_wrap=soft_wrap, width=width)
