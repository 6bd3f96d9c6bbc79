"""What the target application already declares, read for the codemods.

Nothing new to configure: keys and pools live where the scanner and the
runtime already read them, so the three never disagree::

    [tool.migrator.jobs."shop.billing.send_invoice"]
    key = "invoice-{order_id}"      # where a needs_key job's idempotency key comes from

    [tool.migrator]
    target = "django-tasks"         # Django's @task / .enqueue() instead of queue_runtime's @job

    [tool.queue_runtime]
    default_pool = "batch"

    [tool.queue_runtime.jobs."shop.media.resize_image"]
    pool = "transactional"          # the pool written into @job(pool=...)

Command-line options (``--key JOB=TEMPLATE``) win over the file. Every key
is checked against its job before anything is rewritten (:func:`check_keys`):
its fields are parameters of the job, a key function exists in the project and
takes the job's parameters (read, never imported: ``inventory.keys``).
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from codemods._types import ApplyOptions, CodemodError
from inventory.config import MigratorConfig, ScanConfigError, key_fields, key_function
from inventory.keys import key_problem, shared_key_problems
from inventory.models import Inventory


class ApplyConfigError(CodemodError):
    """The application's pyproject.toml cannot be read."""


def effective_options(root: Path, options: ApplyOptions) -> ApplyOptions:
    """``options`` completed with the keys, pools and default pool the app declares."""
    pyproject = _load(root / "pyproject.toml")
    try:
        migrator = MigratorConfig.model_validate(pyproject.get("tool", {}).get("migrator", {}))
    except (ScanConfigError, ValueError) as exc:
        raise ApplyConfigError(f"[tool.migrator]: {exc}") from exc
    declared = {name: s.key for name, s in migrator.jobs.items() if s.key}
    runtime = pyproject.get("tool", {}).get("queue_runtime", {})
    pools = _pools(runtime)
    update: dict[str, Any] = {
        "keys": {**declared, **options.keys},
        "pools": {**pools, **options.pools},
    }
    if "default_pool" in runtime and "default_pool" not in options.model_fields_set:
        update["default_pool"] = str(runtime["default_pool"])
    if "target" not in options.model_fields_set:
        update["target"] = migrator.target
    return options.model_copy(update=update)


def _pools(runtime: object) -> dict[str, str]:
    """``[tool.queue_runtime.jobs."J"] pool = "P"`` per job; a shape the runtime would not
    read either is an ApplyConfigError naming the table, never a traceback."""
    if not isinstance(runtime, dict):
        raise ApplyConfigError("[tool.queue_runtime]: expected a table")
    jobs = runtime.get("jobs", {})
    if not isinstance(jobs, dict) or not all(isinstance(cfg, dict) for cfg in jobs.values()):
        raise ApplyConfigError(
            '[tool.queue_runtime.jobs]: expected a table per job, [tool.queue_runtime.jobs."J"]'
        )
    return {name: str(cfg["pool"]) for name, cfg in jobs.items() if cfg.get("pool")}


class KeyDoesNotFit(ApplyConfigError):
    """An idempotency key cannot be built from its job's arguments."""


def check_keys(root: Path, options: ApplyOptions, inventory: Inventory) -> None:
    """Raise KeyDoesNotFit (what to fix, one line per key) when a key of a job to move does not fit."""
    wanted = set(options.jobs)
    problems = [
        problem
        for job in inventory.jobs
        if job.qualname in options.keys
        and (not wanted or job.qualname in wanted)
        and _checked_here(options.keys[job.qualname])
        if (problem := key_problem(job.qualname, options.keys[job.qualname], job.parameters, root))
    ]
    moving = [job.qualname for job in inventory.jobs if not wanted or job.qualname in wanted]
    problems += shared_key_problems(options.keys, moving)
    if problems:
        raise KeyDoesNotFit("\n".join(problems))


def _checked_here(key: str) -> bool:
    """Key functions and fieldless keys; a template's fields are checked per site, where a
    field without an argument skips the site with its reason (``key_expression``)."""
    if key_function(key) is not None:
        return True
    try:
        return not key_fields(key)
    except ValueError:
        return True


def _load(path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ApplyConfigError(f"{path}: {exc}") from exc
