"""``migrator plan``: the phased rollout checklist, built from the Inventory.

    plan = build_plan(inventory, load_plan_config(root))
    plan = check(plan, load_check_settings(root))          # optional: live servers
    text = render_markdown(plan, previous_text)            # notes and sign-offs kept

See docs/plan.md for the phases, the file format and what --check verifies.
"""

from migrator.plan.build import build_plan, key_source, risk
from migrator.plan.check import check
from migrator.plan.config import CheckSettings, PlanConfig, load_check_settings, load_plan_config
from migrator.plan.markdown import (
    merge_previous,
    parse_markdown,
    recorded_signoffs,
    render_markdown,
)
from migrator.plan.model import (
    NOT_BUILT,
    SIGNOFF_BLANK,
    ItemState,
    JobGroup,
    Phase,
    PhaseId,
    Plan,
    PlanItem,
    Verification,
)
from migrator.plan.service import PLAN_FILE, PLAN_JSON, PlanOutcome, load_inventory, run_plan

__all__ = [
    "NOT_BUILT",
    "PLAN_FILE",
    "PLAN_JSON",
    "SIGNOFF_BLANK",
    "CheckSettings",
    "ItemState",
    "JobGroup",
    "Phase",
    "PhaseId",
    "Plan",
    "PlanConfig",
    "PlanItem",
    "PlanOutcome",
    "Verification",
    "build_plan",
    "check",
    "key_source",
    "load_check_settings",
    "load_inventory",
    "load_plan_config",
    "merge_previous",
    "parse_markdown",
    "recorded_signoffs",
    "render_markdown",
    "risk",
    "run_plan",
]
