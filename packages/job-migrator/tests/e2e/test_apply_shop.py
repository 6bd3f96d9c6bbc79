"""``migrator apply`` on a copy of examples/shop: scan, rewrite, and the shop still works.

The copy is a git repository (apply refuses uncommitted files), scanned with
the real scanner. Only the idempotent jobs' sites change; the shop's own test
suite then runs in a subprocess with the runtime in inline mode.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from codemods import ApplyResult, Status, plan_apply
from inventory import scan
from inventory.models import Idempotency, Inventory
from migrator.cli.apply import apply
from tests.e2e._queue_env import app_env, migrate, private_queue, run_python, worker

REPO = Path(__file__).resolve().parents[4]
SHOP = REPO / "examples" / "shop"
IGNORE = shutil.ignore_patterns(
    ".migrator", "__pycache__", "*.egg-info", "build", "data", "media", ".pytest_cache"
)
KNOWN_REASONS = (
    "bound method: the instance cannot be serialised",  # EventLog._consume, when scanned
)
# Issue 11: 5 of the 6 idempotent sites move (the Thread subclass as a job of its
# constructor data, the child process whose object was only kept to be joined).
MOVED = {
    "shop.jobs.cache.warm_product_cache",
    "shop.jobs.cache.CacheWarmer.run",
    "shop.images.make_thumbnail",
    "shop.reports.export_daily_report",
    "shop.reports.rebuild_reports",
    "shop.jobs.cache.warm_all_product_caches",  # shop.cron's schedule registration: every="15m"
}


def git(root: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=root, check=True, capture_output=True, text=True
    ).stdout


def shop_repo(dest: Path) -> Path:
    shutil.copytree(SHOP, dest, ignore=IGNORE)
    (dest / ".gitignore").write_text(".migrator/\n__pycache__/\ndata/\nmedia/\n")
    git(dest, "init", "-q", "-b", "main")
    git(dest, "config", "user.email", "dev@example.com")
    git(dest, "config", "user.name", "Dev")
    git(dest, "add", ".")
    git(dest, "commit", "-qm", "shop")
    return dest


def run_apply(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(apply, list(args), env={"COLUMNS": "250"})
    return result.exit_code, result.output


def tree(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in root.rglob("*.py")
        if "__pycache__" not in p.parts
    }


@pytest.fixture(scope="module")
def applied(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[Path, Inventory, ApplyResult, dict[str, bytes]]:
    root = shop_repo(tmp_path_factory.mktemp("apply") / "shop")
    inventory = scan(root, use_cache=False)
    before = tree(root)
    plan = plan_apply(root, inventory)
    code, out = run_apply(str(root), "--write")
    assert code == 0, out
    return root, inventory, plan, before


def test_only_idempotent_sites_are_rewritten(
    applied: tuple[Path, Inventory, ApplyResult, dict[str, bytes]],
) -> None:
    _root, inventory, plan, _before = applied
    rewritten = {o.site.job for o in plan.by_status(Status.REWRITTEN)}
    scanned = {s.job for s in inventory.sites}

    assert rewritten == MOVED & scanned  # the README's movable jobs, as far as the scan found them
    assert all(inventory.job(q).idempotency is Idempotency.IDEMPOTENT for q in rewritten)  # type: ignore[union-attr]
    assert {o.site.job for o in plan.outcomes} == scanned  # every site is accounted for


def test_idempotent_sites_left_alone_say_why(
    applied: tuple[Path, Inventory, ApplyResult, dict[str, bytes]],
) -> None:
    _root, inventory, plan, _before = applied
    idempotent = {j.qualname for j in inventory.jobs if j.idempotency is Idempotency.IDEMPOTENT}
    left = {
        o.site.job: o.reason
        for o in plan.outcomes
        if o.status is not Status.REWRITTEN and o.site.job in idempotent
    }

    assert set(left.values()) <= set(KNOWN_REASONS), left


def test_every_other_site_and_file_is_byte_for_byte_unchanged(
    applied: tuple[Path, Inventory, ApplyResult, dict[str, bytes]],
) -> None:
    root, _inventory, plan, before = applied
    after = tree(root)
    changed = {c.path for c in plan.changes}

    assert {p for p in before if before[p] != after.get(p)} == changed
    for outcome in plan.outcomes:
        if outcome.status is not Status.REWRITTEN:
            path, line = outcome.site.location.path, outcome.site.location.line
            text = before[path].decode().splitlines(keepends=True)[line - 1]
            assert text in after[path].decode().splitlines(keepends=True), f"{path}:{line} changed"


def test_the_shop_tests_pass_afterwards_in_inline_mode(
    applied: tuple[Path, Inventory, ApplyResult, dict[str, bytes]],
) -> None:
    root = applied[0]
    env = {**os.environ, "QUEUE_RUNTIME_MODE": "inline", "PYTHONPATH": str(root)}

    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )

    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert (
        "background_tasks.add_task(warm_product_cache.enqueue, product_id)"
        in (root / "shop/routes/products.py").read_text()
    )


SHOP_WORKER = """# Worker entry for the migrated shop: its services, and its moved jobs registered.
import os

