"""Options more than one command takes, declared once."""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
from pathlib import Path
from typing import Any, TypeVar

import click

F = TypeVar("F", bound=Callable[..., Any])


def choice(enum: type[StrEnum]) -> click.Choice[str]:
    """A choice of the enum's values (``--format``, ``--fail-on``)."""
    return click.Choice([member.value for member in enum])


def runtime_options(fn: F) -> F:
    """--project, --database-url, --redis-url: where the queue's tables are (gate, rollout)."""
    fn = click.option("--redis-url", help="Redis of the runtime (overrides the configuration).")(fn)
    fn = click.option(
        "--database-url", help="PostgreSQL of the runtime (overrides the configuration)."
    )(fn)
    return click.option(
        "--project",
        type=click.Path(exists=True, file_okay=False, path_type=Path),
        default=".",
        show_default=True,
        help="The app's folder (its pyproject.toml has [tool.queue_runtime]).",
    )(fn)


def project_path(fn: F) -> F:
    """PATH, the project's folder (default: the current one): plan, apply."""
    return click.argument(
        "path", default=".", type=click.Path(exists=True, file_okay=False, path_type=Path)
    )(fn)
