"""``migrator loadtest`` on the example app: the shop's non-idempotent audit job.

A copy of examples/shop is scanned and ``migrator apply --job
shop.jobs.audit.write_audit --key ... --write`` registers ``write_audit`` (declared
``non_idempotent``: the gate holds it). A sandbox settings module in the copy
points the shop at a directory of the test's own (its SQLite database) and
queue_runtime at a schema and Redis prefix of the test's own.

- uncertified, the gate runs its enqueues inline;
- with an idempotency key per job, under kill-workers and redis-restart, the
  load test passes and certifies it; enqueues then go async, and every order
  got one audit row, also under pg-terminate (the guard's writes retry on
  a fresh connection, a gap the load test found and that is now closed);
- changing one line of the job closes the gate again (a new fingerprint);
- without a key, under kill-workers, the load test fails and reports the
  duplicate completions: the audit log has a second row for those orders.

The gate is asked in subprocesses of the copy (importing ``shop`` here would
mix it with the other shop tests' imports).
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from migrator.cli import main
from queue_runtime import Settings
from tests.e2e._queue_env import fast_sandbox

pytestmark = [pytest.mark.pg, pytest.mark.redis, pytest.mark.slow]

SHOP = Path(__file__).resolve().parents[4] / "examples" / "shop"
JOB = "shop.jobs.audit.write_audit"
IGNORE = shutil.ignore_patterns(
    ".migrator", "__pycache__", "*.egg-info", "build", "data", "media", ".pytest_cache"
)

SANDBOX = '''"""Load-test sandbox: the shop in $SHOP_HOME, the queue from $LOADTEST_APP_SETTINGS."""

import os
from pathlib import Path

from queue_runtime import Settings as QueueSettings, configure
from shop.db import init_db
from shop.services import Services, install
from shop.settings import Settings

shop_settings = Settings.in_directory(Path(os.environ["SHOP_HOME"]))
init_db(shop_settings.database)
install(Services(shop_settings))
configure(QueueSettings.model_validate_json(os.environ["LOADTEST_APP_SETTINGS"]))
'''

GATE = """import json
import loadtest_sandbox
from queue_runtime import current
from queue_runtime.gate import gate_decision
from shop.jobs.audit import write_audit
decision = gate_decision(current(), write_audit)
print(json.dumps({"async": decision.run_async, "reason": decision.reason}))
"""


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True)


@pytest.fixture
def shop(tmp_path: Path) -> Path:
    root = tmp_path / "shop"
    shutil.copytree(SHOP, root, ignore=IGNORE)
    (root / ".gitignore").write_text(".migrator/\n__pycache__/\ndata/\nmedia/\n")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", ".")
    git(root, "-c", "user.email=dev@example.com", "-c", "user.name=Dev", "commit", "-qm", "shop")
    runner = CliRunner(env={"COLUMNS": "250"})
    scanned = runner.invoke(main, ["scan", str(root)])
    assert scanned.exit_code == 0, scanned.output
    key = f"{JOB}=audit-{{event}}-{{order_id}}"  # the call site enqueues with a key
    applied = runner.invoke(main, ["apply", str(root), "--job", JOB, "--key", key, "--write"])
    assert applied.exit_code == 0, applied.output
    assert 'idempotency="non_idempotent"' in (root / "shop/jobs/audit.py").read_text()
    (root / "loadtest_sandbox.py").write_text(SANDBOX)
    (root / "gate_check.py").write_text(GATE)
    (root / "home").mkdir()
    return root


@pytest.fixture
def queue() -> Iterator[Settings]:
    with fast_sandbox("qr_ltshop") as settings:
        yield settings


def env_for(root: Path, queue: Settings) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "QUEUE_RUNTIME_MODE"}
    env.update(
        LOADTEST_APP_SETTINGS=queue.model_dump_json(by_alias=True),
        SHOP_HOME=str(root / "home"),
        PYTHONPATH=str(root),
        COLUMNS="200",
    )
    return env


def gate(root: Path, queue: Settings) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "gate_check.py"],
        cwd=root,
        env=env_for(root, queue),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def loadtest(root: Path, queue: Settings, *options: str) -> tuple[int, str, dict]:
    report = root / f"report-{secrets.token_hex(3)}.json"
    command = [sys.executable, "-c", "from migrator.cli import main; main()", "loadtest", JOB]
    command += ["--sandbox", "loadtest_sandbox", "--json", str(report)]
    done = subprocess.run(
        [*command, *options],
        cwd=root,
        env=env_for(root, queue),
        capture_output=True,
        text=True,
        timeout=110,
        check=False,
    )
    output = done.stdout + done.stderr
    assert report.exists(), output
    return done.returncode, output, json.loads(report.read_text())


def audit_rows(root: Path) -> dict[int, int]:
    """order id -> audit rows written for it."""
    with sqlite3.connect(root / "home" / "data" / "shop.sqlite3") as conn:
        rows = conn.execute("SELECT order_id, count(*) FROM audit_log GROUP BY order_id")
        return dict(rows.fetchall())


# A job a killed worker had claimed but not started waits for the lease TTL (2 s), and
# after a Redis restart for the reaper's epoch wait too: the SLA leaves room for both.
COMMON = ("--rate", "25", "--workers", "2", "--concurrency", "4", "--sla-p99-ms", "15000")


def test_the_shop_audit_job_is_certified_with_a_key_and_fails_without_one(
    shop: Path, queue: Settings
) -> None:
    before = gate(shop, queue)
    assert before["async"] is False and "gate closed" in str(before["reason"])

    status, output, report = loadtest(
        shop, queue, *COMMON, "--duration", "5s", "--key", "audit-{run}-{i}",
        "--chaos", "kill-workers,redis-restart", "--certify-by", "shop-e2e",
    )  # fmt: skip
    assert status == 0, output
    assert report["passed"] and report["certified"] and report["duplicate_completions"] == []
    assert {e["kind"] for e in report["chaos_events"]} == {"kill-workers", "redis-restart"}
    audited = audit_rows(shop)
    assert len(audited) == report["enqueued"] and set(audited.values()) == {1}
    assert gate(shop, queue)["async"] is True  # certified: enqueues go async

    audit = shop / "shop/jobs/audit.py"
    audit.write_text(
        audit.read_text().replace('"""Job (non-idempotent', '"""Job (changed; non-idempotent')
    )
    closed = gate(shop, queue)  # one changed line: a new fingerprint, the gate closes again
    assert closed["async"] is False and "gate closed" in str(closed["reason"])

    (shop / "home" / "data" / "shop.sqlite3").unlink()  # a fresh audit log for the second run
    status, output, report = loadtest(
        shop, queue, *COMMON, "--duration", "4s", "--chaos", "kill-workers", "--kills", "3"
    )
    assert status == 1, output
    assert not report["passed"] and not report["certified"]
    duplicates = report["duplicate_completions"]
    assert duplicates and "completed more than once" in " ".join(report["reasons"])
    assert "duplicate completions" in output
    twice = {order for order, rows in audit_rows(shop).items() if rows > 1}
    assert twice, "the duplicate completions wrote no second audit row"
    print(
        f"shop audit job: keyed run passed; unkeyed run found {len(duplicates)} duplicate"
        f" completion(s), {len(twice)} order(s) audited twice"
    )


def test_the_keyed_shop_audit_job_survives_pg_terminate(shop: Path, queue: Settings) -> None:
    for _ in range(3):  # one termination per run: three runs to hit a key being completed
        status, output, report = loadtest(
            shop, queue, *COMMON, "--rate", "60", "--duration", "3s",
            "--key", "audit-{run}-{i}", "--chaos", "pg-terminate",
        )  # fmt: skip
        errors = [e for d in report["duplicate_completions"] for e in d["attempt_errors"]]
        assert status == 0, errors or output
