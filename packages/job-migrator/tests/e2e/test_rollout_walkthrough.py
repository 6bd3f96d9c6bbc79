"""docs/rollout.md, walked from top to bottom on a fresh clone: every ``bash`` and ``python`` block.

The blocks are read from the Markdown (never copied here) and run, in the
order they stand, as one bash script (``set -euo pipefail``: a failing
command fails the walk; a ``python`` block is fed to ``python -`` where it
stands) from the root of a fresh git repository holding ``examples/shop``
under the repository's root ``pyproject.toml`` (whose pytest settings turn
queue_runtime's plugin off, as in a clone), with ``DATABASE_URL`` a database
of the test's own and ``REDIS_URL`` the test Redis. Afterwards the runtime's
tables say what the walkthrough says they would: the shop's own tests, run
from ``examples/shop``, passed and left the app's queue empty; the receipt
certified by step 5's load test (with the shop's own sandbox,
``shop/loadtest_settings.py``) into the app's schema, never the sandbox's,
and ``gate status`` saying so; the rollout of the receipt rolled back by bob,
the thumbnail's unset, every change in the audit; step 8's unsafe refund
refused by ``apply --job`` while its sign-off line was blank (that apply wrote
nothing: the sign-off's commit changes the plan alone), moved once a name and
a date were on it, and held inline by the gate. Then the worker command of
step 0, as the doc writes it, runs the moved periodic job without a dead
letter.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from migrator.plan import recorded_signoffs
from queue_runtime.testing import delete_redis_prefix, fresh_database, redis_test_url, unique_name

pytestmark = [pytest.mark.pg, pytest.mark.redis, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[4]
ROLLOUT_MD = REPO / "docs" / "rollout.md"
IGNORE = shutil.ignore_patterns(
    ".migrator", "__pycache__", "*.egg-info", "build", "data", "media", ".pytest_cache", ".sandbox"
)
RECEIPT = "shop.mail.send_receipt"
REFUND = "shop.payments.refund_payment"
BLOCK = re.compile(r"^```(bash|python)\n(.*?)^```", re.MULTILINE | re.DOTALL)
WORKER = re.compile(r"^```console\n\$ (queue-runtime worker .*?)\n```", re.MULTILINE)
PERIODIC = "shop.jobs.cache.warm_all_product_caches"
APP_TABLES = ("jobs", "job_history", "job_keys")
GIT_ID = {
    "GIT_AUTHOR_NAME": "Dev",
    "GIT_AUTHOR_EMAIL": "dev@example.com",
    "GIT_COMMITTER_NAME": "Dev",
    "GIT_COMMITTER_EMAIL": "dev@example.com",
}


def walkthrough() -> str:
    """The doc's runnable blocks as one bash script, in their order (python ones through stdin)."""
    blocks = BLOCK.findall(ROLLOUT_MD.read_text(encoding="utf-8"))
    assert len([b for kind, b in blocks if kind == "bash"]) >= 10, "rollout.md lost its steps"
    assert [kind for kind, _ in blocks].count("python") == 1, "rollout.md's From Python block"
    script = [
        body if kind == "bash" else f"python - <<'PYTHON'\n{body}PYTHON\n" for kind, body in blocks
    ]
    return "set -euo pipefail\n" + "\n".join(script)


def worker_command() -> list[str]:
    """Step 0's worker command, as the doc writes it."""
    found = WORKER.findall(ROLLOUT_MD.read_text(encoding="utf-8"))
    assert len(found) == 1, "rollout.md should show one worker command"
    return shlex.split(found[0])


def fresh_clone(dest: Path) -> Path:
    shutil.copytree(REPO / "examples" / "shop", dest / "examples" / "shop", ignore=IGNORE)
    shutil.copy(REPO / ".gitignore", dest / ".gitignore")
    shutil.copy(REPO / "pyproject.toml", dest / "pyproject.toml")
    with (dest / ".gitignore").open("a") as ignore:
        ignore.write("\n.migrator/\n__pycache__/\ndata/\nmedia/\n")
    for args in (["init", "-q", "-b", "main"], ["add", "."], ["commit", "-qm", "clone"]):
        subprocess.run(["git", *args], cwd=dest, check=True, env={**os.environ, **GIT_ID})
    return dest


