"""``[tool.migrator]``: what the scanned project tells the scanner about itself.

Read from the *scanned* project's ``pyproject.toml``::

    [tool.migrator]
    exclude = ["migrations/*", "tests/*"]
    max_file_size = 1000000

    [[tool.migrator.catalogue.effect]]      # same format as inventory/catalogue.toml
    call = "shop.gateway.Client.refund"
    effect = "payment"
    keyed_by = "request_key"

    [tool.migrator.per-file-ignores]        # like ruff's: sites of these patterns go unreported
    "shop/legacy/*.py" = ["thread"]         # gitignore-style glob -> pattern names
    "scripts/**" = ["all"]                  # "all": every pattern

    python = ".venv/bin/python"             # where the libraries jobs call are installed
    target = "django-tasks"                 # `migrator apply` writes Django's task API

    [tool.migrator.jobs."shop.tasks.rebuild_index"]
    idempotency = "idempotent"              # a pinned verdict ...
    reason = "rebuilds from scratch, reviewed by Ana 2026-03"   # ... always with a reason

    [tool.migrator.jobs."shop.tasks.send_welcome"]
    key = "welcome:{user_id}"               # a declared idempotency key: the job is needs_key

    [tool.migrator.jobs."shop.billing.send_invoice"]
    key = "shop.keys:invoice_key"           # or a function computing it from the job's arguments

A key template's ``{fields}`` must be parameters of the job (checked by the
classifier, which knows them); a key function is ``package.module:function``
and is called with the job's own arguments.
"""

from __future__ import annotations

import re
import string
import tomllib
from enum import StrEnum
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from inventory._catalogue import CatalogueSpec, load_shipped, merge, resolve_likes
from inventory.errors import InventoryError
from inventory.models import Idempotency, Pattern


class ScanConfigError(InventoryError, ValueError):
    """The [tool.migrator] table of the scanned project is invalid."""


_KEY_FUNCTION = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*:[A-Za-z_]\w*$")


def key_fields(template: str) -> list[str]:
    """The ``{fields}`` of a key template, in order (raises ValueError on a malformed one)."""
    return [name for _, name, _, _ in string.Formatter().parse(template) if name is not None]


def key_function(key: str) -> tuple[str, str] | None:
    """``(module, function)`` when ``key`` names a key function (``pkg.mod:func``), else None."""
    if "{" in key or not _KEY_FUNCTION.match(key):
        return None
    module, _, name = key.partition(":")
    return module, name


def check_key(key: str) -> None:
    """A declared key is a template of plain ``{parameter}`` fields or ``pkg.mod:func``."""
    if key_function(key) is not None:
        return
    try:
        fields = key_fields(key)
    except ValueError as exc:
        raise ValueError(f"key {key!r} is not a valid template: {exc}") from None
    if not fields:
        raise ValueError(
            f"key {key!r} has no {{parameter}} field and is not a key function (pkg.module:function):"
            " every call would share one key, so the job would run once, ever"
        )
    # {*}: a digest of every argument; {+}: a fresh id per call; {param.attr}: an attribute path.
    own = ("*", "+")
    bad = [f for f in fields if f not in own and not all(p.isidentifier() for p in f.split("."))]
    if bad or any(conversion or spec for _, _, spec, conversion in string.Formatter().parse(key)):
        raise ValueError(
            f"key {key!r}: fields must be plain parameter names like {{user_id}}, attribute "
            "paths of one like {order.id}, {*} or {+} (no indexes, conversions or format specs)"
        )


def key_mismatch(job: str, key: str, parameters: list[str]) -> str | None:
    """Why ``key`` cannot be built from ``job``'s parameters, or None when it can."""
    if key_function(key) is not None:
        return None
    roots = [f.split(".")[0] for f in key_fields(key) if f not in ("*", "+")]
    missing = [f for f in dict.fromkeys(roots) if f not in parameters]
    if not missing:
        return None
    fields = ", ".join(f"{{{f}}}" for f in missing)
    params = ", ".join(parameters) or "none"
    return (
        f'[tool.migrator.jobs."{job}"] key {key!r}: {fields} is not a parameter of {job} '
        f"(its parameters: {params})"
    )


