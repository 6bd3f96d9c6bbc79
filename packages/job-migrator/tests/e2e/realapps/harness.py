"""Real apps written by others, prepared from their pinned sdists, migrated and run for real.

The set-up scripts download and check the sdist and build the app's venv:
ihatemoney's lives in ``../shared/realapps`` (beside the clone, read-only in CI),
the Django app's in this repository (``realapps/``). Downloads are cached in
``MIGRATOR_REALAPPS_DIR`` when it is set (a developer's machine); without it
each run sets up from scratch in a temporary folder, as CI does.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[5]
SHARED = REPO.parent / "shared" / "realapps"
OWN = REPO / "realapps"
RUNTIME_DIST = REPO / "packages" / "queue-runtime"
CACHE_ENV = "MIGRATOR_REALAPPS_DIR"
_COUNTS = re.compile(r"^(\w+: )?(\d+) passed, (\d+) failed, (\d+) skipped$", re.MULTILINE)


@dataclass(frozen=True)
class SuiteCounts:
    passed: int
    failed: int
    skipped: int


@dataclass(frozen=True)
class AppTree:
    """One prepared app: its source tree (what is scanned and migrated) and its venv."""

    name: str
    home: Path  # DEST: what the set-up and run scripts take
    scripts: Path  # the folder holding setup.sh / run_tests.sh for this app

    @property
    def src(self) -> Path:
        return self.home / self.name / "src"

    @property
    def python(self) -> Path:
        return self.home / self.name / ".venv" / "bin" / "python"


def workspace(fallback: Path) -> Path:
    """The download cache of a developer (``MIGRATOR_REALAPPS_DIR``), else ``fallback``."""
    cached = os.environ.get(CACHE_ENV)
    return Path(cached) if cached else fallback


def prepare(name: str, scripts: Path, home: Path) -> AppTree:
    """Run the app's set-up script (pristine source tree each time: ``REALAPP_FRESH=1``)."""
    env = {**os.environ, "REALAPP_FRESH": "1", "PYTHON": _python311()}
    _run(["bash", str(scripts / "setup.sh"), str(home), name], env=env, timeout=1200)
    (home / name).mkdir(parents=True, exist_ok=True)
    return AppTree(name, home, scripts)


def install_runtime(tree: AppTree) -> None:
    """queue-runtime (this checkout) into the app's venv: the migrated app imports it."""
    command = [str(tree.python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    _run([*command, "-e", str(RUNTIME_DIST)], timeout=600)


def uninstall_runtime(tree: AppTree) -> None:
    """No queue-runtime in the app's venv (a cached venv may hold one from an earlier run):
    the unmigrated app must not see it, nor its pytest plugin."""
    command = [str(tree.python), "-m", "pip", "uninstall", "--quiet", "--yes", "queue-runtime"]
    _run(command, timeout=300, check=False)


def run_suite(tree: AppTree, env: Mapping[str, str] | None = None) -> SuiteCounts:
    """The app's own test suite through its run script; the counts of its last line."""
    merged = {**os.environ, **(env or {})}
    out = _run(
        ["bash", str(tree.scripts / "run_tests.sh"), str(tree.home), tree.name],
        env=merged,
        timeout=1500,
        check=False,
    )
    found = _COUNTS.findall(out)
    if not found:
        raise AssertionError(f"no summary line from the app's suite:\n{out[-3000:]}")
    _, passed, failed, skipped = found[-1]
    return SuiteCounts(int(passed), int(failed), int(skipped))


def migrator(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``migrator ARGS`` of this checkout, run in ``cwd``."""
    return subprocess.run(
        [str(Path(sys.executable).parent / "migrator"), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )


class Outbox:
    """A JSON-lines file every mail sent by any process of the app is appended to."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def mails(self) -> list[dict[str, object]]:
        if not self.path.exists():
            return []
        return [json.loads(line) for line in self.path.read_text().splitlines() if line]

    def by_sender_process(self) -> Iterator[tuple[str, dict[str, object]]]:
        for mail in self.mails():
            yield str(mail.get("process")), mail


def _python311() -> str:
    # The apps' venvs are built by a 3.11 interpreter: the one running the tests, whose
    # venv is not a base a venv can be made from, so its base interpreter.
    return os.environ.get("PYTHON") or getattr(sys, "_base_executable", sys.executable)


def _run(
    command: list[str],
    env: Mapping[str, str] | None = None,
    timeout: float = 600,
    check: bool = True,
) -> str:
    done = subprocess.run(
        command, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )
    out = done.stdout + done.stderr
    if check and done.returncode != 0:
        raise AssertionError(f"{' '.join(command)} exited {done.returncode}:\n{out[-4000:]}")
    return out
