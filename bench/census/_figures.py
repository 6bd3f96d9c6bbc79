"""Noise and gap figures read from one inventory, and their ranking across packages."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from enum import StrEnum

from inventory import Evidence, Idempotency, Inventory

# The verdict's evidence line listing a job's gaps (``inventory/_classify/_verdict.py``):
# the first 8 names, sorted, then "and N more".
_GAPS = re.compile(r"^unresolved calls \([^)]*\): (?P<names>.*?)(?: and (?P<more>\d+) more)?$")


class Shape(StrEnum):
    """How an unresolved call is written: which mechanism would explain it."""

    UNKNOWN_RECEIVER = "method of a receiver of unknown type (?.m)"
    CALL_RESULT = "method on a call's result (f().m)"
    SELF_ATTRIBUTE = "method of an attribute of self/cls (self.x.m)"
    NAME_ATTRIBUTE = "name.m: a local/parameter of unknown type, or a module function"
    DOTTED = "a.b.m: a library path not followed, or a class method"
    BARE = "bare name (a callable value: parameter, local)"


@dataclass
class PackageFigures:
    lines: int
    sites: int
    unknown_sites: int
    jobs: int
    unknown_jobs: int
    floods: list[tuple[str, int]]  # the most frequent job targets among sites
    gaps: Counter[str] = field(default_factory=Counter)  # gap name -> unknown jobs it blocks
    gaps_hidden: int = 0  # gap names the evidence cut ("and N more")
    unresolved_sites: Counter[str] = field(default_factory=Counter)  # site target -> count
    # The one call an unknown verdict rests on (``Job.unexplained``): the catalogue entry that
    # explains it, else the call -> unknown jobs it alone keeps undecided.
    sole: Counter[str] = field(default_factory=Counter)
    internal_errors: list[str] = field(default_factory=list)

    @property
    def sites_per_kloc(self) -> float:
        return 1000 * self.sites / self.lines if self.lines else 0.0


def figures(inventory: Inventory, top: int = 5) -> PackageFigures:
    unknown_jobs = [j for j in inventory.jobs if j.idempotency == Idempotency.UNKNOWN]
    result = PackageFigures(
        lines=inventory.stats.lines,
        sites=len(inventory.sites),
        unknown_sites=sum(s.idempotency == Idempotency.UNKNOWN for s in inventory.sites),
        jobs=len(inventory.jobs),
        unknown_jobs=len(unknown_jobs),
        floods=Counter(s.job for s in inventory.sites).most_common(top),
    )
    for job in unknown_jobs:
        for names, more in _gap_lists(job.evidence):
            result.gaps.update(set(names))
            result.gaps_hidden += more
        blockers = {u.entry or u.call for u in job.unexplained}
        if len(blockers) == 1:
            result.sole.update(blockers)
    unresolved = [s for s in inventory.sites if s.job == "unknown"]
    result.unresolved_sites.update(s.target_source or "?" for s in unresolved)
    result.internal_errors = [
        f"{e.path}: {e.reason}" for e in inventory.errors if e.kind == "internal"
    ]
    return result


def _gap_lists(evidence: list[Evidence]) -> list[tuple[list[str], int]]:
    found = []
    for item in evidence:
        match = _GAPS.match(item.message)
        if match:
            names = [n.strip() for n in match["names"].split(", ") if n.strip()]
            found.append((names, int(match["more"] or 0)))
    return found


def shape(name: str) -> Shape:
    if name.startswith("?."):
        return Shape.UNKNOWN_RECEIVER
    if "()." in name or name.endswith(")"):
        return Shape.CALL_RESULT
    if name.split(".", 1)[0] in ("self", "cls"):
        return Shape.SELF_ATTRIBUTE
    dots = name.count(".")
    if dots == 0:
        return Shape.BARE
    return Shape.NAME_ATTRIBUTE if dots == 1 else Shape.DOTTED


def method_of(name: str) -> str:
    """The last called name: ``self.mail.send`` -> ``.send``."""
    return "." + name.rsplit(".", 1)[-1] if "." in name else name


@dataclass
class GapRanking:
    """Unresolved calls ranked by the unknown verdicts they block, over all packages."""

    by_target: Counter[str] = field(default_factory=Counter)
    by_method: Counter[str] = field(default_factory=Counter)
    by_shape: Counter[str] = field(default_factory=Counter)
    packages: dict[str, set[str]] = field(default_factory=dict)  # target -> packages
    hidden: int = 0
    by_sole: Counter[str] = field(default_factory=Counter)  # see PackageFigures.sole
    sole_packages: dict[str, set[str]] = field(default_factory=dict)

    def add(
        self, package: str, gaps: Counter[str], hidden: int, sole: Counter[str] | None = None
    ) -> None:
        self.hidden += hidden
        for name, jobs in (sole or Counter()).items():
            self.by_sole[name] += jobs
            self.sole_packages.setdefault(name, set()).add(package)
        for name, jobs in gaps.items():
            self.by_target[name] += jobs
            self.by_method[method_of(name)] += jobs
            self.by_shape[shape(name).value] += jobs
            self.packages.setdefault(name, set()).add(package)
