"""Following calls into installed libraries, and the soundness rule (issue 10).

Small reproductions of the real shape: a job whose only effect is inside a
library (a telemetry helper that POSTs from a thread it starts), read from a
virtualenv laid out on disk; without that environment the call is a gap and the
job is `unknown`, never `idempotent`.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from inventory import Idempotency, Inventory, scan
from inventory._env import find_environment
from tests.unit.inventory.fake_venv import fake_venv, write_tree

LIBRARY = {
    "telemetry_lib/__init__.py": "from telemetry_lib._send import send_in_thread\n",
    "telemetry_lib/_send.py": (
        "import threading\n\nimport requests\n\n\n"
        "def send_in_thread(topic, data):\n"
        "    threading.Thread(target=_send, args=(topic, data), daemon=True).start()\n\n\n"
        "def _send(topic, data):\n"
        "    requests.post('https://telemetry.example.com/' + topic, json=data)\n"
    ),
    "telemetry_lib-1.2.dist-info/top_level.txt": "telemetry_lib\n",
    "telemetry_lib-1.2.dist-info/METADATA": "Name: telemetry_lib\nVersion: 1.2\n",
}
PROJECT = {
    "app/__init__.py": "",
    "app/jobs.py": (
        "import json\nimport threading\n\nfrom telemetry_lib import send_in_thread\n\n\n"
        "def report(topic, data):\n    send_in_thread(topic, json.dumps(data))\n\n\n"
        "def tidy(name):\n    return len(name.strip().lower())\n\n\n"
        "def view(request):\n"
        "    threading.Thread(target=report, args=('t', {})).start()\n"
        "    threading.Thread(target=tidy, args=(request.user.name,)).start()\n"
    ),
}


def write(root: Path, files: dict[str, str]) -> None:
    write_tree(root, files)


def make_venv(where: Path) -> Path:
    return fake_venv(where, LIBRARY)


def verdicts(inventory: Inventory) -> dict[str, Idempotency]:
    return {job.qualname.rsplit(".", 1)[-1]: job.idempotency for job in inventory.jobs}


def test_a_call_into_an_uninstalled_library_is_a_gap_not_idempotent(tmp_path: Path) -> None:
    write(tmp_path, PROJECT)
    inventory = scan(tmp_path, use_cache=False, jobs=1)
    assert verdicts(inventory) == {"report": Idempotency.UNKNOWN, "tidy": Idempotency.IDEMPOTENT}
    report = inventory.job("app.jobs.report")
    assert report is not None
    messages = " ".join(e.message for e in report.evidence)
    assert "unresolved calls" in messages and "telemetry_lib.send_in_thread" in messages


def test_library_source_is_followed_through_a_thread_it_starts(tmp_path: Path) -> None:
    python = make_venv(tmp_path / "env")
    project = tmp_path / "project"
    write(project, PROJECT)
    inventory = scan(project, use_cache=False, jobs=1, python=str(python))
    assert verdicts(inventory)["report"] == Idempotency.NON_IDEMPOTENT
    report = inventory.job("app.jobs.report")
    assert report is not None
    (post,) = [e for e in report.effects if e.api == "requests.post"]
    assert post.chain[0] == "app.jobs.report" and post.chain[-1] == "telemetry_lib._send._send"


def test_the_project_virtualenv_is_found_and_summaries_are_cached_per_version(
    tmp_path: Path,
) -> None:
    write(tmp_path, PROJECT)
    make_venv(tmp_path / ".venv")
    env = find_environment(tmp_path, None, None)
    assert env.how == "project virtualenv .venv/"
    assert verdicts(scan(tmp_path, jobs=1))["report"] == Idempotency.NON_IDEMPOTENT
    store = tmp_path / ".migrator" / "cache" / "libraries-v1.sqlite"
    with sqlite3.connect(store) as db:
        rows = db.execute("SELECT dist, version, module FROM modules ORDER BY module").fetchall()
    assert ("telemetry_lib", "1.2", "telemetry_lib._send") in rows
    assert all(module.startswith("telemetry_lib") for _, _, module in rows)  # only what is reached
    (tmp_path / "app" / "jobs.py").write_text(PROJECT["app/jobs.py"] + "\n", encoding="utf-8")
    assert verdicts(scan(tmp_path, jobs=1))["report"] == Idempotency.NON_IDEMPOTENT


def test_a_configured_interpreter_is_used(tmp_path: Path) -> None:
    python = make_venv(tmp_path / "elsewhere")
    project = tmp_path / "project"
    write(project, PROJECT)
    (project / "pyproject.toml").write_text(
        f'[tool.migrator]\npython = "{python}"\n', encoding="utf-8"
    )
    inventory = scan(project, use_cache=False, jobs=1)
    assert verdicts(inventory)["report"] == Idempotency.NON_IDEMPOTENT


def test_a_user_pure_entry_explains_an_unread_call(tmp_path: Path) -> None:
    write(tmp_path, PROJECT)
    (tmp_path / "pyproject.toml").write_text(
        '[[tool.migrator.catalogue.pure]]\ncall = "telemetry_lib.*"\n', encoding="utf-8"
    )
    assert verdicts(scan(tmp_path, use_cache=False, jobs=1))["report"] == Idempotency.IDEMPOTENT
