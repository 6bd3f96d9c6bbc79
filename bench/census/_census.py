"""One package's census entry, and the totals over all of them, as plain JSON data."""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict
from pathlib import Path
from typing import Any

from bench.census._catalogue import SinkCatalogue
from bench.census._coverage import Bucket, Coverage, attribute, package_files, read_package
from bench.census._figures import GapRanking, PackageFigures, figures
from bench.census._packages import Package
from bench.census._scan import ScanRecord, ScanStatus, inventory_path
from inventory import Inventory

Json = dict[str, Any]
_SOURCE = 160  # characters of a sink's source line kept in the JSON


def load_inventory(work: Path, record: ScanRecord) -> Inventory | None:
    path = inventory_path(work, record.name)
    if record.status != ScanStatus.OK or not path.is_file():
        return None
    return Inventory.model_validate_json(path.read_text())


def package_entry(
    pkg: Package, record: ScanRecord, inventory: Inventory | None, catalogue: SinkCatalogue
) -> tuple[Json, Coverage, PackageFigures | None]:
    sinks, scope = read_package(pkg.path, package_files(pkg.path, inventory), catalogue)
    coverage = attribute(sinks, inventory, scope)
    figs = figures(inventory) if inventory is not None else None
    entry: Json = {
        "name": pkg.name,
        "kind": pkg.kind,
        "scan": _scan_json(record),
        "sinks": _coverage_json(coverage),
        "figures": _figures_json(figs),
    }
    return entry, coverage, figs


def _scan_json(record: ScanRecord) -> Json:
    data = asdict(record)
    data["seconds"] = round(record.seconds, 2)
    if record.status == ScanStatus.OK:
        data["stderr_tail"] = ""  # progress chatter; kept only when the scan failed
    return data


def _coverage_json(coverage: Coverage) -> Json:
    kinds: dict[str, list[int]] = {}
    for sink in coverage.sinks:
        kinds.setdefault(sink.kind.value, [0, 0])[0] += 1
    for sink in coverage.attributed:
        kinds[sink.kind.value][1] += 1
    return {
        "total": len(coverage.sinks),
        "attributed": len(coverage.attributed),
        "coverage": _round(coverage.share),
        "in_scope": coverage.in_scope,
        "coverage_in_scope": _round(coverage.in_scope_share),
        "buckets": dict(coverage.buckets()),
        "by_kind": {k: {"total": t, "attributed": a} for k, (t, a) in sorted(kinds.items())},
        "uncovered": [_sink_json(s, b) for s, b in coverage.uncovered],
    }


def _sink_json(sink: Any, bucket: Bucket) -> Json:
    return {
        "path": sink.path,
        "line": sink.line,
        "kind": sink.kind.value,
        "api": sink.api,
        "how": sink.how.value,
        "function": sink.function,
        "bucket": bucket.value,
        "source": sink.source[:_SOURCE],
    }


def _figures_json(figs: PackageFigures | None) -> Json | None:
    if figs is None:
        return None
    return {
        "lines": figs.lines,
        "sites": figs.sites,
        "sites_per_kloc": round(figs.sites_per_kloc, 3),
        "unknown_sites": figs.unknown_sites,
        "unknown_site_share": _round(figs.unknown_sites / figs.sites if figs.sites else None),
        "jobs": figs.jobs,
        "unknown_jobs": figs.unknown_jobs,
        "unknown_job_share": _round(figs.unknown_jobs / figs.jobs if figs.jobs else None),
        "floods": [{"job": j, "sites": n} for j, n in figs.floods],
        "gaps": dict(figs.gaps.most_common(20)),
        "gaps_hidden": figs.gaps_hidden,
        "sole_blockers": dict(figs.sole.most_common(10)),
        "unresolved_sites": dict(figs.unresolved_sites.most_common(10)),
        "internal_errors": figs.internal_errors,
    }


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def overall(entries: list[Json], ranking: GapRanking, floods: list[Json], top: int = 30) -> Json:
    sinks = [e["sinks"] for e in entries]
    figs = [e["figures"] for e in entries if e["figures"] is not None]
    total, attributed = sum(s["total"] for s in sinks), sum(s["attributed"] for s in sinks)
    in_scope = sum(s.get("in_scope", s["total"]) for s in sinks)
    buckets: Counter[str] = Counter()
    for s in sinks:
        buckets.update(s["buckets"])
    scanned = [e["sinks"] for e in entries if e["figures"] is not None]
    lines, sites = sum(f["lines"] for f in figs), sum(f["sites"] for f in figs)
    jobs, unknown_jobs = sum(f["jobs"] for f in figs), sum(f["unknown_jobs"] for f in figs)
    unknown_sites = sum(f["unknown_sites"] for f in figs)
    return {
        "packages": len(entries),
        "scans": dict(Counter(str(e["scan"]["status"]) for e in entries)),
        "scan_seconds": round(sum(e["scan"]["seconds"] for e in entries), 1),
        "sinks": total,
        "attributed": attributed,
        "coverage": _round(attributed / total if total else None),
        "coverage_scanned_only": _scanned_share(scanned),
        "in_scope": in_scope,
        "coverage_in_scope": _round(attributed / in_scope if in_scope else None),
        "buckets": dict(buckets.most_common()),
        "by_kind": _kinds(sinks),
        "lines": lines,
        "sites": sites,
        "sites_per_kloc": round(1000 * sites / lines, 3) if lines else None,
        "unknown_site_share": _round(unknown_sites / sites if sites else None),
        "jobs": jobs,
        "unknown_job_share": _round(unknown_jobs / jobs if jobs else None),
        "floods": sorted(floods, key=lambda f: -f["sites"])[:top],
        "gap_targets": _ranked(ranking.by_target, top, ranking.packages),
        "gap_methods": _ranked(ranking.by_method, top),
        "gap_shapes": _ranked(ranking.by_shape, top),
        "gap_names_cut": ranking.hidden,
        "sole_blockers": _sole(ranking, top),
    }


def _sole(ranking: GapRanking, top: int) -> list[Json]:
    """The calls that alone keep a job's verdict unknown, the most widespread first: one
    catalogue entry or mechanism for such a call decides those jobs."""
    rows = [
        {"target": name, "unknown_jobs_decided": jobs, "packages": len(ranking.sole_packages[name])}
        for name, jobs in ranking.by_sole.items()
    ]
    rows.sort(key=lambda r: (-r["packages"], -r["unknown_jobs_decided"], r["target"]))
    return rows[:top]


def _scanned_share(sinks: list[Json]) -> float | None:
    total = sum(s["total"] for s in sinks)
    return _round(sum(s["attributed"] for s in sinks) / total) if total else None


def _kinds(sinks: list[Json]) -> Json:
    kinds: dict[str, list[int]] = {}
    for s in sinks:
        for kind, n in s["by_kind"].items():
            pair = kinds.setdefault(kind, [0, 0])
            pair[0] += n["total"]
            pair[1] += n["attributed"]
    return {k: {"total": t, "attributed": a} for k, (t, a) in sorted(kinds.items())}


def _ranked(
    counter: Counter[str], top: int, packages: dict[str, set[str]] | None = None
) -> list[Json]:
    rows = []
    for name, jobs in counter.most_common(top):
        row: Json = {"target": name, "unknown_jobs_blocked": jobs}
        if packages is not None:
            row["packages"] = len(packages.get(name, ()))
        rows.append(row)
    return rows
