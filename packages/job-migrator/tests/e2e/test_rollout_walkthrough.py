"""docs/rollout.md, walked from top to bottom on a fresh clone: every ``bash`` block, in order.

The blocks run as one bash script (``set -euo pipefail``: a failing command
fails the walk) from the root of a fresh git repository holding
``examples/shop``, with ``DATABASE_URL`` a database of the test's own and
``REDIS_URL`` the test Redis. Afterwards the runtime's tables say what the
walkthrough says they would: the receipt certified by step 5's load test (with
the shop's own sandbox, ``shop/loadtest_settings.py``) into the app's schema,
never the sandbox's, and ``gate status`` saying so; the rollout of the receipt
rolled back by bob, the thumbnail's unset, every change in the audit.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from queue_runtime.testing import delete_redis_prefix, fresh_database, redis_test_url, unique_name

pytestmark = [pytest.mark.pg, pytest.mark.redis, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[4]
ROLLOUT_MD = REPO / "docs" / "rollout.md"
IGNORE = shutil.ignore_patterns(
    ".migrator", "__pycache__", "*.egg-info", "build", "data", "media", ".pytest_cache", ".sandbox"
)
RECEIPT = "shop.mail.send_receipt"
BLOCK = re.compile(r"^```bash\n(.*?)^```", re.MULTILINE | re.DOTALL)
GIT_ID = {
    "GIT_AUTHOR_NAME": "Dev",
    "GIT_AUTHOR_EMAIL": "dev@example.com",
    "GIT_COMMITTER_NAME": "Dev",
    "GIT_COMMITTER_EMAIL": "dev@example.com",
}


def walkthrough() -> str:
    blocks = BLOCK.findall(ROLLOUT_MD.read_text(encoding="utf-8"))
    assert len(blocks) >= 10, "docs/rollout.md lost its runnable steps"
    return "set -euo pipefail\n" + "\n".join(blocks)


def fresh_clone(dest: Path) -> Path:
    shutil.copytree(REPO / "examples" / "shop", dest / "examples" / "shop", ignore=IGNORE)
    shutil.copy(REPO / ".gitignore", dest / ".gitignore")
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


def gate_lines(output: str) -> list[list[str]]:
    """The cells of every ``gate status`` row of the receipt, in the order printed."""
    rows = [[cell.strip() for cell in line.split("│")[1:-1]] for line in output.splitlines()]
    return [row for row in rows if row[:2] == [RECEIPT, "non_idempotent"]]


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
    # step 4: the gate closed; step 5: the load test certified into the app's own schema
    status = gate_lines(walked.stdout)
    assert [row[3] for row in status] == ["no", "yes"], walked.stdout[-6000:]
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
    # the load test's, then the one recorded by hand from its report
    assert certified == [(RECEIPT, "alice", True), (RECEIPT, "alice", True)]
    assert in_sandbox == (0,)
    assert stored == [("shop.mail.send_receipt", "inline", "bob")]
    assert audit == [
        ("shop.images.make_thumbnail", "percent", "alice", "set"),
        ("shop.mail.send_receipt", "inline", "alice", "set"),
        ("shop.mail.send_receipt", "percent", "alice", "set"),
        ("shop.mail.send_receipt", "async", "alice", "set"),
        ("shop.mail.send_receipt", "inline", "bob", "set"),
        ("shop.images.make_thumbnail", None, "bob", "unset"),
    ]
