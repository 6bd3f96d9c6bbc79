"""The ``migrator`` command line: one click module per command, each a thin face on a library.

Every command has the same shape: its module here parses options, calls its
library (:mod:`migrator.scan`, :mod:`migrator.plan`, :mod:`migrator.apply`,
:mod:`migrator.gate`, :mod:`migrator.loadtest`) for a typed outcome, hands the
outcome to its renderer (:mod:`migrator.render`) and ends with the outcome's
:class:`~migrator.errors.ExitCode`. Options several commands share are in
:mod:`migrator.cli._options`; failures become one line and an exit status in
:mod:`migrator.cli.entry`.

Exit status (:class:`~migrator.errors.ExitCode`): OK clean, FINDINGS at or
above ``--fail-on`` (after the baseline), USAGE / ERROR for bad options and
anything that stopped the command (mapped in :mod:`migrator.cli.entry`).
"""

from __future__ import annotations

import importlib

import click

from migrator.cli.entry import Failure, MigratorCommand, MigratorGroup, failure_for, finish

# Each command is imported when used: libcst, psycopg and the runtime cost ~0.5 s of
# import time a warm `migrator scan` in CI should not pay, and a scan imports only its own.
COMMANDS = {
    "apply": "migrator.cli.apply",
    "gate": "migrator.cli.gate",
    "loadtest": "migrator.cli.loadtest",
    "plan": "migrator.cli.plan",
    "rollout": "migrator.cli.rollout",
    "scan": "migrator.cli.scan",
}


class _Group(MigratorGroup):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *COMMANDS})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        module = COMMANDS.get(cmd_name)
        if module is None:
            return super().get_command(ctx, cmd_name)
        command = getattr(importlib.import_module(module), cmd_name)
        assert isinstance(command, click.Command), module
        return command


@click.group(cls=_Group)
@click.version_option(package_name="job-migrator", prog_name="migrator")
def main() -> None:
    """Find in-process background work and move it onto a job queue safely."""


__all__ = [
    "COMMANDS",
    "Failure",
    "MigratorCommand",
    "MigratorGroup",
    "failure_for",
    "finish",
    "main",
]
