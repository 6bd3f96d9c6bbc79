"""Moved jobs stay known (issue 21, item 7): re-scan, apply again, plan --check, rollback.

On a git copy of examples/shop: scan, ``apply --write`` (the idempotent jobs, and
``shop.mail.send_receipt`` named with a key), re-scan. Every moved job is still in
the inventory, its sites of pattern ``enqueue`` with the verdict it had before;
``apply`` again changes nothing; ``plan --check`` (real PostgreSQL and Redis, a
private schema and prefix) lists them; ``migrator rollout set <moved job> inline``
exits 0. And ``rollout set J inline`` is never refused for a job the runtime has
a record of (a stored rollout or certification), even when no inventory knows it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from codemods import Status, plan_apply
from inventory import scan
from inventory.models import Idempotency, Inventory, Pattern
from migrator.cli import main
from queue_runtime import Settings
from queue_runtime.gate import rollouts, set_rollout
from queue_runtime.runtime import Runtime
from queue_runtime.testing import isolated_settings, pg_admin_url
from tests.e2e.test_apply_shop import git, shop_repo

pytestmark = [pytest.mark.pg, pytest.mark.redis]

RECEIPT = "shop.mail.send_receipt"
# Before the move a Thread subclass's job is its run(); apply writes a wrapper job, the
# name the runtime registers, and the re-scan names the moved site by it.
RENAMED = {"shop.jobs.cache.CacheWarmer.run": "shop.jobs.cache.run_cache_warmer"}


def cli(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args), env={"COLUMNS": "250"})
    return result.exit_code, result.output


def migrator(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("QUEUE_RUNTIME_")}
    return subprocess.run(
        [sys.executable, "-c", "from migrator.cli import main; main()", *args],
        cwd=root,
        env={**env, "COLUMNS": "250"},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def configure(root: Path, settings: Settings) -> None:
    with (root / "pyproject.toml").open("a") as out:
        out.write(
            f'\n[tool.queue_runtime]\ndatabase_url = "{settings.database_url}"\n'
            f'redis_url = "{settings.redis_url}"\nschema = "{settings.schema_name}"\n'
            f'redis_prefix = "{settings.redis_prefix}"\ndefault_pool = "batch"\n'
        )


@pytest.fixture(scope="module")
def moved(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Inventory, Inventory]:
    """(the shop copy after apply, the inventory before, the re-scanned one)."""
    root = shop_repo(tmp_path_factory.mktemp("moved") / "shop")
    before = scan(root, use_cache=False)
    code, out = cli("apply", str(root), "--write")
    assert code == 0, out
    git(root, "commit", "-qam", "apply the idempotent jobs")
    key = f"{RECEIPT}=receipt:{{order_id}}"
    code, out = cli("apply", str(root), "--job", RECEIPT, "--key", key, "--write")
    assert code == 0, out
    git(root, "commit", "-qam", "apply the receipt mail")
    return root, before, scan(root, use_cache=False)


def moved_jobs(before: Inventory, after: Inventory) -> dict[str, str]:
    """Job before the move -> its name after, for every job whose sites became enqueue."""
    enqueued = {s.job for s in after.sites if s.pattern is Pattern.ENQUEUE}
    return {
        job: RENAMED.get(job, job)
        for job in {s.job for s in before.sites}
        if RENAMED.get(job, job) in enqueued
    }


def test_every_moved_job_stays_with_its_verdict(moved: tuple[Path, Inventory, Inventory]) -> None:
    _, before, after = moved
    jobs = moved_jobs(before, after)
    assert len(jobs) == 7 and RECEIPT in jobs  # the 6 idempotent jobs and the mail
    for old, new in jobs.items():
        was, now = before.job(old), after.job(new)
        assert was is not None and now is not None, (old, new)
        assert now.idempotency is was.idempotency, (old, now.idempotency)
        assert [s.pattern for s in after.sites_of(new)] == [Pattern.ENQUEUE], new
        assert after.sites_of(new)[0].idempotency is was.idempotency
    assert after.job(RECEIPT).idempotency is Idempotency.NON_IDEMPOTENT  # type: ignore[union-attr]
    # the moved mail is no longer also a direct call of the handler
    assert not [s for s in after.sites if s.pattern is Pattern.DIRECT_CALL and s.job == RECEIPT]


def test_apply_again_changes_nothing_and_says_already(
    moved: tuple[Path, Inventory, Inventory],
) -> None:
    root, _, after = moved
    again = plan_apply(root, after)
    assert again.changes == [] and again.by_status(Status.REWRITTEN) == []
    already = {o.site.job for o in again.by_status(Status.ALREADY)}
    assert {s.job for s in after.sites if s.pattern is Pattern.ENQUEUE} <= already
    _, out = cli("apply", str(root), "--write")
    assert "+++" not in out, out
    assert git(root, "status", "--porcelain", "--untracked-files=no") == ""


@pytest.fixture
def queue(moved: tuple[Path, Inventory, Inventory]) -> Iterator[tuple[Path, Settings]]:
    root = moved[0]
    pyproject = root / "pyproject.toml"
    original = pyproject.read_text()
    with isolated_settings(pg_admin_url()) as settings:
        configure(root, settings)
        try:
            yield root, settings
        finally:
            pyproject.write_text(original)
            (root / "MIGRATION_PLAN.md").unlink(missing_ok=True)


def test_plan_check_lists_the_moved_jobs(
    queue: tuple[Path, Settings], moved: tuple[Path, Inventory, Inventory]
) -> None:
    root, _ = queue
    _, before, after = moved
    code, out = cli("scan", str(root))  # writes .migrator/inventory.json, which plan reads
    assert code == 0, out
    code, out = cli("plan", str(root), "--check")
    assert code in (0, 1), out  # 1: metrics and runbooks are not in place
    text = (root / "MIGRATION_PLAN.md").read_text()
    for job in moved_jobs(before, after).values():
        assert f"<!-- plan:{job}/" in text, job


def test_rollout_set_inline_of_a_moved_job_exits_0(queue: tuple[Path, Settings]) -> None:
    root, settings = queue
    assert cli("scan", str(root))[0] == 0
    done = migrator(root, "rollout", "set", RECEIPT, "inline")
    assert done.returncode == 0, done.stdout + done.stderr
    assert stored(settings)[RECEIPT] == "inline"


def stored(settings: Settings) -> dict[str, str]:
    runtime = Runtime(settings)
    try:
        return {r.job: r.label for r in rollouts(runtime)}
    finally:
        runtime.close()


def test_a_rollback_is_never_refused_for_a_job_the_runtime_knows(tmp_path: Path) -> None:
    with isolated_settings(pg_admin_url()) as settings:
        configure(tmp_path, settings)
        runtime = Runtime(settings)
        try:
            set_rollout(runtime, "gone.from.inventory", "async", who="alice")
        finally:
            runtime.close()

        rollback = migrator(tmp_path, "rollout", "set", "gone.from.inventory", "inline")
        assert rollback.returncode == 0, rollback.stdout + rollback.stderr
        assert stored(settings)["gone.from.inventory"] == "inline"
        assert "rolled back" in rollback.stderr

        promote = migrator(tmp_path, "rollout", "set", "gone.from.inventory", "50%")
        never = migrator(tmp_path, "rollout", "set", "never.stored", "inline")
        assert promote.returncode == 2 and never.returncode == 2, promote.stderr + never.stderr
        assert "never.stored" not in stored(settings)
