"""``python -m bench.census DEST``: scan every census package and report what the scan misses."""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import Counter
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path

from rich.console import Console

from bench.census._catalogue import SINK_KINDS, load_sinks
from bench.census._census import Json, load_inventory, overall, package_entry
from bench.census._environments import EnvRecord
from bench.census._figures import GapRanking
from bench.census._packages import discover
from bench.census._report import compare_table, print_sample, render, sample_uncovered
from bench.census._runner import scan_all
from bench.census._scan import Analyzer, ScanRecord, installed_analyzer, pinned_analyzer

_REPO = Path(__file__).resolve().parents[2]
_WORK = Path(__file__).resolve().parent / "scans"


def _arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.census", description=__doc__)
    parser.add_argument("dest", type=Path, help="the census folder (<name>-<version>/ per package)")
    parser.add_argument("--only", nargs="+", metavar="NAME", help="packages whose folder starts so")
    parser.add_argument("--jobs", type=int, default=1, help="packages scanned at once (default 1)")
    parser.add_argument(
        "--scan-jobs", type=int, default=1, help="`migrator scan --jobs` (default 1)"
    )
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds per package scan")
    parser.add_argument("--json", type=Path, metavar="OUT", help="write the whole result here")
    parser.add_argument("--compare", type=Path, metavar="OLD.json", help="an earlier --json result")
    parser.add_argument(
        "--sample", type=int, default=0, metavar="N", help="print N uncovered sinks"
    )
    parser.add_argument("--seed", type=int, default=0, help="the sample's random seed")
    parser.add_argument("--work", type=Path, default=_WORK, help="inventories and scan records")
    parser.add_argument("--reuse", action="store_true", help="keep scans already in --work")
    parser.add_argument("--analyzer-rev", metavar="REV", help="scan with this commit's analyzer")
    parser.add_argument(
        "--environments",
        type=Path,
        metavar="DIR",
        help="install each package (pip, NAME==VERSION) into DIR/<name>/ and scan with --python",
    )
    parser.add_argument(
        "--install-timeout", type=float, default=900.0, help="seconds per package install"
    )
    parser.add_argument(
        "--env-python",
        default=sys.executable,
        metavar="PATH",
        help="the Python each environment is made of (default: this one)",
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = _arguments(argv)
    console = Console(width=160)
    with tempfile.TemporaryDirectory(prefix="census-analyzer-") as scratch:
        analyzer = _analyzer(args.analyzer_rev, Path(scratch))
        result = census(args, analyzer)
    render(console, result)
    if args.compare:
        console.print(compare_table(json.loads(args.compare.read_text()), result))
    if args.sample:
        print_sample(console, sample_uncovered(result, args.sample, args.seed))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(result, indent=1) + "\n")
    return 0


def _analyzer(rev: str | None, scratch: Path) -> Analyzer:
    return pinned_analyzer(_REPO, rev, scratch) if rev else installed_analyzer()


def census(args: argparse.Namespace, analyzer: Analyzer) -> Json:
    packages = discover(args.dest, args.only)
    records = scan_all(
        packages,
        args.work,
        analyzer,
        timeout=args.timeout,
        jobs=args.jobs,
        scan_jobs=args.scan_jobs,
        reuse=args.reuse,
        environments=args.environments,
        install_timeout=args.install_timeout,
        env_python=args.env_python,
    )
    catalogue = load_sinks(_catalogue_text(analyzer))
    entries, ranking, floods = [], GapRanking(), []
    for pkg, (record, env) in zip(packages, records, strict=True):
        entry, _, figs = package_entry(pkg, record, load_inventory(args.work, record), catalogue)
        entry["environment"] = asdict(env) if env is not None else None
        entries.append(entry)
        if figs is not None:
            ranking.add(pkg.name, figs.gaps, figs.gaps_hidden, figs.sole)
            floods += [{"job": j, "package": pkg.name, "sites": n} for j, n in figs.floods]
    return {
        "meta": _meta(args, analyzer, [r for r, _ in records], [e for _, e in records]),
        "overall": overall(entries, ranking, floods),
        "packages": entries,
    }


def _catalogue_text(analyzer: Analyzer) -> str | None:
    """The pinned analyzer's own catalogue, so sinks and scan agree on one version."""
    if not analyzer.pythonpath:
        return None
    return (Path(analyzer.pythonpath.split(":")[0]) / "inventory" / "catalogue.toml").read_text()


def _meta(
    args: argparse.Namespace,
    analyzer: Analyzer,
    records: list[ScanRecord],
    environments: list[EnvRecord | None],
) -> Json:
    revisions = sorted({r.analyzer for r in records})
    installed = Counter(e.status.value for e in environments if e is not None)
    return {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "dest": str(args.dest),
        "analyzer": revisions or [analyzer.revision],
        "timeout": args.timeout,
        "jobs": args.jobs,
        "scan_jobs": args.scan_jobs,
        "sink_kinds": sorted(k.value for k in SINK_KINDS),
        "environments": dict(sorted(installed.items())) if args.environments else None,
    }


if __name__ == "__main__":
    raise SystemExit(main())
