"""Scan every package one after the other (or ``jobs`` at a time), reusing saved records."""

from __future__ import annotations

import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from bench.census._environments import EnvRecord, EnvStatus, prepare
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
    environments: Path | None = None,
    install_timeout: float = 900.0,
    env_python: str = sys.executable,
) -> list[tuple[ScanRecord, EnvRecord | None]]:
    """One record per package, in ``packages`` order; ``reuse`` keeps records already in ``work``.
    ``environments``: install each package there first and scan with its interpreter."""

    def one(pkg: Package) -> tuple[ScanRecord, EnvRecord | None]:
        env = (
            prepare(pkg, pkg.requirement, environments, install_timeout, env_python)
            if environments
            else None
        )
        if env is not None and env.status is not EnvStatus.READY:
            _progress(f"env {env.status:8} {env.seconds:7.1f}s  {pkg.name}")
        old = load_record(work, pkg.name) if reuse else None
        if old is not None:
            return old, env
        python = env.python if env is not None else ""
        record = scan_package(pkg, work, analyzer, timeout, scan_jobs, python)
        _progress(f"{record.status:8} {record.seconds:7.1f}s  {pkg.name}")
        return record, env

    if jobs <= 1:
        return [one(p) for p in packages]
    with ThreadPoolExecutor(max_workers=jobs) as pool:  # each thread waits on a subprocess
        return list(pool.map(one, packages))


def _progress(line: str, write: Callable[[str], object] = sys.stderr.write) -> None:
    write(line + "\n")
    sys.stderr.flush()
