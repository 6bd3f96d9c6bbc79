"""Calls explained without a gap (issue 10, second round): small reproductions.

- A module-level dict of functions called through a subscript (a settings getter
  table) is followed; a table the module adds to is a registry and stays dynamic.
- A ``[[pure]]`` method entry speaks for a receiver of unknown type when only a
  library read from the environment defines that method (a Django QuerySet's
  ``distinct``); a project class defining it keeps the call a gap.
- ``?.delete`` decides by name unless a project class defines ``delete``.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

from inventory import Idempotency, scan
from inventory._extract import extract_source
from tests.unit.inventory.test_thirdparty import make_venv, write


def _tables(source: str) -> dict[str, list[str]]:
    return extract_source(textwrap.dedent(source), "pkg/conf.py", "pkg.conf").tables


def test_a_dict_literal_of_functions_is_a_dispatch_table() -> None:
    tables = _tables(
        """
        from pkg import other

        def a():
            return 1

        GETTERS = {"a": a, "b": other.b}
        DEFAULTS = {"a": 1}
        """
    )
    assert tables == {"GETTERS": ["pkg.conf.a", "pkg.other.b"]}


def test_a_table_the_module_adds_to_is_a_registry() -> None:
    tables = _tables(
        """
        def a():
            return 1

        HANDLERS = {"a": a}
        HOOKS = {"a": a}

        def register(name, fn):
            HANDLERS[name] = fn

        HOOKS.update(extra=a)
        """
    )
    assert tables == {}


VIEW = (
    "import threading\nfrom app.jobs import job\n\n"
    "def view(request):\n    threading.Thread(target=job, args=(request,)).start()\n"
)
QLIB = {
    "qlib/__init__.py": (
        "def touch():\n    return None\n\n\n"
        "class QuerySet:\n"
        "    def distinct(self):\n        return self\n\n"
        "    def values_list(self, *names):\n        return []\n"
    ),
    "qlib-1.0.dist-info/top_level.txt": "qlib\n",
    "qlib-1.0.dist-info/METADATA": "Name: qlib\nVersion: 1.0\n",
}
JOB = "import qlib\n\n\ndef job(rows):\n    qlib.touch()\n    return rows.distinct().values_list('k')\n"


def _verdict(root: Path, files: dict[str, str], python: Path) -> Idempotency:
    write(root, {"app/__init__.py": "", "app/views.py": VIEW, **files})
    job = scan(root, use_cache=False, jobs=1, python=str(python)).job("app.jobs.job")
    assert job is not None
    return job.idempotency


def test_a_pure_method_entry_speaks_for_a_library_class_method(tmp_path: Path) -> None:
    python = make_venv(tmp_path / "env")
    site = next((tmp_path / "env" / "lib").glob("python*/site-packages"))
    write(site, QLIB)
    assert _verdict(tmp_path / "p", {"app/jobs.py": JOB}, python) == Idempotency.IDEMPOTENT


def test_a_project_class_defining_the_method_keeps_it_a_gap(tmp_path: Path) -> None:
    python = make_venv(tmp_path / "env")
    site = next((tmp_path / "env" / "lib").glob("python*/site-packages"))
    write(site, QLIB)
    mine = "class Export:\n    def distinct(self):\n        import requests\n        requests.post('https://x')\n"
    files = {"app/jobs.py": JOB, "app/export.py": mine}
    assert _verdict(tmp_path / "p", files, python) == Idempotency.UNKNOWN
