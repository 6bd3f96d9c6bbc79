"""Run ``migrator scan`` on one package in a subprocess, with a timeout, on a scratch copy.

The scan writes ``.migrator/`` (its cache and last inventory) into the tree it reads,
even with ``--no-cache``; scanning a throwaway copy keeps the census tree untouched and
every scan cold.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from enum import StrEnum
from pathlib import Path

from bench.census._packages import Package
from bench.census._process import run_killable

_TAIL = 4000  # characters of stderr kept in a record


class ScanStatus(StrEnum):
    OK = "ok"
    TIMEOUT = "timeout"
    FAILED = "failed"  # non-zero exit without a traceback (bad usage, parse errors, ...)
    CRASHED = "crashed"  # a Python traceback on stderr: a bug in the analyzer


@dataclass
class ScanRecord:
    name: str
    kind: str
    status: ScanStatus
    seconds: float  # wall time of the scan subprocess alone (not the copy)
    exit_code: int | None
    command: list[str]
    analyzer: str  # the commit scanned with, or "working tree"
    stderr_tail: str = ""
    python: str = ""  # ``--python``: the package's own environment (--environments), or ""


@dataclass(frozen=True)
class Analyzer:
    """How to start ``migrator``: the installed one, or a commit's sources on PYTHONPATH."""

    prefix: tuple[str, ...]
    revision: str  # a commit hash, or "working tree"
    pythonpath: str = ""

    def env(self) -> dict[str, str]:
        env = dict(os.environ)
        if self.pythonpath:
            env["PYTHONPATH"] = self.pythonpath
        return env


_SOURCES = ("packages/job-migrator/src", "packages/queue-runtime/src")


def installed_analyzer() -> Analyzer:
    beside = Path(sys.executable).parent / "migrator"
    exe = str(beside) if beside.exists() else (shutil.which("migrator") or "migrator")
    return Analyzer((exe,), "working tree")


def pinned_analyzer(repo: Path, rev: str, into: Path) -> Analyzer:
    """Extract ``rev``'s analyzer sources into ``into``: the census then measures one commit,
    not a working tree that other people edit while it runs."""
    commit = _git(repo, "rev-parse", "--verify", f"{rev}^{{commit}}").strip()
    archive = subprocess.run(
        ["git", "-C", str(repo), "archive", commit, *_SOURCES], check=True, capture_output=True
    ).stdout
    into.mkdir(parents=True, exist_ok=True)
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    paths = os.pathsep.join(str(into / s) for s in _SOURCES)
    main = "import sys; from migrator.cli import main; sys.exit(main())"
    return Analyzer((sys.executable, "-c", main), commit, paths)


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(repo), *args], check=True, capture_output=True, text=True
    )
    return done.stdout


def record_path(work: Path, name: str) -> Path:
    return work / f"{name}.scan.json"


def inventory_path(work: Path, name: str) -> Path:
    return work / f"{name}.inventory.json"


def load_record(work: Path, name: str) -> ScanRecord | None:
    path = record_path(work, name)
    if not path.is_file():
        return None
    data = json.loads(path.read_text())
    data["status"] = ScanStatus(data["status"])
    return ScanRecord(**data)


def scan_package(
    pkg: Package, work: Path, analyzer: Analyzer, timeout: float, scan_jobs: int, python: str = ""
) -> ScanRecord:
    """Scan a scratch copy of ``pkg``; write its inventory and record into ``work``.
    ``python``: the package's installed environment (``--python``), else this interpreter's."""
    work.mkdir(parents=True, exist_ok=True)
    out = inventory_path(work, pkg.name)
    out.unlink(missing_ok=True)
    with tempfile.TemporaryDirectory(prefix="census-") as scratch:
        copy = Path(scratch) / pkg.name
        shutil.copytree(pkg.path, copy, symlinks=True)
        command = [
            *analyzer.prefix,
            "scan",
            str(copy),
            "--format",
            "json",
            "-o",
            str(out.resolve()),
        ]
        command += ["--no-cache", "--ignore-errors", "--jobs", str(scan_jobs)]
        command += ["--python", python] if python else []
        record = _run(pkg, command, analyzer, timeout)
        record.python = python
    record_path(work, pkg.name).write_text(json.dumps(asdict(record), indent=1))
    return record


def _run(pkg: Package, command: list[str], analyzer: Analyzer, timeout: float) -> ScanRecord:
    started = time.monotonic()
    code, err = run_killable(command, timeout, analyzer.env())  # the scan and its workers
    seconds = time.monotonic() - started
    status = ScanStatus.TIMEOUT if code is None else _status(code, err)
    return ScanRecord(
        pkg.name, pkg.kind, status, seconds, code, command, analyzer.revision, err[-_TAIL:]
    )


def _status(code: int, stderr: str) -> ScanStatus:
    if code == 0:
        return ScanStatus.OK
    crashed = "Traceback (most recent call last)" in stderr
    return ScanStatus.CRASHED if crashed else ScanStatus.FAILED
