"""The classifier findings of the real-world QA (tests/fixtures/realworld/), end to end.

Each test copies one reproduction into a temporary folder and runs the real
extractor and classifier on it (``inventory.scan``), then asserts what a user
sees: sites, jobs, verdicts, evidence.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from inventory import Inventory, Pattern, scan
from inventory._classify._index import Resolved, SymbolIndex
from inventory.models import Job

REALWORLD = Path(__file__).resolve().parents[2] / "fixtures" / "realworld"


def scan_fixture(tmp_path: Path, name: str) -> Inventory:
    source = REALWORLD / name
    if source.is_dir():
        shutil.copytree(source, tmp_path / "app")
    else:
        (tmp_path / "app").mkdir()
        shutil.copy(source, tmp_path / "app" / source.name)
    return scan(tmp_path / "app", use_cache=False, jobs=1)


def scan_files(tmp_path: Path, files: dict[str, str]) -> Inventory:
    for rel, text in files.items():
        (tmp_path / "app" / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "app" / rel).write_text(text, encoding="utf-8")
    return scan(tmp_path / "app", use_cache=False, jobs=1)


def job(inventory: Inventory, suffix: str) -> Job:
    found = [j for j in inventory.jobs if j.qualname.endswith(suffix)]
    assert len(found) == 1, [j.qualname for j in inventory.jobs]
    return found[0]


def messages(inventory: Inventory, suffix: str) -> str:
    return "\n".join(e.message for e in job(inventory, suffix).evidence)


# --- 1. star-import cliques must not hang the scan (litellm) -----------------------------


def test_star_import_blowup_fixture_resolves_quickly(tmp_path: Path) -> None:
    inventory = scan_fixture(tmp_path, "star_import_blowup")
    [site] = inventory.sites
    assert site.pattern == Pattern.THREAD
    assert site.job == "unknown"
    assert "pkg.m0.send_report could not be resolved" in site.unresolved_reason


def _clique(size: int) -> dict[str, str]:
    files = {"pkg/__init__.py": ""}
    for i in range(size):
        stars = "".join(f"from .m{j} import *\n" for j in range(size) if j != i)
        files[f"pkg/m{i}.py"] = stars + f"\n\ndef helper_{i}():\n    return {i}\n"
    files["pkg/m0.py"] = (
        "import threading\n"
        + files["pkg/m0.py"]
        + "\n\ndef start():\n"
        + "    threading.Thread(target=send_report).start()\n"
        + "    threading.Thread(target=helper_7).start()\n"
    )
    return files


@pytest.mark.timeout(20)
def test_a_generated_star_import_clique_of_14_modules_scans_in_time(tmp_path: Path) -> None:
    # 10 modules took 15 s before (factorial in the clique size); 14 would take days.
    inventory = scan_files(tmp_path, _clique(14))
    assert sorted(s.job for s in inventory.sites) == ["pkg.m7.helper_7", "unknown"]


def test_star_import_resolution_steps_are_bounded(tmp_path: Path) -> None:
    from inventory._extract import extract_source

    files = _clique(14)
    summaries = [
        extract_source(
            text,
            rel,
            rel.removesuffix(".py").removesuffix("/__init__").replace("/", "."),
            rel.endswith("__init__.py"),
        )
        for rel, text in files.items()
    ]
    index = SymbolIndex(summaries)
    steps = 0
    inner = index._resolve

    def counted(name: str) -> Resolved:
        nonlocal steps
        steps += 1
        return inner(name)

    index._resolve = counted  # type: ignore[method-assign]
    for i in range(14):
        assert index.resolve(f"pkg.m{i}.missing_name").kind == "missing"
        assert index.resolve(f"pkg.m{i}.helper_{(i + 3) % 14}").name.endswith(
            f"helper_{(i + 3) % 14}"
        )
    assert steps < 200
