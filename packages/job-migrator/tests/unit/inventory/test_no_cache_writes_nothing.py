"""``migrator scan --no-cache -o FILE`` leaves the scanned tree as it was (the census scans
read-only trees); ``--no-cache`` alone still writes the inventory ``migrator plan`` reads,
and never a cache, not even the remembered interpreter of ``--python``."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from migrator.cli import main
from tests.unit.inventory.fake_venv import fake_venv, write_tree

_APP = {
    "shop/__init__.py": "",
    "shop/views.py": """\
import threading

from django.core.mail import send_mail


def signup(request):
    threading.Thread(target=send_mail, args=("Hi", "body", "a@b.c", ["d@e.f"])).start()
""",
}


def _cli(*args: str) -> int:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code


def _written(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in (root / ".migrator").rglob("*"))


def test_no_cache_with_an_output_file_writes_nothing_in_the_tree(tmp_path: Path) -> None:
    root, report = tmp_path / "app", tmp_path / "inventory.json"
    write_tree(root, _APP)
    python = fake_venv(tmp_path / "venv", {"tiny/__init__.py": ""})
    code = _cli("scan", str(root), "--no-cache", "--format", "json", "-o", str(report))
    code_env = _cli("scan", str(root), "--no-cache", "--python", str(python), "-o", str(report))
    assert (code, code_env) == (0, 0)
    assert not (root / ".migrator").exists()
    assert report.is_file()


def test_no_cache_alone_writes_the_inventory_and_no_cache(tmp_path: Path) -> None:
    root = tmp_path / "app"
    write_tree(root, _APP)
    python = fake_venv(tmp_path / "venv", {"tiny/__init__.py": ""})
    assert _cli("scan", str(root), "--no-cache", "--python", str(python)) == 0
    assert _written(root) == [".migrator/.gitignore", ".migrator/inventory.json"]
    inventory = json.loads((root / ".migrator" / "inventory.json").read_text())
    assert [site["location"]["path"] for site in inventory["sites"]] == ["shop/views.py"]


def test_a_cached_scan_remembers_its_interpreter(tmp_path: Path) -> None:
    root = tmp_path / "app"
    write_tree(root, _APP)
    python = fake_venv(tmp_path / "venv", {"tiny/__init__.py": ""})
    assert _cli("scan", str(root), "--python", str(python)) == 0
    assert ".migrator/cache/env.json" in _written(root)
