"""Install each census package with its dependencies, so its scan reads what a user's would.

A user scans an app with its environment installed (``migrator scan --python .venv/bin/python``):
what a library returns is then read from the library's own source and annotations, and a call
into it is followed. Without one, the census scans with this venv's interpreter, which holds
Django, Flask, SQLAlchemy and FastAPI but none of a package's other dependencies, so it
measures a floor. ``--environments DIR`` gives each package a venv of its own in
``DIR/<name>-<version>/`` (``pip install NAME==VERSION`` from the registry, the pinned release
of ``packages.txt``), kept between runs, and scans with ``--python`` pointing at it. A package
whose install fails (a compiler it lacks, a Python it does not support) is recorded with the
reason and scanned without one, so the figures always say over how many packages they hold.
"""

from __future__ import annotations

import json
import os
import sys
import time
from dataclasses import asdict, dataclass
from enum import StrEnum
from pathlib import Path

from bench.census._packages import Package
from bench.census._process import run_killable

_TAIL = 2000
_STAMP = "census-environment.json"


class EnvStatus(StrEnum):
    READY = "ready"  # installed: scanned with --python
    FAILED = "failed"  # pip failed: scanned with the census' own interpreter
    TIMEOUT = "timeout"
    UNPINNED = "unpinned"  # packages.txt does not list it: nothing to install


@dataclass
class EnvRecord:
    name: str
    status: EnvStatus
    python: str  # the interpreter to scan with ("" when not ready)
    seconds: float
    requirement: str
    error_tail: str = ""


def prepare(
    pkg: Package, requirement: str | None, root: Path, timeout: float, base: str = sys.executable
) -> EnvRecord:
    """The package's environment, installed once into ``root/<name>`` and reused after;
    ``base``: the Python the venv is made of (some releases need 3.12)."""
    where = root / pkg.name
    stamp = where / _STAMP
    if stamp.is_file():
        data = json.loads(stamp.read_text())
        data["status"] = EnvStatus(data["status"])
        return EnvRecord(**data)
    if requirement is None:
        return EnvRecord(pkg.name, EnvStatus.UNPINNED, "", 0.0, "")
    started = time.monotonic()
    python = where / "bin" / "python"
    status, tail = _install(where, python, requirement, timeout, base)
    record = EnvRecord(
        pkg.name,
        status,
        str(python) if status is EnvStatus.READY else "",
        round(time.monotonic() - started, 1),
        requirement,
        tail,
    )
    if status is not EnvStatus.TIMEOUT:  # a timeout may pass on a quieter machine: retried
        where.mkdir(parents=True, exist_ok=True)
        stamp.write_text(json.dumps(asdict(record), indent=1))
    return record


def _install(
    where: Path, python: Path, requirement: str, timeout: float, base: str
) -> tuple[EnvStatus, str]:
    steps = [
        [base, "-m", "venv", "--clear", str(where)],
        [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
         "--no-input", requirement],
    ]  # fmt: skip
    deadline = time.monotonic() + timeout
    for command in steps:
        status, tail = _run(command, deadline - time.monotonic())
        if status is not EnvStatus.READY:
            return status, tail
    return EnvStatus.READY, ""


def _run(command: list[str], timeout: float) -> tuple[EnvStatus, str]:
    env = {**os.environ, "PIP_NO_INPUT": "1"}
    code, err = run_killable(command, max(timeout, 1.0), env)  # pip and any build it started
    if code is None:
        return EnvStatus.TIMEOUT, f"install took longer than {timeout:.0f}s"
    if code != 0:
        lines = [line for line in err.splitlines() if not line.startswith("WARNING: Location")]
        return EnvStatus.FAILED, "\n".join(lines)[-_TAIL:]
    return EnvStatus.READY, ""
