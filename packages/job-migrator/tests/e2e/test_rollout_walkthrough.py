"""docs/rollout.md, walked from top to bottom on a fresh clone: every ``bash`` block, in order.

The blocks run as one bash script (``set -euo pipefail``: a failing command
fails the walk) from the root of a fresh git repository holding
``examples/shop``, with ``DATABASE_URL`` a database of the test's own and
``REDIS_URL`` the test Redis. Afterwards the runtime's tables say what the
walkthrough says they would: the rollout of the receipt rolled back by bob,
the thumbnail's unset, every change in the audit.
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

from queue_runtime.testing import fresh_database, redis_test_url

pytestmark = [pytest.mark.pg, pytest.mark.redis, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[4]
ROLLOUT_MD = REPO / "docs" / "rollout.md"
IGNORE = shutil.ignore_patterns(
    ".migrator", "__pycache__", "*.egg-info", "build", "data", "media", ".pytest_cache"
)
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


def test_the_rollout_walkthrough_works_as_written(tmp_path: Path, database: str) -> None:
    root = fresh_clone(tmp_path / "clone")
    clean = {k: v for k, v in os.environ.items() if not k.startswith("QUEUE_RUNTIME_")}
    env = {
        **clean,
        **GIT_ID,
        "DATABASE_URL": database,
        "REDIS_URL": redis_test_url(),
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
    with psycopg.connect(database) as conn:
        stored = conn.execute(
            "SELECT job, mode, updated_by FROM queue_runtime.rollouts ORDER BY job"
        ).fetchall()
        audit = conn.execute(
            "SELECT job, to_mode, changed_by, cause FROM queue_runtime.rollout_changes ORDER BY id"
        ).fetchall()
    assert stored == [("shop.mail.send_receipt", "inline", "bob")]
    assert audit == [
        ("shop.images.make_thumbnail", "percent", "alice", "set"),
        ("shop.mail.send_receipt", "inline", "alice", "set"),
        ("shop.mail.send_receipt", "percent", "alice", "set"),
        ("shop.mail.send_receipt", "async", "alice", "set"),
        ("shop.mail.send_receipt", "inline", "bob", "set"),
        ("shop.images.make_thumbnail", None, "bob", "unset"),
    ]
