"""What the plan reads from the scanned project's ``pyproject.toml``.

- ``[tool.migrator.plan]``: ``metrics_url`` (a worker's Prometheus endpoint,
  checked for ``queue_depth``) and ``runbooks`` (links or paths, when the
  runbooks are not in ``docs/runbooks/*.md``);
- ``[tool.migrator.jobs."<job>"] key``: declared idempotency keys (the same
  table ``migrator scan`` and ``migrator apply`` read);
- ``[tool.queue_runtime]``: the runtime configuration the checks use, kept raw
  too so "pools configured" can tell an explicit pool from a built-in default.

Runtime settings are built with queue_runtime's public :class:`Settings`,
from the same sources in the same order as ``queue_runtime.configure()``
(the table, then ``QUEUE_RUNTIME_*`` environment, then explicit overrides),
but from the *scanned* project's pyproject rather than the working directory.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from migrator.errors import MigratorConfigError
from queue_runtime import Settings

ENV_VARS = {
    "QUEUE_RUNTIME_DATABASE_URL": "database_url",
    "QUEUE_RUNTIME_REDIS_URL": "redis_url",
    "QUEUE_RUNTIME_MODE": "mode",
}


class PlanConfig(BaseModel):
    """What :func:`migrator.plan.build_plan` needs besides the Inventory."""

    model_config = ConfigDict(frozen=True)

    keys: dict[str, str] = Field(
        default_factory=dict, description='Declared keys: [tool.migrator.jobs."<job>"] key.'
    )
    metrics_url: str | None = None
    runbooks: list[str] = Field(default_factory=list)


class CheckSettings(BaseModel):
    """What :func:`migrator.plan.check` verifies against."""

    model_config = ConfigDict(frozen=True)

    root: Path
    runtime: Settings
    runtime_table: dict[str, Any] = Field(
        default_factory=dict, description="[tool.queue_runtime] as written (no defaults)."
    )
    metrics_url: str | None = None
    runbooks: list[str] = Field(default_factory=list)
    timeout: float = Field(default=5.0, gt=0, description="Seconds per server call.")


def read_pyproject(root: Path) -> dict[str, Any]:
    path = root / "pyproject.toml"
    if not path.is_file():
        return {}
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise MigratorConfigError(f"cannot read {path}: {exc}") from exc


def _table(data: Mapping[str, Any], *names: str) -> dict[str, Any]:
    table: Any = data
    for name in names:
        table = table.get(name, {}) if isinstance(table, Mapping) else {}
    if not isinstance(table, dict):
        raise MigratorConfigError(f"[{'.'.join(names)}] must be a table")
    return table


def load_plan_config(root: Path) -> PlanConfig:
    data = read_pyproject(root)
    plan = _table(data, "tool", "migrator", "plan")
    jobs = _table(data, "tool", "migrator", "jobs")
    keys = {
        name: setting["key"]
        for name, setting in jobs.items()
        if isinstance(setting, dict) and isinstance(setting.get("key"), str) and setting["key"]
    }
    try:
        return PlanConfig(
            keys=keys, metrics_url=plan.get("metrics_url"), runbooks=plan.get("runbooks", [])
        )
    except ValidationError as exc:
        raise MigratorConfigError(f"[tool.migrator.plan]: {exc}") from exc


def load_check_settings(
    root: Path,
    env: Mapping[str, str] | None = None,
    **overrides: Any,
) -> CheckSettings:
    """The runtime settings of the scanned project plus the plan's own table.

    ``overrides`` (``database_url``, ``redis_url``, ...) win over everything,
    as the CLI flags do for ``queue-runtime``.
    """
    data = read_pyproject(root)
    table = _normalised(_table(data, "tool", "queue_runtime"))
    merged = {**table}
    environ = os.environ if env is None else env
    merged.update({field: environ[var] for var, field in ENV_VARS.items() if environ.get(var)})
    merged.update(_normalised({k: v for k, v in overrides.items() if v is not None}))
    try:
        runtime = Settings.model_validate(merged)
    except ValidationError as exc:
        raise MigratorConfigError(f"[tool.queue_runtime]: {exc}") from exc
    plan = load_plan_config(root)
    return CheckSettings(
        root=root,
        runtime=runtime,
        runtime_table=table,
        metrics_url=plan.metrics_url,
        runbooks=plan.runbooks,
    )


def _normalised(values: Mapping[str, Any]) -> dict[str, Any]:
    """TOML keys may use dashes; ``schema`` is the alias of ``schema_name``."""
    out = {key.replace("-", "_"): value for key, value in values.items()}
    if "schema_name" in out:
        out["schema"] = out.pop("schema_name")
    return out
