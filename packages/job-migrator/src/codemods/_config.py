"""What the target application already declares, read for the codemods.

Nothing new to configure: keys and pools live where the scanner and the
runtime already read them, so the three never disagree::

    [tool.migrator.jobs."shop.billing.send_invoice"]
    key = "invoice-{order_id}"      # where a needs_key job's idempotency key comes from

    [tool.queue_runtime]
    default_pool = "batch"

    [tool.queue_runtime.jobs."shop.media.resize_image"]
    pool = "transactional"          # the pool written into @job(pool=...)

Command-line options (``--key JOB=TEMPLATE``) win over the file.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from codemods._types import ApplyOptions, CodemodError
from inventory.config import ConfigError as InventoryConfigError
from inventory.config import MigratorConfig


class ConfigError(CodemodError):
    """The application's pyproject.toml cannot be read."""


def effective_options(root: Path, options: ApplyOptions) -> ApplyOptions:
    """``options`` completed with the keys, pools and default pool the app declares."""
    pyproject = _load(root / "pyproject.toml")
    try:
        migrator = MigratorConfig.model_validate(pyproject.get("tool", {}).get("migrator", {}))
    except (InventoryConfigError, ValueError) as exc:
        raise ConfigError(f"[tool.migrator]: {exc}") from exc
    declared = {name: s.key for name, s in migrator.jobs.items() if s.key}
    runtime = pyproject.get("tool", {}).get("queue_runtime", {})
    pools = {
        name: str(cfg["pool"]) for name, cfg in runtime.get("jobs", {}).items() if cfg.get("pool")
    }
    update: dict[str, Any] = {
        "keys": {**declared, **options.keys},
        "pools": {**pools, **options.pools},
    }
    if "default_pool" in runtime and "default_pool" not in options.model_fields_set:
        update["default_pool"] = str(runtime["default_pool"])
    return options.model_copy(update=update)


def _load(path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{path}: {exc}") from exc
