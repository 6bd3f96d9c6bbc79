"""The migrated shop's own suite with ``database_url`` in its pyproject.toml: twice, nothing left.

Issue 12: once the walkthrough's ``[tool.queue_runtime] database_url`` was in
the shop's ``pyproject.toml``, its tests ran on the real queue, failed, left
jobs in the database, and a second run failed differently (``receipt:1`` was
still a completed key). With queue_runtime's pytest plugin each test runs its
jobs inline on in-memory stores of its own: the suite passes twice in a row
and the configured schema (migrated, as the walkthrough does) stays empty.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import psycopg
import pytest
from click.testing import CliRunner
from psycopg import sql

from migrator.cli.apply import apply
from tests.e2e._queue_env import app_env, migrate, private_queue
from tests.e2e.test_apply_shop import shop_repo
from tests.support import pg_admin_url

pytestmark = [pytest.mark.pg, pytest.mark.slow]

KEY = '\n[tool.migrator.jobs."shop.mail.send_receipt"]\nkey = "receipt:{order_id}"\n'
TABLES = (
    "jobs",
    "job_history",
    "idempotency_keys",
    "job_keys",
    "certifications",
    "rollouts",
    "rollout_changes",
)


def _apply(*args: str) -> None:
    result = CliRunner().invoke(apply, list(args), env={"COLUMNS": "250"})
    assert result.exit_code == 0, result.output


def _suite(root: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in app_env(root).items() if not k.startswith("QUEUE_RUNTIME_")}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def _rows(schema: str) -> dict[str, int]:
    with psycopg.connect(pg_admin_url()) as conn:
        return {
            table: int(
                (
                    conn.execute(
                        sql.SQL("SELECT count(*) FROM {}.{}").format(
                            sql.Identifier(schema), sql.Identifier(table)
                        )
                    ).fetchone()
                    or (0,)
                )[0]
            )
            for table in TABLES
        }


def test_the_shop_suite_passes_twice_and_leaves_the_database_empty(tmp_path: Path) -> None:
    root = shop_repo(tmp_path / "shop")
    pyproject = root / "pyproject.toml"
    pyproject.write_text(pyproject.read_text() + KEY)
    _apply(str(root), "--write", "--allow-dirty")
    _apply(str(root), "--job", "shop.mail.send_receipt", "--write", "--allow-dirty")
    assert "idempotency_key=" in (root / "shop" / "services.py").read_text() + "".join(
        p.read_text() for p in (root / "shop" / "routes").glob("*.py")
    )
    with private_queue(root) as schema:
        migrate(root, app_env(root))
        for run in (1, 2):
            proc = _suite(root)
            assert proc.returncode == 0, f"run {run}:\n{proc.stdout[-4000:]}{proc.stderr[-2000:]}"
        assert _rows(schema) == dict.fromkeys(TABLES, 0)
