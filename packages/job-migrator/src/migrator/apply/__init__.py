"""``migrator apply`` as a library call: what to rewrite, how to deliver it, what came of it.

:mod:`codemods` does the rewriting (``plan_apply`` / ``write`` / ``create_branches``);
this adds what the command decides around it: the sign-offs recorded in the
project's MIGRATION_PLAN.md, the delivery (a diff, the files written, review
branches), and the jobs named with ``--job`` that the inventory does not know or
that did not move. :func:`run_apply` takes an :class:`ApplyRequest` and returns an
:class:`ApplyOutcome`; :mod:`migrator.render.apply` shows it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

from codemods import (
    ApplyOptions,
    ApplyResult,
    BranchReport,
    Status,
    create_branches,
    load_inventory,
    plan_apply,
    write,
)
from inventory.models import Inventory
from migrator.errors import ExitCode, PlanFileError
from migrator.plan import PLAN_FILE, recorded_signoffs


class Output(StrEnum):
    """How the rewrite is delivered."""

    DIFF = "diff"  # show, write nothing
    WRITE = "write"
    BRANCH = "branch"  # commits on review branches; the checkout is untouched


@dataclass(frozen=True)
class ApplyRequest:
    root: Path
    jobs: tuple[str, ...] = ()  # only these jobs (--job); all the safe ones when empty
    keys: dict[str, str] = field(default_factory=dict)  # needs_key job -> key template
    output: Output = Output.DIFF
    branch: str | None = None  # with Output.BRANCH: the branches' name
    max_sites: int | None = None
    allow_dirty: bool = False
    hold_unknown: bool = False  # also move every undecided job, held (--hold-unknown)


@dataclass(frozen=True)
class ApplyOutcome:
    mode: Output
    result: ApplyResult
    branches: list[BranchReport]
    unknown: list[str]  # jobs named with --job that the inventory does not list
    not_moved: dict[str, str]  # jobs named with --job none of whose sites moved: the first reason

    @property
    def exit_code(self) -> ExitCode:
        """OK changes shown or applied; FINDINGS nothing applicable, or a file refused."""
        return ExitCode.OK if self.result.changes and not self.result.refused else ExitCode.FINDINGS


def run_apply(request: ApplyRequest) -> ApplyOutcome:
    """Rewrite (or show the rewrite of) the call sites ``request`` selects."""
    options = ApplyOptions(
        jobs=request.jobs,
        keys=request.keys,
        allow_dirty=request.allow_dirty,
        max_sites=request.max_sites,
        signoffs=_signoffs(request.root),
        hold_unknown=request.hold_unknown,
    )
    inventory = load_inventory(request.root)
    result, branches = _run(request, inventory, options)
    unknown = sorted(set(request.jobs) - {j.qualname for j in inventory.jobs})
    return ApplyOutcome(request.output, result, branches, unknown, _not_moved(result, request.jobs))


def _signoffs(root: Path) -> dict[str, str]:
    """The phase-4 sign-offs a human recorded in the project's MIGRATION_PLAN.md."""
    plan = root / PLAN_FILE
    if not plan.is_file():
        return {}
    try:
        return recorded_signoffs(plan.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise PlanFileError(f"cannot read {plan}: {exc}") from exc


def _not_moved(result: ApplyResult, jobs: tuple[str, ...]) -> dict[str, str]:
    """Jobs named with --job none of whose sites moved, with the first reason given."""
    found: dict[str, str] = {}
    moved = {o.site.job for o in result.outcomes if o.status in (Status.REWRITTEN, Status.ALREADY)}
    for outcome in result.outcomes:
        job = outcome.site.job
        if job in jobs and job not in moved and outcome.reason:
            found.setdefault(job, outcome.reason)
    return found


def _run(
    request: ApplyRequest, inventory: Inventory, options: ApplyOptions
) -> tuple[ApplyResult, list[BranchReport]]:
    if request.output is Output.BRANCH and request.branch:
        return create_branches(request.root, inventory, request.branch, options)
    result = plan_apply(request.root, inventory, options)
    if request.output is Output.WRITE:
        write(result)
    return result, []


__all__ = ["ApplyOutcome", "ApplyRequest", "Output", "run_apply"]
