"""What ``migrator apply`` would do at each site, before it runs: its own dry run.

The plan shows apply's decisions instead of guessing them: :func:`codemods.api.plan_apply`
never writes, and it reads the same inventory (no rescan: a file changed since the scan
says so).
"""

from __future__ import annotations

from pathlib import Path

from codemods import CodemodError, SiteOutcome, Status, plan_apply
from inventory.models import Inventory
from migrator.plan.model import SitePreview
from migrator.vocabulary import ALREADY_MOVED, LEFT_TO_YOU, MOVES, STAYS

_OUTCOME = {
    Status.REWRITTEN: MOVES,
    Status.ALREADY: ALREADY_MOVED,
    Status.MANUAL: LEFT_TO_YOU,
    Status.SKIPPED: STAYS,
}


def apply_preview(root: Path, inventory: Inventory) -> tuple[list[SitePreview], str]:
    """apply's outcome per site, or no sites and the one line saying why there is none."""
    try:
        result = plan_apply(root, inventory, scanner=None)
    except (CodemodError, OSError) as exc:
        return [], f"no preview: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}"
    return [_site(o) for o in result.outcomes], ""


def _site(outcome: SiteOutcome) -> SitePreview:
    where = outcome.site.location
    why = outcome.reason
    if outcome.status is Status.REWRITTEN and outcome.crossings:
        why = "arguments: " + outcome.arguments_note()
    return SitePreview(
        site=f"{where.path}:{where.line}",
        job=outcome.site.job,
        pattern=outcome.site.pattern.value,
        outcome=_OUTCOME[outcome.status],
        why=why,
    )
