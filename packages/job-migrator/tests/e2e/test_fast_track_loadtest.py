"""Issue 6, the end of the fast track: ``migrator loadtest`` certifies the shop's moved welcome mail.

On a copy of examples/shop whose welcome mail was moved with
``apply --job shop.mail.send_welcome`` (declared key ``welcome:{user_id}``),
the load test runs ``send_welcome`` through real workers with all three kinds
of chaos (workers SIGKILLed mid-batch, Redis restarted, PostgreSQL backends
terminated). The sandbox gives the shop a mail backend that keeps each sent
mail in a PostgreSQL table and marks the job's idempotency key completed in the
same transaction (``queue_runtime.gate.complete_in``), the way a transactional
outbox does: a worker killed after sending re-delivers the job, the execution
guard finds the key completed, and the mail is not sent again. The test checks
the report (no loss, no duplicate completion, certified) and the mails
themselves: each user got exactly one.

Own schema and Redis prefix, dropped and deleted afterwards (SCAN, never FLUSHALL).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from click.testing import CliRunner
from psycopg import sql

from migrator.cli import main
from queue_runtime import Settings, configure
from queue_runtime.gate import certification
from tests.e2e._queue_env import fast_sandbox
from tests.e2e.test_apply_shop import git, shop_repo
from tests.support import pg_admin_url

JOB = "shop.mail.send_welcome"
USERS = 600

SANDBOX = '''\
"""Load-test sandbox for the shop: queue_runtime from SHOP_SANDBOX_SETTINGS, mail kept in PostgreSQL."""

import os

import psycopg
from psycopg import sql

import shop.app  # noqa: F401  (registers the shop's jobs)
from queue_runtime import Settings, configure
from queue_runtime.gate import complete_in
from shop.services import Services, install
from shop.settings import Settings as ShopSettings

SETTINGS = Settings.model_validate_json(os.environ["SHOP_SANDBOX_SETTINGS"])
RUNTIME = configure(SETTINGS)


class PostgresOutbox(list):
    """Each mail is a row, committed with the job's idempotency key."""

    def append(self, msg):
        insert = sql.SQL("INSERT INTO {}.sandbox_mail (recipient, subject) VALUES (%s, %s)")
        with psycopg.connect(SETTINGS.database_url, application_name="shop-sandbox-mail") as conn:
            conn.execute(
                insert.format(sql.Identifier(SETTINGS.schema_name)), (msg["To"], msg["Subject"])
            )
            complete_in(conn)


install(Services(ShopSettings.from_env(os.environ), outbox=PostgresOutbox()))


def users(i):
    return {"user_id": 1 + i % USERS}