@pytest.fixture
def database() -> Iterator[str]:
    with fresh_database() as url:
        yield url


@pytest.fixture
def sandbox_prefix() -> Iterator[str]:
    """The Redis prefix of the shop's load-test sandbox for this run (its keys deleted after)."""
    prefix = f"shop-sandbox-{unique_name()}"
    try:
        yield prefix
    finally:
        delete_redis_prefix(redis_test_url(), prefix)


def gate_lines(output: str, job: str = RECEIPT, kind: str = "non_idempotent") -> list[list[str]]:
    """The cells of every ``gate status`` row of ``job`` (of class ``kind``), in the order printed."""
    rows = [[cell.strip() for cell in line.split("│")[1:-1]] for line in output.splitlines()]
    return [row for row in rows if row[:2] == [job, kind]]


def git(root: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=root, check=True, capture_output=True, text=True
    ).stdout


# The walk takes 2 to 5 minutes (a 20 s load test with chaos, two dozen CLI runs, the shop's
# suite): more than the run's default of 300 s on a loaded machine.
@pytest.mark.timeout(1200)
def test_the_rollout_walkthrough_works_as_written(
    tmp_path: Path, database: str, sandbox_prefix: str
) -> None:
    root = fresh_clone(tmp_path / "clone")
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("QUEUE_RUNTIME_", "SHOP_"))}
    env = {
        **clean,
        **GIT_ID,
        "DATABASE_URL": database,
        "REDIS_URL": redis_test_url(),
        "SHOP_SANDBOX_REDIS_PREFIX": sandbox_prefix,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{clean.get('PATH', '')}",
        "COLUMNS": "200",
    }
    walked = subprocess.run(
        ["bash", "-c", walkthrough()],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert walked.returncode == 0, walked.stdout[-6000:] + walked.stderr[-4000:]
    assert "shop.mail.send_receipt" in walked.stdout  # gate status and rollout status name it
    output = walked.stdout + walked.stderr
    # step 4: the shop's own tests, run from examples/shop, passed (and stayed off the queue)
    tests_ran = re.search(r"^(\d+) passed\b", walked.stdout, re.MULTILINE)
    assert tests_ran and int(tests_ran.group(1)) >= 20, walked.stdout[-6000:]
    assert app_rows(database) == dict.fromkeys(APP_TABLES, 0)
    # step 4: the gate closed; step 5: the load test certified into the app's own schema
    # (step 8's gate status shows it again: certified, rolled back inline by step 7)
    status = gate_lines(walked.stdout)
    assert [row[3] for row in status] == ["no", "yes", "yes"], walked.stdout[-6000:]
    assert status[1][-1] == "async" and status[1][4].startswith("alice ")
    assert "PASSED" in output and "(the app's settings)" in output
    assert re.search(r"certified into \S+/queue_runtime \(the app's settings\)", output)
    with psycopg.connect(database) as conn:
        certified = conn.execute(
            "SELECT job, certified_by, report IS NOT NULL FROM queue_runtime.certifications"
        ).fetchall()
        in_sandbox = conn.execute("SELECT count(*) FROM shop_sandbox.certifications").fetchone()
        stored = conn.execute(
            "SELECT job, mode, updated_by FROM queue_runtime.rollouts ORDER BY job"
        ).fetchall()
        audit = conn.execute(
            "SELECT job, to_mode, changed_by, cause FROM queue_runtime.rollout_changes ORDER BY id"
        ).fetchall()
    # the load test's, the one recorded by hand from its report, the one From Python recorded
    assert certified == [(RECEIPT, "alice", True)] * 3
    assert in_sandbox == (0,)
    assert stored == [("shop.mail.send_receipt", "inline", "bob")]
    assert audit == [
        ("shop.images.make_thumbnail", "percent", "alice", "set"),
        ("shop.mail.send_receipt", "inline", "alice", "set"),
        ("shop.mail.send_receipt", "percent", "alice", "set"),
        ("shop.mail.send_receipt", "async", "alice", "set"),
        ("shop.mail.send_receipt", "inline", "bob", "set"),
        ("shop.images.make_thumbnail", None, "bob", "unset"),
        # From Python: 25%, then the rollback
        ("shop.mail.send_receipt", "percent", "alice", "set"),
        ("shop.mail.send_receipt", "inline", "bob", "set"),
    ]
    assert "rollout: 25%" in walked.stdout  # the snippet's printed gate decision
    assert_unsafe_job_moved_only_once_signed(root, walked.stdout)
    # step 0's worker, as written: the periodic job step 3 moved runs, nothing dead-letters
    finished = run_worker_until_periodic_ran(root / "examples" / "shop", env, database)
    assert finished == [(PERIODIC, "succeeded", None)]


def assert_unsafe_job_moved_only_once_signed(root: Path, stdout: str) -> None:
    """Step 8: ``apply --job`` refused the refund, wrote nothing, then moved it once signed."""
    said = " ".join(stdout.split())  # rich wraps long lines at the terminal's width
    refused = said.find(
        f"not moved: {REFUND}: job is unsafe: no sign-off recorded for it in MIGRATION_PLAN.md"
    )
    moved = said.find(f"jobs moved: {REFUND};")
    assert 0 <= refused < moved, stdout[-6000:]
    assert re.search(r"examples/shop/shop/routes/orders\.py \| +\d+ ", stdout)  # git diff --stat
    shop = root / "examples" / "shop"
    # the line the doc's edit signed is one `apply` reads as a sign-off
    signed = recorded_signoffs((shop / "MIGRATION_PLAN.md").read_text(encoding="utf-8"))
    assert list(signed) == [REFUND], signed
    # the refused apply wrote nothing: the commit that signed changes the plan alone (its
    # `commit -a` would have taken a rewritten file along); the move is a later commit
    [signing] = git(root, "log", "--format=%H", "-S", signed[REFUND]).split()
    assert git(root, "show", "--format=", "--name-only", signing).split() == [
        "examples/shop/MIGRATION_PLAN.md"
    ]
    # a BackgroundTasks site is handed the enqueue: queued after the response, inline there
    site = (
        "background_tasks.add_task(refund_payment.enqueue, order_id, body.amount_cents,"
        ' idempotency_key=f"refund:{uuid4().hex}")'
    )
    assert site in (shop / "shop" / "routes" / "orders.py").read_text(encoding="utf-8")
    [moving] = git(root, "log", "--format=%H", "-S", site).split()
    assert git(root, "rev-list", f"{signing}..{moving}").split(), "moved before it was signed"
    # merged, it changes nothing yet: the gate runs the uncertified unsafe job inline
    [row] = gate_lines(stdout, REFUND, "unsafe")
    assert (row[3], row[-1]) == ("no", "inline (gate closed)"), row


def app_rows(database: str) -> dict[str, int]:
    """Rows in the app's own queue (schema ``queue_runtime``): jobs, history, keys."""
    with psycopg.connect(database) as conn:
        return {
            table: int(
                (conn.execute(f"SELECT count(*) FROM queue_runtime.{table}").fetchone() or (0,))[0]
            )
            for table in APP_TABLES
        }


def run_worker_until_periodic_ran(
    shop: Path, env: dict[str, str], database: str
) -> list[tuple[str, str, str | None]]:
    """Start step 0's worker in ``shop``; what the app's queue finished once the periodic job ran."""
    log = shop / "worker.log"
    with log.open("wb") as out:
        worker = subprocess.Popen(
            worker_command(), cwd=shop, env=env, stdout=out, stderr=subprocess.STDOUT
        )
    query = "SELECT name, status::text, error FROM queue_runtime.job_history ORDER BY id"
    try:
        deadline = time.monotonic() + 120
        while True:
            with psycopg.connect(database) as conn:
                rows = [(str(n), str(s), e) for n, s, e in conn.execute(query).fetchall()]
            if any(name == PERIODIC for name, _, _ in rows):
                return rows
            assert worker.poll() is None, f"the worker exited:\n{log.read_text()[-3000:]}"
            assert time.monotonic() < deadline, (
                f"no periodic run in 120 s:\n{log.read_text()[-3000:]}"
            )
            time.sleep(0.2)
    finally:
        if worker.poll() is None:
            worker.send_signal(signal.SIGTERM)
        try:
            worker.wait(timeout=30)
        except subprocess.TimeoutExpired:
            worker.kill()
            worker.wait(timeout=10)
