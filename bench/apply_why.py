"""Why ``migrator apply`` moves or leaves each idempotent-labelled site of a labelled corpus.

Usage::

    python -m bench.apply_why LABELS CORPUS_DIR [--work DIR] [--json OUT] [--only PKG,...]

``apply_corpus.sh`` counts how many idempotent-labelled sites ``migrator apply``
moves; this says why the others stay. For every package the labels name, it
copies ``CORPUS_DIR/<package>-<version>/`` into a scratch git repository (as
``apply_corpus.sh`` does), runs the scan in-process as ``migrator scan`` does
(:func:`migrator.scan.scan_project`, which writes ``.migrator/inventory.json``)
and apply's own planning as ``migrator apply`` does (:func:`codemods.load_inventory`
then :func:`codemods.plan_apply`, default options), and writes nothing: the
planned changes are applied in memory only.

A labelled site counts as moved exactly as in ``apply_corpus.sh``: its snippet's
line is no longer in the file verbatim once the planned changes are applied. Every
other idempotent-labelled site gets apply's outcome at that place (the scan's site
on the labelled line, else the nearest one in that file whose line is the snippet,
within a few lines): its refusal reason, in apply's own words, grouped into a kind
(:data:`KINDS`), or "not found by the scan" when the scan reported no site there.

``--work DIR`` keeps the copies (and their scan caches, so a rerun whose analyzer
did not change scans fast); a copy already in DIR is reused as it is. Without it a
temporary folder is used and removed.
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from codemods import ApplyResult, SiteOutcome, Status, load_inventory, plan_apply
from migrator.scan import ScanRequest, scan_project

MOVED = "moved"
NOT_FOUND = "not found by the scan"
OTHER = "other"
NEAR = 3  # lines: how far from the labelled line a site whose line is the snippet may be

# Apply's refusal reasons, grouped: (kind, pattern searched at the start of the reason).
# Ordered: the first match wins. Each pattern is the opening of a reason apply writes.
KINDS: tuple[tuple[str, str], ...] = (
    ("unknown verdict", r"job idempotency is unknown"),
    ("non_idempotent", r"job is non_idempotent"),
    ("unsafe", r"job is unsafe"),
    ("needs_key", r"job needs an idempotency key"),
    ("result used", r"the caller uses the result"),
    ("exceptions handled", r"the caller handles the job's exceptions"),
    ("nested function", r"nested function"),
    ("bound method", r"bound method"),
    ("classmethod overridden", r"@classmethod `[^`]*` is read from a class that may be"),
    ("class inside a function", r"@(static|class)method of a class defined inside a function"),
    ("constructor", r"constructor: "),
    ("request hook", r"the job acts on the request being served"),
    ("request read", r"the job reads the request being served"),
    ("never returns", r"`[^`]+` never returns"),
    ("definition not found", r"job definition not found"),
    ("receiver rules", r"the receiver (is itself the job|handles)"),
    ("changes an object the caller holds", r"the job changes the \S+ it is given"),
    (
        "nothing to move",
        r"the caller waits for this call to finish \([^)]*\), and the scan found nothing",
    ),
    ("files read after the call", r"the caller waits for this call to finish"),
    ("site inside its job", r"the job is \S+, the function this site is in"),
    ("spawn wrapper", r"line \d+ hands the job to"),
    ("through a local name", r"line \d+ calls the job through"),
    ("shape changed", r"not found at the recorded position"),
    ("never storable", r".*never storable as written"),
    ("transaction", r".*runs inside transaction\.atomic|.*ATOMIC_REQUESTS"),
    ("library callable", r"no project function to move"),
    ("file blocked", r".*(changed since the scan|uncommitted changes|cannot read or parse)"),
    ("Django mail rules", r".*(django\.core\.mail|a connection of its own)"),
    ("periodic rules", r".*(periodic|scheduler|trigger|cron|interval|every\(|at\(\))"),
)
REPEATED = "rewritten, snippet also on another line"


@dataclass(frozen=True)
class Label:
    id: str
    package: str  # <package>-<version>
    path: str
    line: int
    snippet: str
    job: str
    label: str
    acceptable: tuple[str, ...]
    must_detect: bool
    # The lines the labeller says are the site too (a receiver's decorators .. its def),
    # as score_corpus.sh reads them: the scan reports a decorated receiver on its decorator.
    span: frozenset[int] = frozenset()

    @property
    def counted(self) -> bool:
        """An idempotent site apply_corpus.sh counts (moved or not)."""
        return self.label == "idempotent" and self.must_detect


@dataclass
class SiteWhy:
    id: str
    package: str
    path: str
    line: int
    job: str
    kind: str
    status: str = ""  # apply's status at the matched site ("" when none)
    reason: str = ""
    site_line: int | None = None
    site_job: str = ""


@dataclass
class PackageWhy:
    package: str
    sites: list[SiteWhy] = field(default_factory=list)
    protected_changed: list[str] = field(default_factory=list)
    unparsable: list[str] = field(default_factory=list)
    scan_seconds: float = 0.0
    plan_seconds: float = 0.0

    @property
    def moved(self) -> int:
        return sum(s.kind == MOVED for s in self.sites)


def read_labels(path: Path) -> list[Label]:
    labels = []
    for text in path.read_text(encoding="utf-8").splitlines():
        if not text.strip():
            continue
        r = json.loads(text)
        labels.append(
            Label(
                id=r["id"],
                package=f"{r['package']}-{r['version']}",
                path=r["path"],
                line=int(r["line"]),
                snippet=r["snippet"].strip(),
                job=r.get("job", ""),
                label=r["label"],
                acceptable=tuple(r.get("acceptable_labels", [r["label"]])),
                must_detect=bool(r.get("must_detect", True)),
                span=_span(r),
            )
        )
    return labels


def _span(r: dict[str, Any]) -> frozenset[int]:
    lines = {int(r["line"])}
    span = r.get("line_span")
    if isinstance(span, list) and len(span) == 2:
        lines.update(range(int(span[0]), int(span[1]) + 1))
    alt = r.get("alt_lines")
    if isinstance(alt, list):
        lines.update(int(x) for x in alt)
    return frozenset(lines)


def kind_of(outcome: SiteOutcome, resolved: bool = True) -> str:
    """The kind of apply's outcome: its status, or the group of its refusal reason.

    ``resolved``: the scan named a job of its inventory for the site (else apply
    gives the scan's reason why the call was not followed).
    """
    if outcome.status is Status.ALREADY:
        return "already moved"
    if outcome.status is Status.REWRITTEN:
        return "rewritten, line unchanged"
    if not resolved:
        return "job not resolved"
    for kind, pattern in KINDS:
        if re.match(pattern, outcome.reason):
            return kind
    return OTHER


def match(label: Label, outcomes: Sequence[SiteOutcome], text: str) -> SiteOutcome | None:
    """Apply's outcome for the labelled site: on its line (or a line of its labelled span),
    else the nearest on a snippet line."""
    lines = text.splitlines()
    here = [o for o in outcomes if o.site.location.path == label.path]

    def on_snippet(o: SiteOutcome) -> bool:
        n = o.site.location.line
        return 0 < n <= len(lines) and lines[n - 1].strip() == label.snippet

    exact = [o for o in here if o.site.location.line == label.line] or sorted(
        (o for o in here if o.site.location.line in label.span),
        key=lambda o: abs(o.site.location.line - label.line),
    )
    near = sorted(
        (o for o in here if abs(o.site.location.line - label.line) <= NEAR and on_snippet(o)),
        key=lambda o: abs(o.site.location.line - label.line),
    )
    found = exact or near[:1]
    if not found:
        return None
    same_job = [o for o in found if o.site.job == label.job]
    return (same_job or found)[0]


def judge(labels: Iterable[Label], root: Path, result: ApplyResult, jobs: set[str]) -> PackageWhy:
    """Each label of one package against apply's plan (``root`` holds the untouched copy;
    ``jobs``: the qualnames of the inventory's jobs)."""
    after = {c.path: c.after for c in result.changes}
    labels = list(labels)
    out = PackageWhy(package=labels[0].package)
    for path, text in after.items():
        try:
            ast.parse(text)
        except SyntaxError:
            out.unparsable.append(path)
    for label in labels:
        before = (root / label.path).read_text(encoding="utf-8", errors="replace")
        text = after.get(label.path, before)
        still = label.snippet in {x.strip() for x in text.splitlines()}
        if not label.counted:
            if not still and "idempotent" not in label.acceptable:
                out.protected_changed.append(label.id)
            continue
        out.sites.append(_why(label, result.outcomes, before, jobs, moved=not still))
    return out


def _why(
    label: Label, outcomes: Sequence[SiteOutcome], before: str, jobs: set[str], moved: bool
) -> SiteWhy:
    found = match(label, outcomes, before)
    why = SiteWhy(label.id, label.package, label.path, label.line, label.job, kind=NOT_FOUND)
    if found is not None:
        why.status = found.status.value
        why.reason = found.reason
        why.site_line = found.site.location.line
        why.site_job = found.site.job
        why.kind = kind_of(found, resolved=found.site.job in jobs)
    if moved:
        why.kind = MOVED
    elif why.status == Status.REWRITTEN and before.count(label.snippet) > 1:
        # apply_corpus.sh's rule: the snippet is still in the file, on another line.
        why.kind = REPEATED
    return why


def prepare(source: Path, copy: Path) -> None:
    """A scratch git repository holding ``source`` (reused as it is when already there)."""
    if (copy / ".git").is_dir():
        return
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(source, copy, symlinks=True)
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "base"]):
        subprocess.run(
            ["git", "-c", "user.email=w@w", "-c", "user.name=w", *args],
            cwd=copy,
            check=True,
            capture_output=True,
        )


