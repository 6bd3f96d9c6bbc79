"""``migrator rollout set`` against a live app registry, the real CLI in a subprocess.

An app folder whose ``pyproject.toml`` names a migrated schema of its own and
a module registering one job: a job neither ``--app`` registers nor the
inventory lists is refused with one line (no traceback) and exit status 2
(usage: see ``migrator.errors.ExitCode``), and nothing is stored; ``--force``
stages it; the registered job, and a job of the inventory, are accepted.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from inventory.models import Confidence, Idempotency, Inventory, Job
from queue_runtime import Settings
from queue_runtime.gate import rollouts
from queue_runtime.runtime import Runtime
from queue_runtime.testing import isolated_settings, pg_admin_url

pytestmark = [pytest.mark.pg]

APP = '''"""The app: one registered job."""

from queue_runtime import job


@job(name="rsl_app.resize", idempotent=True)
def resize(image: int) -> int:
    return image
'''


@pytest.fixture
def app(tmp_path: Path) -> Iterator[tuple[Path, Settings]]:
    (tmp_path / "rsl_app.py").write_text(APP)
    with isolated_settings(pg_admin_url()) as settings:
        (tmp_path / "pyproject.toml").write_text(
            f'[tool.queue_runtime]\ndatabase_url = "{settings.database_url}"\n'
            f'schema = "{settings.schema_name}"\n'
            "shadow_min_calls = 0\n"  # these tests are about known jobs, not shadow evidence
        )
        yield tmp_path, settings


def migrator(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("QUEUE_RUNTIME_")}
    return subprocess.run(
        [sys.executable, "-c", "from migrator.cli import main; main()", *args],
        cwd=root,
        env={**env, "COLUMNS": "250"},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def stored(settings: Settings) -> dict[str, str]:
    runtime = Runtime(settings)
    try:
        return {r.job: r.label for r in rollouts(runtime)}
    finally:
        runtime.close()


def test_an_unknown_job_is_refused_in_one_line_and_nothing_is_stored(
    app: tuple[Path, Settings],
) -> None:
    root, settings = app
    done = migrator(root, "rollout", "set", "no.such.job", "50%", "--app", "rsl_app")
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stdout == "" and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "no.such.job is not a job of --app rsl_app" in done.stderr
    assert "--force" in done.stderr and "Traceback" not in done.stderr
    typo = migrator(root, "rollout", "set", "rsl_app.resise", "50%", "--app", "rsl_app")
    assert typo.returncode == 2 and "did you mean rsl_app.resize?" in typo.stderr
    assert stored(settings) == {}


def test_force_stages_a_job_not_deployed_yet(app: tuple[Path, Settings]) -> None:
    root, settings = app
    done = migrator(root, "rollout", "set", "no.such.job", "50%", "--app", "rsl_app", "--force")
    assert done.returncode == 0, done.stderr
    assert "no.such.job: 50%" in done.stdout and "staged (--force)" in done.stderr
    assert stored(settings) == {"no.such.job": "50%"}


def test_a_registered_job_and_a_job_of_the_inventory_are_accepted(
    app: tuple[Path, Settings],
) -> None:
    root, settings = app
    done = migrator(root, "rollout", "set", "rsl_app.resize", "50%", "--app", "rsl_app")
    assert done.returncode == 0 and "rsl_app.resize: 50%" in done.stdout, done.stderr
    entry = Job(
        qualname="rsl_app.later", idempotency=Idempotency.IDEMPOTENT, confidence=Confidence.HIGH
    )
    (root / ".migrator").mkdir()
    inventory = Inventory(root=str(root), jobs=[entry]).model_dump_json()
    (root / ".migrator" / "inventory.json").write_text(inventory)
    done = migrator(root, "rollout", "set", "rsl_app.later", "inline", "--by", "ann")
    assert done.returncode == 0 and "rsl_app.later: inline" in done.stdout, done.stderr
    assert stored(settings) == {"rsl_app.resize": "50%", "rsl_app.later": "inline"}
