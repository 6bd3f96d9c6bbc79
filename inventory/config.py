"""``[tool.migrator]``: what the scanned project tells the scanner about itself.

Read from the *scanned* project's ``pyproject.toml``::

    [tool.migrator]
    exclude = ["migrations/*", "tests/*"]
    max_file_size = 1000000

    [[tool.migrator.catalogue.effect]]      # same format as inventory/catalogue.toml
    call = "shop.gateway.Client.refund"
    effect = "payment"
    keyed_by = "request_key"

    [tool.migrator.jobs."shop.tasks.rebuild_index"]
    idempotency = "idempotent"              # a pinned verdict ...
    reason = "rebuilds from scratch, reviewed by Ana 2026-03"   # ... always with a reason

    [tool.migrator.jobs."shop.tasks.send_welcome"]
    key = "welcome:{user_id}"               # a declared idempotency key: the job is needs_key
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from inventory._catalogue import CatalogueSpec
from inventory.models import Idempotency


class ConfigError(ValueError):
    """The [tool.migrator] table of the scanned project is invalid."""


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
        return self


class MigratorConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    catalogue: CatalogueSpec = Field(default_factory=CatalogueSpec)
    jobs: dict[str, JobSetting] = Field(default_factory=dict)
    exclude: list[str] = Field(default_factory=list, description="Gitignore-style globs.")
    max_file_size: int = Field(
        default=1_000_000, gt=0, description="Bytes; larger files are skipped."
    )
    # Tables that belong to other commands share [tool.migrator]; scan accepts and ignores them.
    plan: dict[str, Any] = Field(
        default_factory=dict, description="[tool.migrator.plan], read by `migrator plan`."
    )

    @classmethod
    def from_toml(cls, text: str) -> MigratorConfig:
        """The ``[tool.migrator]`` table of a pyproject.toml text (defaults when absent)."""
        try:
            table = tomllib.loads(text).get("tool", {}).get("migrator", {})
            return cls.model_validate(table)
        except (tomllib.TOMLDecodeError, ValueError) as exc:
            raise ConfigError(f"[tool.migrator]: {exc}") from exc

    @classmethod
    def from_project(cls, root: Path) -> MigratorConfig:
        """Read ``root/pyproject.toml`` if there is one."""
        path = root / "pyproject.toml"
        if not path.is_file():
            return cls()
        return cls.from_toml(path.read_text(encoding="utf-8"))
