"""Benchmark ``migrator scan`` on Django 5.2 against ``ruff check --select ALL``.

Usage: ``.venv/bin/python bench/scan_bench.py [--repeat N]``

Downloads a pinned Django 5.2 wheel into ``bench/_work`` (once), then times,
each in a fresh process so interpreter start and imports count, as a user
would see them:

* cold: ``migrator scan django/ --format json -o /dev/null`` with the cache removed;
* warm: the same command again, everything cached;
* ruff: ``ruff check --select ALL --no-cache django/`` on the same tree.

Prints files, lines, the best of ``--repeat`` runs for each, and our/ruff ratios.
"""

from __future__ import annotations

import argparse
import json
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


def timed(command: list[str]) -> tuple[float, subprocess.CompletedProcess[str]]:
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True)
    return time.perf_counter() - started, done


def scan_once(tree: Path, cold: bool) -> float:
    if cold:
        shutil.rmtree(tree / ".migrator", ignore_errors=True)
    seconds, done = timed(
        [str(BIN / "migrator"), "scan", str(tree), "--format", "json", "-o", "/dev/null"]
    )
    if done.returncode != 0:
        raise SystemExit(f"migrator scan failed ({done.returncode}):\n{done.stderr}")
    return seconds


def ruff_once(tree: Path) -> float:
    seconds, done = timed(
        [str(BIN / "ruff"), "check", "--select", "ALL", "--no-cache", "--quiet", str(tree)]
    )
    if done.returncode not in (0, 1):  # 1: ruff found violations, as it will on Django
        raise SystemExit(f"ruff failed ({done.returncode}):\n{done.stderr}")
    return seconds


def describe(name: str, runs: list[float]) -> str:
    return f"{name:<6} best {min(runs):6.2f}s  median {statistics.median(runs):6.2f}s  ({len(runs)} runs)"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    tree = django_tree()
    cold = [scan_once(tree, cold=True) for _ in range(args.repeat)]
    warm = [scan_once(tree, cold=False) for _ in range(args.repeat)]
    ruff = [ruff_once(tree) for _ in range(args.repeat)]
    stats = json.loads((tree / ".migrator" / "inventory.json").read_text(encoding="utf-8"))["stats"]
    print(f"tree   {tree}")
    print(
        f"files  {stats['files_scanned']} scanned, {stats['files_skipped']} skipped; {stats['lines']} lines"
    )
    for name, runs in (("cold", cold), ("warm", warm), ("ruff", ruff)):
        print(describe(name, runs))
    print(f"ratio  cold/ruff {min(cold) / min(ruff):.2f}x  warm/ruff {min(warm) / min(ruff):.2f}x")
    within = min(cold) <= COLD_BUDGET and min(warm) <= WARM_BUDGET
    print(f"budget cold <= {COLD_BUDGET}s, warm <= {WARM_BUDGET}s: {'met' if within else 'MISSED'}")
    return 0 if within else 1


if __name__ == "__main__":
    raise SystemExit(main())
