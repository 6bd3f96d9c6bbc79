"""One call for the command: read the inventory, build, merge, optionally check, write."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from inventory.models import Inventory
from migrator.errors import ExitCode, NoInventory, OutputError
from migrator.plan.build import build_plan
from migrator.plan.check import check
from migrator.plan.config import load_check_settings, load_plan_config
from migrator.plan.markdown import merge_previous, render_markdown
from migrator.plan.model import Plan
from migrator.plan.preview import apply_preview

PLAN_FILE = "MIGRATION_PLAN.md"
INVENTORY_FILE = Path(".migrator") / "inventory.json"
# The same plan as data, for scripts: each apply step's `command` and, for keyed jobs, its `key`.
PLAN_JSON = Path(".migrator") / "plan.json"


@dataclass(frozen=True)
class PlanOutcome:
    plan: Plan
    path: Path
    checked: bool

    @property
    def exit_code(self) -> ExitCode:
        """OK written; with --check, FINDINGS when a checkable prerequisite is not in place."""
        return (
            ExitCode.OK if not self.checked or self.plan.prerequisites_pass else ExitCode.FINDINGS
        )


def load_inventory(root: Path) -> Inventory:
    path = root / INVENTORY_FILE
    if not path.is_file():
        raise NoInventory(f"no inventory at {path}: run `migrator scan {root}` first")
    try:
        return Inventory.model_validate_json(path.read_text(encoding="utf-8"))
    except (OSError, ValidationError, ValueError) as exc:
        raise NoInventory(f"cannot read {path} ({exc}); run `migrator scan {root}` again") from exc


def run_plan(
    root: Path,
    output: Path | None = None,
    live: bool = False,
    database_url: str | None = None,
    redis_url: str | None = None,
    metrics_url: str | None = None,
) -> PlanOutcome:
    """Build the plan of ``root`` and write it (in place, notes kept) to ``output``."""
    path = output if output is not None else root / PLAN_FILE
    inventory = load_inventory(root)
    plan = build_plan(inventory, load_plan_config(root))
    sites, error = apply_preview(root, inventory)
    plan = plan.model_copy(update={"apply_preview": sites, "apply_preview_error": error})
    previous = path.read_text(encoding="utf-8") if path.is_file() else ""
    plan = merge_previous(plan, previous)
    if live:
        settings = load_check_settings(root, database_url=database_url, redis_url=redis_url)
        if metrics_url:
            settings = settings.model_copy(update={"metrics_url": metrics_url})
        plan = check(plan, settings)
    try:
        path.write_text(render_markdown(plan, previous), encoding="utf-8")
        (root / PLAN_JSON).write_text(plan.model_dump_json(indent=2) + "\n", encoding="utf-8")
    except OSError as exc:
        raise OutputError(f"cannot write {exc.filename or path}: {exc.strerror or exc}") from exc
    return PlanOutcome(plan=plan, path=path, checked=live)
