"""Scan every package one after the other (or ``jobs`` at a time), reusing saved records."""

from __future__ import annotations

import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from bench.census._packages import Package
from bench.census._scan import Analyzer, ScanRecord, load_record, scan_package


def scan_all(
    packages: list[Package],
    work: Path,
    analyzer: Analyzer,
    *,
    timeout: float,
    jobs: int = 1,
    scan_jobs: int = 1,
    reuse: bool = False,
) -> list[ScanRecord]:
    """One record per package, in ``packages`` order; ``reuse`` keeps records already in ``work``."""

    def one(pkg: Package) -> ScanRecord:
        old = load_record(work, pkg.name) if reuse else None
        if old is not None:
            return old
        record = scan_package(pkg, work, analyzer, timeout, scan_jobs)
        _progress(f"{record.status:8} {record.seconds:7.1f}s  {pkg.name}")
        return record

    if jobs <= 1:
        return [one(p) for p in packages]
    with ThreadPoolExecutor(max_workers=jobs) as pool:  # each thread waits on a subprocess
        return list(pool.map(one, packages))


def _progress(line: str, write: Callable[[str], object] = sys.stderr.write) -> None:
    write(line + "\n")
    sys.stderr.flush()