def run_package(labels: list[Label], corpus: Path, work: Path) -> PackageWhy:
    pv = labels[0].package
    source = corpus / pv
    if not source.is_dir():
        raise SystemExit(f"missing {source}: run the fetch script for these labels first")
    copy = work / pv
    prepare(source, copy)
    started = time.perf_counter()
    scan_project(ScanRequest(root=copy))
    scanned = time.perf_counter()
    inventory = load_inventory(copy)
    result = plan_apply(copy, inventory)
    out = judge(labels, copy, result, {j.qualname for j in inventory.jobs})
    out.scan_seconds = round(scanned - started, 1)
    out.plan_seconds = round(time.perf_counter() - scanned, 1)
    return out


def measure(labels: list[Label], corpus: Path, work: Path, console: Console) -> list[PackageWhy]:
    by_package: dict[str, list[Label]] = defaultdict(list)
    for label in labels:
        by_package[label.package].append(label)
    results = []
    for pv in sorted(by_package):
        console.print(f"[dim]{pv}: scan and plan...[/]")
        results.append(run_package(by_package[pv], corpus, work))
    return results


def summary(results: list[PackageWhy]) -> dict[str, object]:
    sites = [s for r in results for s in r.sites]
    kinds = Counter(s.kind for s in sites)
    return {
        "moved": kinds[MOVED],
        "idempotent": len(sites),
        "protected_changed": sum(len(r.protected_changed) for r in results),
        "unparsable": sum(len(r.unparsable) for r in results),
        "kinds": dict(kinds.most_common()),
        "packages": [
            {
                "package": r.package,
                "moved": r.moved,
                "idempotent": len(r.sites),
                "kinds": dict(Counter(s.kind for s in r.sites).most_common()),
                "protected_changed": r.protected_changed,
                "unparsable": r.unparsable,
                "scan_seconds": r.scan_seconds,
                "plan_seconds": r.plan_seconds,
            }
            for r in results
        ],
        "sites": [asdict(s) for s in sites],
    }


