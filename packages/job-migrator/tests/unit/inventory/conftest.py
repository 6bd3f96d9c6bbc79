"""Fixtures of the inventory tests."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from inventory import Idempotency, Inventory, scan


@pytest.fixture
def scan_project(tmp_path: Path) -> Callable[[dict[str, str]], Inventory]:
    """Write ``{path: source}`` under a fresh folder and scan it for real (no cache)."""

    def scanned(files: dict[str, str]) -> Inventory:
        for path, text in files.items():
            (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / path).write_text(text, encoding="utf-8")
        return scan(tmp_path, use_cache=False, jobs=1)

    return scanned


Verdicts = Callable[..., dict[str, Idempotency]]


@pytest.fixture
def app_verdicts(scan_project: Callable[[dict[str, str]], Inventory]) -> Verdicts:
    """Scan an ``app`` package of the given modules (``models=..., jobs=...``: ``app/<name>.py``)
    and give each job's verdict by its last name."""

    def verdicts(**modules: str) -> dict[str, Idempotency]:
        files = {"app/__init__.py": ""} | {f"app/{name}.py": text for name, text in modules.items()}
        inventory = scan_project(files)
        return {job.qualname.rsplit(".", 1)[-1]: job.idempotency for job in inventory.jobs}

    return verdicts


def thread_views(names: tuple[str, ...], args: str = "request.args") -> str:
    """``app/views.py`` whose one view starts each of ``app.jobs.<name>`` in a thread."""
    starts = "".join(
        f"    threading.Thread(target=jobs.{name}, args={args}).start()\n" for name in names
    )
    return "import threading\n\nfrom app import jobs\n\n\ndef view(request):\n" + starts
