"""The migrated shop's own test suite, with real workers running the moved jobs.

A copy of examples/shop is scanned and ``migrator apply --write`` moves its
idempotent jobs onto queue_runtime. The shop's tests then run in a subprocess
with ``QUEUE_RUNTIME_MODE=queue`` against the real PostgreSQL and Redis: the
handlers only enqueue, and the shop's conftest starts one ``queue-runtime
worker`` per test that uses the app, with ``SHOP_HOME`` set to that test's
temp dir (each test has its own database and directories, so a worker shared
by the run could not see them; see examples/shop/tests/conftest.py). The tests
that wait for background work wait on the worker, with their deadlines.

Afterwards the queue's history proves the jobs ran through workers: every moved
job has succeeded rows, none is dead, nothing is left pending. Isolation: a
schema and a Redis prefix of this test's own (dropped, keys deleted); every
worker is stopped by its PID by the fixture that started it.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest
from click.testing import CliRunner
from psycopg import sql

from migrator.cli import main
from tests.e2e._queue_env import app_env, migrate, private_queue
from tests.support import pg_admin_url

pytestmark = [pytest.mark.pg, pytest.mark.redis, pytest.mark.slow]

SHOP = Path(__file__).resolve().parents[4] / "examples" / "shop"
IGNORE = shutil.ignore_patterns(
    ".migrator", "__pycache__", "*.egg-info", "build", "data", "media", ".pytest_cache"
)
MOVED = {  # the job names workers run: test_apply_shop.MOVED, a Thread subclass by its wrapper
    "shop.jobs.cache.warm_product_cache",
    "shop.jobs.cache.run_cache_warmer",  # CacheWarmer(...).start() -> the wrapper job of its run
    "shop.images.make_thumbnail",
    "shop.reports.export_daily_report",
    "shop.reports.rebuild_reports",
    "shop.jobs.cache.warm_all_product_caches",  # every="15m": the worker ticks its latest tick
}


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True)


def migrated_shop(dest: Path) -> Path:
    """A git copy of the shop, scanned, then rewritten by ``migrator apply --write``."""
    shutil.copytree(SHOP, dest, ignore=IGNORE)
    (dest / ".gitignore").write_text(".migrator/\n__pycache__/\ndata/\nmedia/\n")
    git(dest, "init", "-q", "-b", "main")
    git(dest, "add", ".")
    git(dest, "-c", "user.email=dev@example.com", "-c", "user.name=Dev", "commit", "-qm", "shop")
    runner = CliRunner(env={"COLUMNS": "250"})
    scanned = runner.invoke(main, ["scan", str(dest)])
    assert scanned.exit_code == 0, scanned.output
    unsorted = import_problems(dest)
    applied = runner.invoke(main, ["apply", str(dest), "--write"])
    assert applied.exit_code == 0, applied.output
    # The added imports sit where isort / ruff put them: no new import-order finding.
    assert import_problems(dest) == unsorted
    return dest


def import_problems(root: Path) -> list[str]:
    """``ruff check --select I`` on the shop's code, as its own project (its own config)."""
    found = subprocess.run(
        [
            sys.executable,
            "-m",
            "ruff",
            "check",
            "--select",
            "I",
            "--output-format",
            "concise",
            "--no-cache",
            "shop",
        ],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
    )
    assert found.returncode in (0, 1), found.stderr  # 1: findings (the shop has one already)
    findings = (line.split(":") for line in found.stdout.splitlines() if line.startswith("shop/"))
    return sorted(f"{parts[0]}:{':'.join(parts[3:])}" for parts in findings)  # no line numbers


def history(schema: str) -> tuple[dict[tuple[str, str], int], int]:
    """(count of finished jobs by (name, status), jobs still in the hot table)."""
    with psycopg.connect(pg_admin_url(), autocommit=True) as conn:
        rows = conn.execute(
            sql.SQL("SELECT name, status::text, count(*) FROM {} GROUP BY 1, 2").format(
                sql.Identifier(schema, "job_history")
            )
        ).fetchall()
        [(left,)] = conn.execute(
            sql.SQL("SELECT count(*) FROM {}").format(sql.Identifier(schema, "jobs"))
        ).fetchall()
    return {(name, status): n for name, status, n in rows}, left


def test_the_migrated_shop_tests_pass_with_real_workers_running_the_jobs(tmp_path: Path) -> None:
    root = migrated_shop(tmp_path / "shop")
    assert (
        "make_thumbnail.options(inline=InlineShape.EXECUTOR"
        in (root / "shop/routes/products.py").read_text()
    )
    assert (
        "from PIL import Image\nfrom queue_runtime import job\n\nfrom shop"
        in (root / "shop/images.py").read_text()
    )

    with private_queue(root) as schema:
        env = app_env(root, QUEUE_RUNTIME_MODE="queue")
        migrate(root, env)
        proc = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"],
            cwd=root,
            env=env,
            capture_output=True,
            text=True,
            timeout=900,
            check=False,
        )
        finished, left = history(schema)

    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-2000:]
    succeeded = {name for (name, status) in finished if status == "succeeded"}
    assert succeeded == MOVED, finished  # each moved job ran, through a worker, and only those
    assert [key for key in finished if key[1] != "succeeded"] == [], finished
    assert left == 0
