"""migrator's error root, its kinds, and the exit status of every command.

Commands raise these (or the other packages' roots) and never build their
own click exceptions: :mod:`migrator.cli.entry` turns any of them into one line on
stderr and :attr:`ExitCode.ERROR`. Each docstring names the kind; the instance
carries the details.
"""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    """What a ``migrator`` command's exit status means, for every command."""

    OK = 0
    # scan: a finding at or above --fail-on outside the baseline; plan --check: a
    # prerequisite not in place; apply: nothing applicable or a file refused;
    # loadtest: the test failed. The command ran, and the answer is "no".
    FINDINGS = 1
    # The command stopped: an operational error (a message, no traceback) or a bug.
    ERROR = 2
    # An alias of ERROR: click reports bad options with 2 too, and scripts rely on it.
    USAGE = 2


class MigratorError(Exception):
    """migrator failed."""


class BaselineError(MigratorError):
    """The baseline file cannot be used."""


class MigratorConfigError(MigratorError):
    """The scanned project's [tool.migrator] configuration is invalid."""


class ScanRootError(MigratorError):
    """The path to scan is not a folder."""


class OutputError(MigratorError):
    """The report cannot be written where -o asked."""


class NoInventory(MigratorError):
    """No inventory to plan from."""


class PlanFileError(MigratorError):
    """The project's MIGRATION_PLAN.md cannot be read."""


class GateError(MigratorError):
    """The gate command failed."""


class UnknownRolloutJob(GateError):
    """The job is neither registered in the app nor in the inventory."""


class NoSandbox(MigratorError):
    """A load test refuses to run without a sandbox."""