class JobSetting(BaseModel):
    """``[tool.migrator.jobs."dotted.name"]``: a pinned verdict or a declared key."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    idempotency: Idempotency | None = None
    reason: str = ""
    key: str | None = Field(default=None, description="Declared idempotency key template.")

    @model_validator(mode="after")
    def _pin_needs_reason(self) -> JobSetting:
        # A pinned verdict without a reason is an unreviewable override.
        if self.idempotency is not None and not self.reason.strip():
            raise ValueError("a pinned idempotency needs a reason")
        if self.key is not None:
            check_key(self.key)
        return self


IGNORE_ALL = "all"  # in a suppression: every pattern


def check_ignored_patterns(codes: list[str]) -> list[str]:
    """Pattern names of a suppression (``thread``, ``on_commit``...), or ``all``."""
    known = {p.value for p in Pattern} | {IGNORE_ALL}
    bad = [code for code in codes if code not in known]
    if bad:
        raise ValueError(f"unknown pattern {', '.join(bad)} (known: {', '.join(sorted(known))})")
    return codes


class MigrationTarget(StrEnum):
    """The API ``migrator apply`` rewrites to (``[tool.migrator] target``)."""

    QUEUE_RUNTIME = "queue-runtime"  # @job and fn.enqueue() of queue_runtime
    DJANGO_TASKS = "django-tasks"  # Django's @task and task.enqueue(), on queue_runtime's backend


class MigratorConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    catalogue: CatalogueSpec = Field(default_factory=CatalogueSpec)
    jobs: dict[str, JobSetting] = Field(default_factory=dict)
    exclude: list[str] = Field(default_factory=list, description="Gitignore-style globs.")
    max_file_size: int = Field(
        default=1_000_000, gt=0, description="Bytes; larger files are skipped."
    )
    python: str | None = Field(
        default=None,
        description="The project's interpreter (relative to the project root, or absolute): "
        "its site-packages are where the scan reads the libraries jobs call.",
    )
    per_file_ignores: dict[str, list[str]] = Field(
        default_factory=dict,
        alias="per-file-ignores",
        description="Gitignore-style glob -> pattern names (or 'all') not reported in those files.",
    )
    target: MigrationTarget = Field(
        default=MigrationTarget.QUEUE_RUNTIME,
        description="The API `migrator apply` writes: queue-runtime (@job) or django-tasks (@task).",
    )
    # Tables that belong to other commands share [tool.migrator]; scan accepts and ignores them.
    plan: dict[str, Any] = Field(
        default_factory=dict, description="[tool.migrator.plan], read by `migrator plan`."
    )

    @field_validator("catalogue")
    @classmethod
    def _likes_known(cls, value: CatalogueSpec) -> CatalogueSpec:
        """A ``like`` naming no entry (of this table or the shipped one) is a config error."""
        resolve_likes(merge(load_shipped(), value))
        return value

    @field_validator("per_file_ignores")
    @classmethod
    def _known_patterns(cls, value: dict[str, list[str]]) -> dict[str, list[str]]:
        return {glob: check_ignored_patterns(codes) for glob, codes in value.items()}

    @classmethod
    def from_toml(cls, text: str) -> MigratorConfig:
        """The ``[tool.migrator]`` table of a pyproject.toml text (defaults when absent)."""
        try:
            table = tomllib.loads(text).get("tool", {}).get("migrator", {})
            return cls.model_validate(table)
        except (tomllib.TOMLDecodeError, ValueError) as exc:
            raise ScanConfigError(f"[tool.migrator]: {exc}") from exc

    @classmethod
    def from_project(cls, root: Path) -> MigratorConfig:
        """Read ``root/pyproject.toml`` if there is one."""
        path = root / "pyproject.toml"
        if not path.is_file():
            return cls()
        return cls.from_toml(path.read_text(encoding="utf-8"))
