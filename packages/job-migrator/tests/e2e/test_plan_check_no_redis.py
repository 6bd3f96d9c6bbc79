"""``migrator plan --check`` on a project that configures no Redis (issue 22, item 12).

The runtime's built-in ``redis_url`` is ``redis://127.0.0.1:6379/0``: a round
trip there proves that this machine runs a Redis, not that the project's
workers will lease through one. "Leasing on" is ticked only for a Redis the
project names (``[tool.queue_runtime] redis_url``, ``QUEUE_RUNTIME_REDIS_URL``
or ``--redis-url``), checked with a real round trip on the shared Redis.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
from click.testing import CliRunner

from migrator.cli import main
from migrator.plan import parse_markdown
from queue_runtime.testing import redis_test_url

pytestmark = [pytest.mark.redis]

APP = """\
import threading


def send_report(day):
    print(day)


def view(day):
    threading.Thread(target=send_report, args=(day,)).start()
"""
NO_REDIS_ENV = {"QUEUE_RUNTIME_REDIS_URL": None, "QUEUE_RUNTIME_DATABASE_URL": None}


@pytest.fixture
def project(tmp_path: Path, require_redis: None) -> Iterator[Path]:
    """A scanned one-module project; its Redis prefix is its own (deleted afterwards)."""
    prefix = f"qr_plan_{secrets.token_hex(4)}"
    (tmp_path / "app.py").write_text(APP)
    (tmp_path / "pyproject.toml").write_text(
        f'[project]\nname = "app"\n\n[tool.queue_runtime]\nredis_prefix = "{prefix}"\n'
    )
    code, output = cli("scan", str(tmp_path))
    assert code in (0, 1), output
    yield tmp_path
    client = redis.Redis.from_url(redis_test_url())
    try:
        leftovers = list(client.scan_iter(match=f"{prefix}:*", count=500))
        if leftovers:
            client.delete(*leftovers)
    finally:
        client.close()
    assert not leftovers, f"--check left Redis keys behind: {leftovers}"


def cli(*args: str, env: dict[str, str | None] | None = None) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args), env={"COLUMNS": "250", **(env or NO_REDIS_ENV)})
    return result.exit_code, result.output


def leasing(root: Path) -> tuple[str, str]:
    """The "Leasing on" box of the written plan and its evidence."""
    text = (root / "MIGRATION_PLAN.md").read_text()
    line = next(x for x in text.splitlines() if "<!-- plan:prereq/leases -->" in x)
    return line.split("- [", 1)[1][0], parse_markdown(text).evidence["prereq/leases"]


def test_no_redis_configured_is_not_leasing_on(project: Path) -> None:
    code, output = cli("plan", str(project), "--check")
    assert code == 1, output
    box, evidence = leasing(project)
    assert box == " ", evidence
    assert "no Redis configured" in evidence and "redis_url" in evidence


def test_a_redis_the_project_names_is_checked_for_real(project: Path) -> None:
    named = {**NO_REDIS_ENV, "QUEUE_RUNTIME_REDIS_URL": redis_test_url()}
    cli("plan", str(project), "--check", env=named)
    assert leasing(project)[0] == "x"
    cli("plan", str(project), "--check", "--redis-url", redis_test_url())
    box, evidence = leasing(project)
    assert box == "x" and "round trip" in evidence
    table = (project / "pyproject.toml").read_text()
    (project / "pyproject.toml").write_text(table + f'redis_url = "{redis_test_url()}"\n')
    cli("plan", str(project), "--check")
    assert leasing(project)[0] == "x"
