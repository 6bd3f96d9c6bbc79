"""Which Python environment the scanned project runs in: where its libraries' source is.

The first that applies: ``--python PATH``, ``[tool.migrator] python``, the
project's own virtualenv (``.venv``, ``venv``, ``env`` holding a
``pyvenv.cfg``), else the interpreter running ``migrator`` itself. Its
site-packages folders are asked of that interpreter in a subprocess that only
prints ``sys.path`` (``-I``: the project's folder is not on it, nothing of the
project is imported), and remembered in ``ROOT/.migrator/cache/env.json`` by
the interpreter's path and mtime, so a warm scan starts no process.
"""

from __future__ import annotations

import hashlib
import json
import os
import site
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ValidationError

from inventory._cachedir import CACHE_DIR, write_atomically
from inventory.errors import InventoryError

_VENVS = (".venv", "venv", "env")
_SITE_DIRS = ("site-packages", "dist-packages")
_LIST_PATHS = "import json, sys; print(json.dumps(sys.path))"
_TIMEOUT = 30


class PythonEnvError(InventoryError):
    """The interpreter named for the scanned project cannot be asked for its paths."""


@dataclass(frozen=True)
class Environment:
    python: str  # the interpreter, as found
    how: str  # why this one: "--python", "[tool.migrator] python", "project virtualenv"...
    site_dirs: tuple[Path, ...]

    def fingerprint(self) -> str:
        """Changes when a distribution is installed or removed (a site dir's mtime moves)."""
        digest = hashlib.sha256(self.python.encode())
        for folder in self.site_dirs:
            digest.update(f"{folder}:{_mtime(folder)};".encode())
        return digest.hexdigest()[:16]


class _Remembered(BaseModel):
    python: str
    mtime_ns: int
    site_dirs: list[str]


def find_environment(
    top: Path, python: str | None, configured: str | None, remember: bool = True
) -> Environment:
    """The environment of the project at ``top`` (see the module docstring for the order);
    ``remember=False`` (``--no-cache``) neither reads nor writes ``env.json``."""
    memo = top / CACHE_DIR / "env.json" if remember else None
    if python:
        return _asked(memo, Path(python), "--python")
    if configured:
        return _asked(memo, _relative(top, configured), "[tool.migrator] python")
    venv = next((top / name for name in _VENVS if (top / name / "pyvenv.cfg").is_file()), None)
    if venv is not None:
        return _asked(memo, _venv_python(venv), f"project virtualenv {venv.name}/")
    return Environment(sys.executable, "the interpreter running migrator", _own_site_dirs())


def _relative(top: Path, configured: str) -> Path:
    path = Path(configured).expanduser()
    return path if path.is_absolute() else top / path


def _venv_python(venv: Path) -> Path:
    unix = venv / "bin" / "python"
    return unix if unix.exists() else venv / "Scripts" / "python.exe"


def _own_site_dirs() -> tuple[Path, ...]:
    found = [*site.getsitepackages(), site.getusersitepackages()]
    return tuple(Path(p) for p in dict.fromkeys(found) if Path(p).is_dir())


def _asked(memo: Path | None, python: Path, how: str) -> Environment:
    """Site dirs of ``python``, from ``memo`` when the interpreter did not change."""
    if not python.exists():
        raise PythonEnvError(f"{how}: no interpreter at {python}")
    mtime = _mtime(python)
    remembered = _read(memo) if memo else None
    if remembered and remembered.python == str(python) and remembered.mtime_ns == mtime:
        dirs = remembered.site_dirs
    else:
        dirs = _ask(python, how)
        record = _Remembered(python=str(python), mtime_ns=mtime, site_dirs=dirs)
        if memo:
            write_atomically(memo, record.model_dump_json().encode())
    return Environment(str(python), how, tuple(Path(d) for d in dirs if Path(d).is_dir()))


def _ask(python: Path, how: str) -> list[str]:
    """Run the interpreter isolated (``-I``), printing its ``sys.path`` and nothing else."""
    try:
        done = subprocess.run(
            [str(python), "-I", "-c", _LIST_PATHS],
            capture_output=True,
            text=True,
            timeout=_TIMEOUT,
            check=True,
            env={"PATH": os.environ.get("PATH", "")},
        )
        paths = json.loads(done.stdout)
    except (OSError, subprocess.SubprocessError, ValueError) as exc:
        raise PythonEnvError(f"{how}: cannot ask {python} for its paths: {exc}") from exc
    return [p for p in paths if isinstance(p, str) and Path(p).name in _SITE_DIRS]


def _read(path: Path) -> _Remembered | None:
    try:
        return _Remembered.model_validate_json(path.read_bytes())
    except (OSError, ValidationError, ValueError):
        return None


def _mtime(path: Path) -> int:
    try:
        return path.stat().st_mtime_ns
    except OSError:
        return 0
