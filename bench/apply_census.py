"""What ``migrator apply`` would do with every site of the census, without labels.

Usage::

    python -m bench.census CENSUS --work WORK ...      # the scans (inventories in WORK)
    python -m bench.apply_census CENSUS WORK [--json OUT] [--only NAME ...] [--examples N]

For each census package whose inventory ``WORK/<package>.inventory.json`` the census
wrote, apply's own planning (:func:`codemods.plan_apply`, default options except
``allow_dirty``: the census folders are no git checkouts) runs in memory; nothing is
written. Every site's outcome is grouped as ``bench.apply_why`` groups a labelled one
(``kind_of``), and the verdict of its job is counted beside it, so the table says, over
code nobody here labelled, how many sites apply moves and what keeps the others: the
verdict (the analyzer), or one of apply's own rules. The rules' groups with the most
sites of ``idempotent`` jobs are where a mechanism is missing (or a refusal is right:
``--examples`` prints some of each to read).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Sequence
from pathlib import Path

from rich.console import Console
from rich.table import Table

from bench.apply_why import kind_of
from codemods import ApplyOptions, Status, plan_apply
from inventory import Inventory

MOVED = "moved"


def plan_package(root: Path, inventory_file: Path) -> tuple[list[dict[str, str]], float]:
    """One row per site of the package: its job's verdict and apply's outcome kind."""
    inventory = Inventory.model_validate_json(inventory_file.read_text(encoding="utf-8"))
    started = time.perf_counter()
    result = plan_apply(root, inventory, ApplyOptions(allow_dirty=True, rescan=False))
    seconds = time.perf_counter() - started
    verdicts = {j.qualname: j.idempotency.value for j in inventory.jobs}
    rows = []
    for outcome in result.outcomes:
        site = outcome.site
        known = site.job in verdicts
        kind = MOVED if outcome.status is Status.REWRITTEN else kind_of(outcome, resolved=known)
        rows.append(
            {
                "site": f"{site.location.path}:{site.location.line}",
                "job": site.job,
                "verdict": verdicts.get(site.job, "not resolved"),
                "kind": kind,
                "reason": outcome.reason,
            }
        )
    return rows, seconds


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.apply_census", description=__doc__)
    parser.add_argument("census", type=Path, help="the census folder (<name>-<version>/)")
    parser.add_argument("work", type=Path, help="bench.census --work folder (its inventories)")
    parser.add_argument("--json", type=Path, help="write every site's row here")
    parser.add_argument("--only", nargs="+", default=[], help="packages whose folder starts so")
    parser.add_argument("--examples", type=int, default=0, help="print N sites of each kind")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    console = Console(stderr=True)
    rows: list[dict[str, str]] = []
    failed: list[str] = []
    for folder in sorted(p for p in args.census.iterdir() if p.is_dir()):
        if args.only and not folder.name.startswith(tuple(args.only)):
            continue
        inventory = args.work / f"{folder.name}.inventory.json"
        if not inventory.is_file():
            continue
        try:
            found, seconds = plan_package(folder, inventory)
        except Exception as exc:  # one package's failure is reported, the rest go on
            failed.append(f"{folder.name}: {type(exc).__name__}: {exc}")
            continue
        for row in found:
            row["package"] = folder.name
        rows += found
        moved = sum(r["kind"] == MOVED for r in found)
        console.print(f"[dim]{folder.name}: {len(found)} sites, {moved} moved, {seconds:.1f}s[/]")
    render(Console(), rows, failed)
    if args.examples:
        examples(Console(), rows, args.examples, args.seed)
    if args.json:
        args.json.write_text(json.dumps({"sites": rows, "failed": failed}, indent=1))
    return 1 if failed else 0


def render(console: Console, rows: list[dict[str, str]], failed: list[str]) -> None:
    by_kind: dict[str, Counter[str]] = defaultdict(Counter)
    for row in rows:
        by_kind[row["kind"]][row["verdict"]] += 1
    verdicts = ["idempotent", "needs_key", "non_idempotent", "unsafe", "unknown", "not resolved"]
    table = Table(title=f"apply over the census: {len(rows)} sites")
    table.add_column("outcome")
    for v in verdicts:
        table.add_column(v, justify="right")
    table.add_column("all", justify="right")
    for kind, counts in sorted(by_kind.items(), key=lambda kv: -sum(kv[1].values())):
        table.add_row(kind, *(str(counts[v]) for v in verdicts), str(sum(counts.values())))
    console.print(table)
    moved = sum(r["kind"] == MOVED for r in rows)
    idem = [r for r in rows if r["verdict"] == "idempotent"]
    idem_moved = sum(r["kind"] == MOVED for r in idem)
    console.print(
        f"moved {moved} of {len(rows)} sites; of the {len(idem)} sites of idempotent jobs, "
        f"{idem_moved} moved"
    )
    for line in failed:
        console.print(f"[red]failed[/] {line}")


def examples(console: Console, rows: list[dict[str, str]], n: int, seed: int) -> None:
    rng = random.Random(seed)
    by_kind: dict[str, list[dict[str, str]]] = defaultdict(list)
    for row in rows:
        if row["verdict"] == "idempotent" and row["kind"] != MOVED:
            by_kind[row["kind"]].append(row)
    for kind, found in sorted(by_kind.items(), key=lambda kv: -len(kv[1])):
        console.rule(f"{kind} ({len(found)} sites of idempotent jobs)")
        for row in rng.sample(found, min(n, len(found))):
            console.print(f"{row['package']}/{row['site']}  {row['job']}", markup=False)
            console.print(f"    {row['reason'][:400]}", markup=False)


if __name__ == "__main__":
    sys.exit(main())