import shop.images, shop.jobs.cache, shop.reports  # noqa: F401  (their @job functions register)
from shop.db import init_db
from shop.services import Services, install
from shop.settings import Settings

settings = Settings.from_env(os.environ)
init_db(settings.database)
install(Services(settings))
"""

EXPORT = """import json
from fastapi.testclient import TestClient
from shop.app import create_app
from shop.reports import report_path
from shop.settings import Settings
import os

with TestClient(create_app()) as client:
    code = client.post("/reports/2026-11-29").status_code
path = report_path(Settings.from_env(os.environ).reports_dir, "2026-11-29")
print(json.dumps({"code": code, "path": str(path), "written": path.exists()}))
"""


@pytest.mark.pg
@pytest.mark.redis
def test_a_real_worker_runs_a_moved_shop_job(
    applied: tuple[Path, Inventory, ApplyResult, dict[str, bytes]], tmp_path: Path, wait_until: Any
) -> None:
    root = tmp_path / "shop"
    shutil.copytree(
        applied[0], root, ignore=shutil.ignore_patterns(".git", ".migrator", "data", "media")
    )
    (root / "shop_worker.py").write_text(SHOP_WORKER)
    env = app_env(root, SHOP_HOME=str(tmp_path / "home"))

    with private_queue(root):
        migrate(root, env)
        exported = run_python(root, env, "-c", EXPORT)  # queue mode: the handler only enqueues
        assert exported.returncode == 0, exported.stderr[-3000:]
        seen = json.loads(exported.stdout.strip().splitlines()[-1])
        assert (seen["code"], seen["written"]) == (202, False)
        with worker(root, env, "shop_worker") as log:
            report = Path(seen["path"])
            wait_until(report.exists, timeout=30, message=f"the worker's report ({log})")

    assert report.read_text().splitlines() == [
        "order_id,user_id,product_id,qty,amount_cents,status"
    ]


def test_a_second_apply_changes_nothing(
    applied: tuple[Path, Inventory, ApplyResult, dict[str, bytes]],
) -> None:
    root = applied[0]
    git(root, "commit", "-qam", "apply")

    code, out = run_apply(str(root))  # the old inventory: changed files are rescanned first
    rescanned = plan_apply(root, scan(root, use_cache=False))

    assert code == 1 and "+++" not in out
    assert rescanned.changes == [] and rescanned.by_status(Status.REWRITTEN) == []


def test_branch_gets_one_commit_per_job_and_the_pr_text(tmp_path: Path) -> None:
    root = shop_repo(tmp_path / "shop")
    scanned = {s.job for s in scan(root, use_cache=False).sites}
    head = git(root, "rev-parse", "HEAD")

    code, out = run_apply(str(root), "--branch", "queue-idempotent")

    assert code == 0, out
    subjects = git(root, "log", "--format=%s", "main..queue-idempotent").splitlines()
    assert sorted(s.split()[1] for s in subjects) == sorted(MOVED & scanned)
    assert (
        git(root, "rev-parse", "HEAD") == head
        and git(root, "status", "--porcelain", "--", "shop") == ""
    )
    pr = (root / ".migrator" / "prs" / "queue-idempotent.md").read_text()
    assert "## What moved and why it is safe" in pr and 'mode = "inline"' in pr
    left_alone = pr.split("## Other sites not moved, and why", 1)[1]
    assert "`shop.payments.refund_payment` | skipped: job is " in left_alone  # with its verdict
