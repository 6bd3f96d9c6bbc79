"""The rollout checklist as data: phases of items, each with a state and its evidence.

A :class:`Plan` is built from the Inventory (:func:`migrator.plan.build_plan`),
verified against the live servers (:func:`migrator.plan.check`) and written as
Markdown (:func:`migrator.plan.render_markdown`). Item ids are stable across
runs (they name the job and the step, never the phase), which is what lets a
re-run keep the notes a human wrote under an item.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from pydantic import BaseModel, Field


class ItemState(StrEnum):
    TICKED = "ticked"
    UNTICKED = "unticked"
    NOT_CHECKABLE = "not_checkable"  # depends on something not built yet: never ticked


class Verification(StrEnum):
    """How an item gets its tick."""

    LIVE = "live"  # `migrator plan --check` verifies it (servers, configuration, files)
    CONFIG = "config"  # decided from the scanned project's configuration on every run
    MANUAL = "manual"  # a human ticks it in MIGRATION_PLAN.md; the tick is kept
    SIGNOFF = "signoff"  # a human writes a name and a date on the line; the line is kept
    GATE = "gate"  # unused since the gate exists: its steps are LIVE items checked by --check


class PhaseId(StrEnum):
    PREREQUISITES = "phase-0"
    IDEMPOTENT = "phase-1"
    NEEDS_KEY = "phase-2"
    NON_IDEMPOTENT = "phase-3"
    UNSAFE = "phase-4"
    UNKNOWN = "unknown"


NOT_BUILT = "not checkable yet (the gate is not built)"
SIGNOFF_BLANK = "Sign-off: ____ (name, date)"


class PlanItem(BaseModel):
    id: str = Field(
        description="Stable across runs: 'prereq/schema', '<job>/key', '<job>/apply'..."
    )
    title: str
    state: ItemState = ItemState.UNTICKED
    verification: Verification
    job: str | None = None
    evidence: str = Field(default="", description="What the last check found, or why the state.")
    command: str | None = Field(default=None, description="What to run to do this step.")
    details: list[str] = Field(
        default_factory=list, description="Generated lines under the item: sites, key source."
    )
    verified: bool = Field(
        default=False, description="True when this run's --check decided the state."
    )
    key: str | None = Field(
        default=None,
        description="Apply steps of keyed jobs: the idempotency key template `command` passes.",
    )

    @property
    def ticked(self) -> bool:
        return self.state is ItemState.TICKED


class JobGroup(BaseModel):
    """The items of one job in phases 2 to 4 and the unknown list, under a header line."""

    job: str
    header: str
    fast_track: bool = Field(
        default=False, description="On the notification fast track: only mail, SMS or push repeat."
    )
    details: list[str] = Field(default_factory=list)
    items: list[PlanItem] = Field(default_factory=list)


class Phase(BaseModel):
    id: PhaseId
    title: str
    intro: str
    items: list[PlanItem] = Field(default_factory=list, description="Items not under a job.")
    groups: list[JobGroup] = Field(default_factory=list)

    def all_items(self) -> list[PlanItem]:
        return [*self.items, *(i for g in self.groups for i in g.items)]

    def jobs(self) -> list[str]:
        return list(
            dict.fromkeys([*(i.job for i in self.items if i.job), *(g.job for g in self.groups)])
        )


class SitePreview(BaseModel):
    """What ``migrator apply`` (its defaults) would do at one call site, and why."""

    site: str = Field(description="path:line")
    job: str
    pattern: str
    outcome: str = Field(description="moves, already moved, left to you, stays")
    why: str = ""


class Plan(BaseModel):
    root: str
    inventory_summary: str = ""
    phases: list[Phase]
    checked_at: datetime | None = None
    apply_preview: list[SitePreview] = Field(
        default_factory=list, description="apply's dry run over the inventory, site by site."
    )
    apply_preview_error: str = Field(default="", description="Why there is no preview.")

    def phase(self, phase_id: PhaseId) -> Phase:
        return next(p for p in self.phases if p.id is phase_id)

    def items(self) -> list[PlanItem]:
        return [i for p in self.phases for i in p.all_items()]

    def item(self, item_id: str) -> PlanItem | None:
        return next((i for i in self.items() if i.id == item_id), None)

    def prerequisites(self) -> list[PlanItem]:
        return self.phase(PhaseId.PREREQUISITES).all_items()

    @property
    def prerequisites_pass(self) -> bool:
        """Every checkable prerequisite is ticked (the exit status of --check)."""
        return all(i.ticked for i in self.prerequisites() if i.verification is Verification.LIVE)

    def moving_jobs(self) -> list[str]:
        """Jobs of phases 1 and 2: the ones `migrator apply` will move."""
        return [
            *self.phase(PhaseId.IDEMPOTENT).jobs(),
            *self.phase(PhaseId.NEEDS_KEY).jobs(),
        ]
