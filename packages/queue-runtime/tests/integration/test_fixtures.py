"""The shared fixtures do what they promise: isolation and clean-up."""

from __future__ import annotations

import psycopg
import pytest

from tests.support import require, services_required


def test_pg_dsn_is_a_private_database(pg_dsn: str) -> None:
    with psycopg.connect(pg_dsn) as conn:
        name = conn.execute("SELECT current_database()").fetchone()
    assert name is not None and name[0].startswith("qr_test_")


def test_private_redis_can_be_flushed_and_restarted(private_redis) -> None:
    client = private_redis.client()
    client.set("k", "v")
    client.flushall()
    assert client.get("k") is None
    client.close()
    old_pid = private_redis.pid
    private_redis.restart()
    assert private_redis.pid != old_pid
    with private_redis.client() as fresh:
        assert fresh.ping()


def test_missing_server_skips_or_fails_as_configured() -> None:
    outcome = pytest.fail.Exception if services_required() else pytest.skip.Exception
    with pytest.raises(outcome, match="unreachable"):
        require("Test server unreachable at nowhere")
