"""Benchmark ``migrator scan`` on Django 5.2 against ``ruff check --select ALL``.

Usage: ``.venv/bin/python bench/scan_bench.py [--repeat N]``

Downloads a pinned Django 5.2 wheel into ``bench/_work`` (once), then times,
each in a fresh process so interpreter start and imports count, as a user
would see them:

* cold: ``migrator scan django/ --format json -o /dev/null`` with the cache removed;
* warm: the same command again, everything cached;
* edit: one file changed (``db/models/base.py``), then restored;
* ruff: ``ruff check --select ALL --no-cache django/`` on the same tree.

The tool's bytecode is written first, as pip does when it installs a package
(``PYTHONDONTWRITEBYTECODE`` is dropped from the timed runs' environment).

Prints files, lines, the best of ``--repeat`` runs for each (wall clock, and
CPU seconds of the process and its workers, which other load on a shared
machine does not inflate), and our/ruff ratios.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
WORK = HERE / "_work"
DJANGO = "django==5.2.*"
BIN = Path(sys.executable).parent
COLD_BUDGET, WARM_BUDGET = 6.0, 1.0


def django_tree() -> Path:
    """The unpacked ``django/`` package of the pinned wheel."""
    wheels = sorted(WORK.glob("Django-5.2*.whl")) + sorted(WORK.glob("django-5.2*.whl"))
    if not wheels:
        pip = [sys.executable, "-m", "pip", "download", DJANGO, "--no-deps", "-d", str(WORK)]
        subprocess.run(pip, check=True)
        wheels = sorted(WORK.glob("[Dd]jango-5.2*.whl"))
    target = WORK / wheels[-1].stem
    if not (target / "django").is_dir():
        with zipfile.ZipFile(wheels[-1]) as wheel:
            wheel.extractall(target, [n for n in wheel.namelist() if n.startswith("django/")])
    return target / "django"


CPU: dict[str, list[float]] = {}  # CPU seconds of each run (the process and its workers)


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


# As installed by pip, the tool's modules are compiled once (pip writes the .pyc files at
# install time): a shell that sets PYTHONDONTWRITEBYTECODE would make every timed run
# compile them again, a cost no user pays. The timed processes run without it, after one
# untimed run has written the bytecode.
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def timed(command: list[str], name: str) -> tuple[float, subprocess.CompletedProcess[str]]:
    """Wall time, and (in CPU) the CPU time: the figure other load cannot inflate."""
    cpu, started = _children_cpu(), time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, env=ENV)
    CPU.setdefault(name, []).append(_children_cpu() - cpu)
    return time.perf_counter() - started, done


def scan_once(tree: Path, cold: bool, name: str = "") -> float:
    if cold:
        shutil.rmtree(tree / ".migrator", ignore_errors=True)
    command = [str(BIN / "migrator"), "scan", str(tree), "--format", "json", "-o", "/dev/null"]
    seconds, done = timed(command, name)
    if done.returncode != 0:
        raise SystemExit(f"migrator scan failed ({done.returncode}):\n{done.stderr}")
    return seconds


def ruff_once(tree: Path) -> float:
    command = [str(BIN / "ruff"), "check", "--select", "ALL", "--no-cache", "--quiet", str(tree)]
    seconds, done = timed(command, "ruff")
    if done.returncode not in (0, 1):  # 1: ruff found violations, as it will on Django
        raise SystemExit(f"ruff failed ({done.returncode}):\n{done.stderr}")
    return seconds


def edit_once(tree: Path) -> float:
    """One file changed since the last scan: summarise it, classify everything."""
    target = tree / "db" / "models" / "base.py"
    original = target.read_bytes()
    try:
        # A new comment each time: content seen before would be a cache hit.
        target.write_bytes(original + f"\n# edited by scan_bench {time.time_ns()}\n".encode())
        return scan_once(tree, cold=False, name="edit")
    finally:
        target.write_bytes(original)


def describe(name: str, runs: list[float]) -> str:
    best, median, cpu = min(runs), statistics.median(runs), min(CPU.get(name, [0.0]))
    return (
        f"{name:<6} best {best:6.2f}s  median {median:6.2f}s  cpu {cpu:6.2f}s  ({len(runs)} runs)"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    tree = django_tree()
    load_before = os.getloadavg()[0]
    scan_once(tree, cold=False, name="bytecode")  # untimed: writes the tool's .pyc files
    cold = [scan_once(tree, cold=True, name="cold") for _ in range(args.repeat)]
    warm = [scan_once(tree, cold=False, name="warm") for _ in range(args.repeat)]
    edit = [edit_once(tree) for _ in range(args.repeat)]
    scan_once(tree, cold=False)  # leave the cache matching the restored tree
    ruff = [ruff_once(tree) for _ in range(args.repeat)]
    inventory = json.loads((tree / ".migrator" / "inventory.json").read_text(encoding="utf-8"))
    stats = inventory["stats"]
    print(f"tree   {tree}")
    print(
        f"files  {stats['files_scanned']} scanned, {stats['files_skipped']} skipped; {stats['lines']} lines"
    )
    print(f"found  {len(inventory['sites'])} sites, {len(inventory['jobs'])} jobs")
    for name, runs in (("cold", cold), ("warm", warm), ("edit", edit), ("ruff", ruff)):
        print(describe(name, runs))
    print(
        f"ratio  cold/ruff {min(cold) / min(ruff):.2f}x  warm/ruff {min(warm) / min(ruff):.2f}x (wall)"
    )
    cpu_ruff = min(CPU["ruff"])
    print(
        f"ratio  cold/ruff {min(CPU['cold']) / cpu_ruff:.2f}x  warm/ruff {min(CPU['warm']) / cpu_ruff:.2f}x (cpu)"
    )
    print(f"load   1-minute load average {load_before:.1f} before, {os.getloadavg()[0]:.1f} after")
    within = min(cold) <= COLD_BUDGET and min(warm) <= WARM_BUDGET
    print(f"budget cold <= {COLD_BUDGET}s, warm <= {WARM_BUDGET}s: {'met' if within else 'MISSED'}")
    return 0 if within else 1


if __name__ == "__main__":
    raise SystemExit(main())
