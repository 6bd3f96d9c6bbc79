"""The CLI's entry point: the one place an exception becomes a message and an ExitCode.

Every ``migrator`` command and group is a :class:`MigratorCommand` or a
:class:`MigratorGroup`, so a command run alone (as the tests of ``apply`` do)
and the same command under ``migrator`` fail the same way: the error roots
of migrator, inventory, codemods and queue_runtime give ``Error: <one line>``
on stderr and :attr:`ExitCode.ERROR`, without a traceback; anything else is a
bug, reported the same way as ``internal error: <type>: <message>``. Usage
errors stay click's (its usage line, then the message) with
:attr:`ExitCode.USAGE`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NoReturn

import click

from inventory.errors import InventoryError
from migrator.errors import ExitCode, MigratorError

# codemods' and queue_runtime's roots are checked apart (_is_tool_error): importing
# them costs libcst and the runtime, which a `migrator scan` should not pay.
_OPERATIONAL: tuple[type[Exception], ...] = (MigratorError, InventoryError)


@dataclass(frozen=True)
class Failure:
    """What the user sees when a command stops: one line, and the exit status."""

    message: str
    code: ExitCode


def failure_for(exc: Exception) -> Failure:
    """The message and ExitCode of an exception that stopped a command."""
    if isinstance(exc, _OPERATIONAL) or _is_tool_error(exc):
        return Failure(one_line(str(exc) or _kind(exc)), ExitCode.ERROR)
    return Failure(one_line(f"internal error: {type(exc).__name__}: {exc}"), ExitCode.ERROR)


def _is_tool_error(exc: Exception) -> bool:
    # Imported on the failure path only (see _OPERATIONAL); neither imports migrator.
    from codemods import CodemodError
    from queue_runtime.errors import QueueError

    return isinstance(exc, CodemodError | QueueError)


def _kind(exc: Exception) -> str:
    """An error raised without details says its kind: its class's docstring."""
    return (type(exc).__doc__ or type(exc).__name__).strip()


def one_line(text: str) -> str:
    """Details that span lines (a validation error, a log tail) as one line for stderr."""
    return "; ".join(line.strip() for line in text.splitlines() if line.strip())


class CommandFailed(click.ClickException):
    """A command stopped: click prints ``Error: <message>`` and exits with the failure's code."""

    def __init__(self, failure: Failure) -> None:
        super().__init__(failure.message)
        # click declares exit_code a ClassVar, yet reads it from the instance it shows.
        self.exit_code = failure.code  # type: ignore[misc]


def finish(code: ExitCode) -> NoReturn:
    """End the running command with ``code`` (0 included), the way click unwinds."""
    click.get_current_context().exit(code)


def _invoke_mapped(invoke: Callable[[click.Context], Any], ctx: click.Context) -> Any:
    try:
        return invoke(ctx)
    except (click.ClickException, click.exceptions.Exit, click.Abort):
        # --help, finish(), a subcommand's failure already mapped, or a usage error:
        # click's UsageError exits with 2, which is ExitCode.USAGE (a test holds them equal).
        raise
    except Exception as exc:  # the command runner: every failure becomes one line, a bug too
        raise CommandFailed(failure_for(exc)) from exc


class MigratorCommand(click.Command):
    """A command whose failures are mapped by :func:`failure_for`."""

    def invoke(self, ctx: click.Context) -> Any:
        return _invoke_mapped(super().invoke, ctx)


class MigratorGroup(click.Group):
    """A group whose failures, and its subcommands' and subgroups', are mapped the same way."""

    command_class = MigratorCommand
    group_class = type  # subgroups are MigratorGroups too

    def invoke(self, ctx: click.Context) -> Any:
        return _invoke_mapped(super().invoke, ctx)
