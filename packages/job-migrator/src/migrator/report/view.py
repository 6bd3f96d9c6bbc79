"""What every renderer reads: the Inventory grouped the way people review it."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from inventory import CallSite, Evidence, Idempotency, Inventory, Job

# Most dangerous first: the order of report sections and table rows.
VERDICT_ORDER = (
    Idempotency.UNSAFE,
    Idempotency.NON_IDEMPOTENT,
    Idempotency.NEEDS_KEY,
    Idempotency.UNKNOWN,
    Idempotency.IDEMPOTENT,
)
UNRESOLVED = "unknown"


@dataclass(frozen=True)
class JobGroup:
    """One job (or the unresolved sites) with the sites that start it."""

    qualname: str
    verdict: Idempotency
    job: Job | None
    sites: tuple[CallSite, ...]

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

    @cached_property
    def groups(self) -> list[JobGroup]:
        """Jobs with sites, most dangerous first, then by name."""
        by_job: dict[str, list[CallSite]] = {}
        for site in self.inventory.sites:
            by_job.setdefault(site.job, []).append(site)
        groups = [self._group(name, sites) for name, sites in by_job.items()]
        return sorted(groups, key=lambda g: (VERDICT_ORDER.index(g.verdict), g.qualname))

    def _group(self, name: str, sites: list[CallSite]) -> JobGroup:
        job = self.inventory.job(name)
        verdict = (
            job.idempotency if job else max(sites, key=lambda s: s.idempotency.severity).idempotency
        )
        ordered = tuple(sorted(sites, key=lambda s: (s.location.path, s.location.line)))
        return JobGroup(name, verdict, job, ordered)

    def counts(self) -> dict[Idempotency, int]:
        """Jobs per verdict (every verdict present, zeros included)."""
        counts = dict.fromkeys(VERDICT_ORDER, 0)
        for group in self.groups:
            counts[group.verdict] += 1
        return counts

    @property
    def baselined_sites(self) -> int:
        return sum(site.baselined for site in self.inventory.sites)


def site_label(site: CallSite) -> str:
    return f"{site.location.path}:{site.location.line}"


def chain_text(chain: list[str]) -> str:
    return " → ".join(chain)