def render(console: Console, results: list[PackageWhy]) -> None:
    sites = [s for r in results for s in r.sites]
    by_kind: dict[str, list[SiteWhy]] = defaultdict(list)
    for s in sites:
        by_kind[s.kind].append(s)
    kinds = Table(title="idempotent-labelled sites by outcome")
    for column in ("outcome", "sites", "label ids"):
        kinds.add_column(column, overflow="fold")
    for kind, group in sorted(by_kind.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        kinds.add_row(kind, str(len(group)), " ".join(s.id for s in group))
    console.print(kinds)
    packages = Table(title="per package")
    for column in ("package", "moved", "outcomes", "protected changed", "scan s"):
        packages.add_column(column, overflow="fold")
    for r in results:
        counts = Counter(s.kind for s in r.sites if s.kind != MOVED)
        packages.add_row(
            r.package,
            f"{r.moved}/{len(r.sites)}",
            ", ".join(f"{k} {n}" for k, n in counts.most_common()),
            " ".join(r.protected_changed) or "0",
            f"{r.scan_seconds:g}",
        )
    console.print(packages)
    details = Table(title="sites not moved: apply's reason")
    for column in ("id", "site", "kind", "reason"):
        details.add_column(column, overflow="fold")
    for s in sorted(sites, key=lambda s: (s.kind, s.id)):
        if s.kind != MOVED:
            details.add_row(s.id, f"{s.package}/{s.path}:{s.line}", s.kind, escape(s.reason))
    console.print(details)
    p = sum(len(r.protected_changed) for r in results)
    u = sum(len(r.unparsable) for r in results)
    moved = sum(r.moved for r in results)
    console.print(
        f"moved {moved}/{len(sites)} idempotent sites, {p} protected sites changed, {u} unparsable"
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.apply_why", description=__doc__)
    parser.add_argument("labels", type=Path)
    parser.add_argument("corpus", type=Path, help="where <package>-<version>/ trees are unpacked")
    parser.add_argument("--work", type=Path, help="keep (and reuse) the scratch copies here")
    parser.add_argument("--json", type=Path, help="write the breakdown as JSON here")
    parser.add_argument("--only", default="", help="comma-separated <package>-<version> names")
    args = parser.parse_args(argv)
    labels = read_labels(args.labels)
    only = {p for p in args.only.split(",") if p}
    if only:
        labels = [label for label in labels if label.package in only]
    console = Console(width=max(Console().width, 140))
    with tempfile.TemporaryDirectory(prefix="apply_why-") as scratch:
        work = args.work.resolve() if args.work else Path(scratch)
        work.mkdir(parents=True, exist_ok=True)
        results = measure(labels, args.corpus.resolve(), work, console)
    render(console, results)
    if args.json:
        args.json.write_text(json.dumps(summary(results), indent=2) + "\n", encoding="utf-8")
    bad = any(r.protected_changed or r.unparsable for r in results)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