'''.replace("USERS", str(USERS))


# After the certification, in the app's process: rollout async, then an enqueue is queued.
RAISE_TO_ASYNC = """\
import json, time
import shop_sandbox
from queue_runtime.gate import gate_decision, set_rollout
from shop.mail import send_welcome

set_rollout(shop_sandbox.RUNTIME, "shop.mail.send_welcome", "async", who="e2e")
deadline = time.monotonic() + 10
while not gate_decision(shop_sandbox.RUNTIME, send_welcome).run_async:
    assert time.monotonic() < deadline, "the gate did not open"
    time.sleep(0.1)
handle = send_welcome.enqueue(1, idempotency_key="welcome:after-certification")
print(json.dumps({"id": handle.id}))
"""


def cli(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args), env={"COLUMNS": "300"})
    return result.exit_code, result.output


@pytest.fixture
def migrated_shop(tmp_path: Path) -> Path:
    """A shop copy whose welcome mail was moved by ``apply --job``, with users to welcome."""
    root = shop_repo(tmp_path / "shop")
    with (root / "pyproject.toml").open("a", encoding="utf-8") as f:
        f.write(f'\n[tool.migrator.jobs."{JOB}"]\nkey = "welcome:{{user_id}}"\n')
    git(root, "commit", "-qam", "declare the welcome key")
    assert cli("scan", str(root), "--no-cache")[0] == 0
    code, output = cli("apply", str(root), "--job", JOB, "--write")
    assert code == 0, output
    (root / "shop_sandbox.py").write_text(SANDBOX)
    home = tmp_path / "home"
    sys.path.insert(0, str(root))
    try:
        from shop.db import connect, init_db  # the copy's own modules

        init_db(home / "data" / "shop.sqlite3")
        with connect(home / "data" / "shop.sqlite3") as conn:
            conn.executemany(
                "INSERT INTO users (id, email, name) VALUES (?, ?, ?)",
                [(n, f"user{n}@example.com", f"User {n}") for n in range(1, USERS + 1)],
            )
    finally:
        sys.path.remove(str(root))
        for name in [m for m in sys.modules if m == "shop" or m.startswith("shop.")]:
            del sys.modules[name]
    return root


def _mail_table(schema: str) -> None:
    with psycopg.connect(pg_admin_url(), autocommit=True) as conn:
        conn.execute(
            sql.SQL(
                "CREATE TABLE {}.sandbox_mail (id bigserial PRIMARY KEY,"
                " recipient text NOT NULL, subject text NOT NULL)"
            ).format(sql.Identifier(schema))
        )


@pytest.fixture
def sandbox() -> Iterator[Settings]:
    with fast_sandbox("qr_ft", _mail_table) as settings:
        yield settings


def mails(settings: Settings) -> dict[str, int]:
    query = sql.SQL("SELECT recipient, count(*) FROM {}.sandbox_mail GROUP BY recipient").format(
        sql.Identifier(settings.schema_name)
    )
    with psycopg.connect(settings.database_url or "") as conn:
        return {str(a): int(b) for a, b in conn.execute(query).fetchall()}


@pytest.mark.pg
@pytest.mark.redis
@pytest.mark.slow
def test_loadtest_certifies_the_moved_welcome_mail_and_each_mail_goes_out_once(
    migrated_shop: Path, sandbox: Settings, tmp_path: Path
) -> None:
    report_path = tmp_path / "report.json"
    env = {k: v for k, v in os.environ.items() if k != "QUEUE_RUNTIME_MODE"}
    env |= {
        "SHOP_SANDBOX_SETTINGS": sandbox.model_dump_json(by_alias=True),
        "SHOP_HOME": str(tmp_path / "home"),
        "PYTHONPATH": str(migrated_shop),
        "COLUMNS": "200",
    }
    command = [sys.executable, "-c", "from migrator.cli import main; main()", "loadtest", JOB]
    command += [
        "--sandbox", "shop_sandbox", "--args", "shop_sandbox:users",
        "--key", "welcome:{run}-{i}",
        "--rate", "20", "--duration", "6s", "--burst", "3x:1s@2s",
        "--chaos", "kill-workers,redis-restart,pg-terminate",
        "--workers", "2", "--concurrency", "4",
        "--sla-p99-ms", "15000", "--drain-timeout", "40s", "--certify-by", "e2e",
        "--json", str(report_path),
    ]  # fmt: skip
    done = subprocess.run(
        command, cwd=migrated_shop, env=env, capture_output=True, text=True, timeout=150
    )
    output = done.stdout + done.stderr
    assert report_path.exists(), output
    report = json.loads(report_path.read_text())

    assert done.returncode == 0, output
    assert report["passed"] and report["certified"], report["reasons"]
    assert report["duplicate_completions"] == []
    assert report["lost"] == report["unfinished"] == 0
    assert report["succeeded"] == report["enqueued"] > 100
    kinds = {e["kind"] for e in report["chaos_events"]}
    assert "kill-workers" in kinds  # workers were SIGKILLed mid-batch
    sent = mails(sandbox)
    assert sum(sent.values()) == report["enqueued"] <= USERS  # one user per job
    assert all(count == 1 for count in sent.values()), "a welcome mail went out twice"

    runtime = configure(sandbox)
    try:
        cert = certification(runtime, JOB, report["fingerprint"])
        assert cert is not None and cert.certified_by == "e2e"
    finally:
        runtime.close()

    raised = subprocess.run(
        [sys.executable, "-c", RAISE_TO_ASYNC],
        cwd=migrated_shop,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert raised.returncode == 0, raised.stdout + raised.stderr
    assert json.loads(raised.stdout.strip().splitlines()[-1])["id"] > 0  # queued for a worker
