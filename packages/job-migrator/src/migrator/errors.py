"""Errors the command line reports as a message and exit status 2.

Each docstring is the message's first words; the instance carries details.
"""

from __future__ import annotations


class MigratorError(Exception):
    """migrator failed."""


class BaselineError(MigratorError):
    """The baseline file cannot be used."""


class ConfigurationError(MigratorError):
    """The scanned project's [tool.migrator] configuration is invalid."""


class ScanRootError(MigratorError):
    """The path to scan is not a folder."""


class OutputError(MigratorError):
    """The report cannot be written where -o asked."""
