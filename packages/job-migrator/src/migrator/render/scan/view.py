"""What every renderer reads: the Inventory grouped the way people review it."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

from inventory import CallSite, Evidence, Idempotency, Inventory, Job

if TYPE_CHECKING:  # migrator.plan imports the plan's checks: not paid by every scan
    from migrator.plan.model import SitePreview

# Most dangerous first: the order of report sections and table rows.
VERDICT_ORDER = (
    Idempotency.UNSAFE,
    Idempotency.NON_IDEMPOTENT,
    Idempotency.NEEDS_KEY,
    Idempotency.UNKNOWN,
    Idempotency.IDEMPOTENT,
)
# The order of the table's rows: what can be acted on first (a verdict that says what to
# do, from the most dangerous, then the idempotent jobs that can move now), then the jobs
# to review by hand, then the calls the scan could not resolve.
ACTION_ORDER = (
    Idempotency.UNSAFE,
    Idempotency.NON_IDEMPOTENT,
    Idempotency.NEEDS_KEY,
    Idempotency.IDEMPOTENT,
    Idempotency.UNKNOWN,
)
UNRESOLVED = "unknown"


@dataclass(frozen=True)
class JobGroup:
    """One job (or the unresolved sites) with the sites that start it."""

    qualname: str
    verdict: Idempotency
    job: Job | None
    sites: tuple[CallSite, ...]
    # for sites whose job is unresolved: the call they all make, as written (one finding
    # per call, however many sites make it: a helper called in 1,000 views is one row)
    unresolved_call: str = ""

    @property
    def title(self) -> str:
        return f"{UNRESOLVED}: {self.unresolved_call}" if self.unresolved_call else self.qualname

    @property
    def top_evidence(self) -> Evidence | None:
        """The line that decided the verdict: the classifier puts its rule last."""
        return self.job.evidence[-1] if self.job and self.job.evidence else None

    @property
    def all_baselined(self) -> bool:
        return all(site.baselined for site in self.sites)


@dataclass(frozen=True)
class ReportView:
    inventory: Inventory
    baseline_given: bool = False  # a --baseline was applied: unlisted findings are new
    # `migrator apply`'s own dry run over this inventory (its defaults), one entry per site;
    # empty with `preview_error` saying why when it could not run, or when it was not asked
    preview: tuple[SitePreview, ...] = ()
    preview_error: str = ""

    @cached_property
    def _preview_by_site(self) -> dict[tuple[str, str], SitePreview]:
        return {(item.site, item.job): item for item in self.preview}

    def previews(self, group: JobGroup) -> list[SitePreview]:
        """apply's outcome at each of the group's sites that the dry run covered."""
        found = (self._preview_by_site.get((site_label(s), s.job)) for s in group.sites)
        return [item for item in found if item is not None]

    @cached_property
    def groups(self) -> list[JobGroup]:
        """Jobs with sites, actionable first (``ACTION_ORDER``), then by name; the sites
        of unresolved jobs folded by the call they make, largest folds first, last."""
        by_job: dict[tuple[str, str], list[CallSite]] = {}
        for site in self.inventory.sites:
            by_job.setdefault((site.job, fold_key(site)), []).append(site)
        groups = [self._group(name, call, sites) for (name, call), sites in by_job.items()]
        return sorted(groups, key=_row_order)

    def _group(self, name: str, call: str, sites: list[CallSite]) -> JobGroup:
        job = self.inventory.job(name)
        verdict = (
            job.idempotency if job else max(sites, key=lambda s: s.idempotency.severity).idempotency
        )
        ordered = tuple(sorted(sites, key=lambda s: (s.location.path, s.location.line)))
        return JobGroup(name, verdict, job, ordered, call)

    @property
    def unresolved_groups(self) -> list[JobGroup]:
        return [group for group in self.groups if group.unresolved_call]

    def counts(self) -> dict[Idempotency, int]:
        """Jobs per verdict (every verdict present, zeros included)."""
        counts = dict.fromkeys(VERDICT_ORDER, 0)
        for group in self.groups:
            counts[group.verdict] += 1
        return counts

    @property
    def baselined_sites(self) -> int:
        return sum(site.baselined for site in self.inventory.sites)


def fold_key(site: CallSite) -> str:
    """The call an unresolved site makes, as written without its arguments (``db.query``
    for ``db.query(sql)``): the sites that share it are one finding. "" for resolved sites."""
    if site.job != UNRESOLVED:
        return ""
    return site.target_source.partition("(")[0].strip() or site.unresolved_reason


def _row_order(group: JobGroup) -> tuple[bool, int, int, str]:
    folded = bool(group.unresolved_call)
    size = -len(group.sites) if folded else 0
    return folded, ACTION_ORDER.index(group.verdict), size, group.title


def site_label(site: CallSite) -> str:
    return f"{site.location.path}:{site.location.line}"


def chain_text(chain: list[str]) -> str:
    return " → ".join(chain)
