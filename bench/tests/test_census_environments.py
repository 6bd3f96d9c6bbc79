"""``--environments``: each census package installed into a venv of its own, once, and scanned
with that interpreter; an install that fails is recorded with pip's reason and not retried.

The package installed here is a wheel written by the test (no registry, no build step)."""

from __future__ import annotations

import base64
import hashlib
import subprocess
import zipfile
from pathlib import Path

from bench.census._environments import EnvStatus, prepare
from bench.census._packages import Package
from bench.census._scan import Analyzer, scan_package


def _wheel(where: Path) -> Path:
    """``tinyshop-1.0``: one module, no dependencies."""
    files = {
        "tinyshop/__init__.py": "def total(items):\n    return sum(items)\n",
        "tinyshop-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: tinyshop\nVersion: 1.0\n",
        "tinyshop-1.0.dist-info/WHEEL": (
            "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
        ),
    }
    record = []
    for name, text in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=")
        record.append(f"{name},sha256={digest.decode()},{len(text.encode())}")
    record.append("tinyshop-1.0.dist-info/RECORD,,")
    path = where / "tinyshop-1.0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as wheel:
        for name, text in files.items():
            wheel.writestr(name, text)
        wheel.writestr("tinyshop-1.0.dist-info/RECORD", "\n".join(record) + "\n")
    return path


def _package(tmp_path: Path, name: str = "tinyshop-1.0") -> Package:
    folder = tmp_path / "census" / name
    (folder / "shop").mkdir(parents=True)
    (folder / "shop" / "__init__.py").write_text("")
    return Package(name, "django-app", folder)


def test_an_installed_package_is_scanned_with_its_own_interpreter(tmp_path: Path) -> None:
    pkg = _package(tmp_path)
    env = prepare(pkg, str(_wheel(tmp_path)), tmp_path / "envs", timeout=300)
    assert env.status is EnvStatus.READY, env.error_tail
    imported = subprocess.run(
        [env.python, "-c", "import tinyshop; print(tinyshop.total([1, 2]))"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert imported.stdout.strip() == "3"

    again = prepare(pkg, "no-such-requirement==0", tmp_path / "envs", timeout=300)
    assert again == env  # installed once: the stamp is read, pip is not run again

    # The scan is told to read that environment.
    record = scan_package(pkg, tmp_path / "work", Analyzer(("true",), "t"), 60, 1, env.python)
    assert record.command[-2:] == ["--python", env.python]
    assert record.python == env.python


def test_a_failed_install_says_why_and_scans_without(tmp_path: Path) -> None:
    pkg = _package(tmp_path)
    missing = tmp_path / "nowhere" / "tinyshop-1.0-py3-none-any.whl"
    env = prepare(pkg, str(missing), tmp_path / "envs", timeout=300)
    assert env.status is EnvStatus.FAILED
    assert env.python == ""
    assert "nowhere" in env.error_tail
    # Recorded: a second census run does not try again.
    assert prepare(pkg, str(missing), tmp_path / "envs", timeout=300) == env


def test_a_package_packages_txt_does_not_list_has_nothing_to_install(tmp_path: Path) -> None:
    env = prepare(_package(tmp_path), None, tmp_path / "envs", timeout=300)
    assert env.status is EnvStatus.UNPINNED
    assert not (tmp_path / "envs").exists()
