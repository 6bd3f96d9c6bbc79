"""Render the census: rich tables, a comparison with an earlier run, a sample to read."""

from __future__ import annotations

import random
from typing import Any

from rich.console import Console
from rich.table import Table

from bench.census._census import overall
from bench.census._figures import GapRanking

Json = dict[str, Any]


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def package_table(entries: list[Json]) -> Table:
    table = Table(title="Census per package", show_lines=False)
    for col in ("package", "kind", "scan", "s", "kLOC", "sinks", "attrib.", "coverage"):
        table.add_column(col, justify="left" if col in ("package", "kind", "scan") else "right")
    for col in ("sites/kLOC", "unknown sites", "unknown jobs"):
        table.add_column(col, justify="right")
    for e in entries:
        s, f = e["sinks"], e["figures"] or {}
        table.add_row(
            e["name"],
            e["kind"],
            e["scan"]["status"],
            f"{e['scan']['seconds']:.1f}",
            f"{f.get('lines', 0) / 1000:.1f}" if f else "-",
            str(s["total"]),
            str(s["attributed"]),
            _pct(s["coverage"]),
            f"{f['sites_per_kloc']:.2f}" if f else "-",
            _pct(f.get("unknown_site_share")),
            _pct(f.get("unknown_job_share")),
        )
    return table


def overall_table(total: Json) -> Table:
    table = Table(title="Census overall")
    table.add_column("figure")
    table.add_column("value", justify="right")
    rows = [
        ("packages (scans by status)", f"{total['packages']} {total['scans']}"),
        ("scan wall seconds, sum", f"{total['scan_seconds']}"),
        ("sink calls found syntactically", f"{total['sinks']}"),
        ("attributed to a reported job", f"{total['attributed']}"),
        ("sink coverage", _pct(total["coverage"])),
        ("sink coverage, scanned packages only", _pct(total["coverage_scanned_only"])),
        ("sinks in scope (no correct miss)", f"{total.get('in_scope', '-')}"),
        ("sink coverage, in-scope sinks", _pct(total.get("coverage_in_scope"))),
        *((f"  uncovered: {k}", str(v)) for k, v in total["buckets"].items()),
        ("lines scanned", f"{total['lines']:,}"),
        ("sites", f"{total['sites']}"),
        ("sites per 1,000 lines", f"{total['sites_per_kloc']}"),
        ("sites with verdict unknown", _pct(total["unknown_site_share"])),
        ("jobs", f"{total['jobs']}"),
        ("jobs with verdict unknown", _pct(total["unknown_job_share"])),
    ]
    for name, value in rows:
        table.add_row(name, value)
    return table


def ranked_table(title: str, rows: list[Json], key: str, limit: int = 15) -> Table:
    table = Table(title=title)
    columns = [c for c in rows[0] if c != key] if rows else []
    table.add_column(key)
    for col in columns:
        table.add_column(col, justify="right")
    for row in rows[:limit]:
        table.add_row(str(row[key]), *(str(row[c]) for c in columns))
    return table


def render(console: Console, result: Json) -> None:
    total = result["overall"]
    console.print(package_table(result["packages"]))
    console.print(overall_table(total))
    console.print(
        ranked_table(
            "Unresolved calls blocking the most unknown verdicts", total["gap_targets"], "target"
        )
    )
    console.print(ranked_table("... by method name", total["gap_methods"], "target"))
    console.print(ranked_table("... by dispatch shape", total["gap_shapes"], "target"))
    console.print(
        ranked_table(
            "Sole blockers: the one call an unknown verdict rests on (widest first)",
            total.get("sole_blockers", []),
            "target",
        )
    )
    console.print(
        ranked_table("Largest floods (sites of one job target)", total["floods"], "job", 10)
    )


_COMPARED = (
    *("coverage", "coverage_in_scope", "in_scope", "coverage_scanned_only"),
    *("sites_per_kloc", "unknown_site_share"),
    *("unknown_job_share", "scan_seconds", "sinks", "attributed", "sites", "jobs"),
)


def compare_table(old: Json, new: Json) -> Table:
    """``old``'s figures over the packages ``new`` scanned (``--only``, a subset installed with
    ``--environments``): totals over different package sets compare nothing."""
    before = compared_overall(old, {e["name"] for e in new["packages"]})
    same = before["packages"] == len(old["packages"])
    title = "Census: before -> after" + ("" if same else f" ({before['packages']} packages)")
    table = Table(title=title)
    for col in ("figure", "before", "after"):
        table.add_column(col, justify="left" if col == "figure" else "right")
    for key in _COMPARED:
        table.add_row(key, str(before.get(key)), str(new["overall"].get(key)))
    before = {e["name"]: e["sinks"]["coverage"] for e in old["packages"]}
    for e in new["packages"]:
        was, now = before.get(e["name"]), e["sinks"]["coverage"]
        if was != now:
            table.add_row(f"  coverage {e['name']}", _pct(was), _pct(now))
    return table


def compared_overall(result: Json, names: set[str]) -> Json:
    """``result``'s overall figures, recomputed over its packages named in ``names``."""
    kept = [e for e in result["packages"] if e["name"] in names]
    if len(kept) == len(result["packages"]):
        return dict(result["overall"])
    return overall(kept, GapRanking(), [])


def sample_uncovered(result: Json, count: int, seed: int) -> list[Json]:
    """``count`` uncovered sinks drawn at random (reproducibly) over all packages."""
    pool = [
        {"package": e["name"], **u} for e in result["packages"] for u in e["sinks"]["uncovered"]
    ]
    return random.Random(seed).sample(pool, min(count, len(pool)))


def print_sample(console: Console, rows: list[Json]) -> None:
    for row in rows:
        where = f"{row['package']}/{row['path']}:{row['line']}"
        console.print(f"{where}  [{row['bucket']}; {row['how']}] {row['function']}", markup=False)
        console.print(f"    {row['source']}", markup=False)
