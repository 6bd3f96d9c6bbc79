"""bench/dashboard_bench.py end to end, tiny: every page answers 200, the figures are written,
the bench's database is gone afterwards.

Speed is not judged here (``--limit-ms`` is huge): the bench itself does that, at 1M jobs.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest

from tests.support import pg_admin_url

pytestmark = [pytest.mark.pg, pytest.mark.redis, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]


def test_the_bench_times_every_page_and_cleans_up(tmp_path: Path) -> None:
    pytest.importorskip("jinja2", reason="the dashboard's web extra is not installed")
    out = tmp_path / "figures.json"
    argv = [sys.executable, "bench/dashboard_bench.py", "--history=3000", "--queued=300"]
    argv += ["--requests=20", "--warmup=1", "--limit-ms=100000", f"--json={out}"]
    proc = subprocess.run(argv, cwd=REPO, capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    report = json.loads(out.read_text())
    pages = {p["page"]: p for p in report["pages"]}
    assert {"overview", "jobs", "job (dead)", "dead", "migration", "workers", "periodic"} <= set(
        pages
    )
    assert all(p["requests"] == 20 and p["median_ms"] <= p["p95_ms"] for p in pages.values())
    assert report["conditions"]["history"] == 3000
    with psycopg.connect(pg_admin_url()) as conn:
        left = conn.execute(
            "SELECT datname FROM pg_database WHERE datname LIKE 'bench_dashboard_%%'"
        ).fetchall()
    mine = [name for (name,) in left if name.endswith(f"_{_bench_pid(proc.stdout)}")]
    assert mine == []


def _bench_pid(stdout: str) -> str:
    for line in stdout.splitlines():
        if line.startswith("database: "):
            return line.split()[1].rsplit("_", 1)[-1]
    raise AssertionError(f"the bench did not name its database:\n{stdout[-2000:]}")
