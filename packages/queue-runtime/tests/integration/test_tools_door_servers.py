"""``queue_runtime.tools`` on the real servers: what ``migrator plan --check`` and the load test read."""

from __future__ import annotations

import pytest
import redis

from queue_runtime.config import RolloutMode, Settings
from queue_runtime.errors import StoreError
from queue_runtime.store import GateStore
from queue_runtime.testing import redis_test_url
from queue_runtime.tools import lease_round_trip, read_only


def test_a_lease_round_trip_on_the_configured_redis_leaves_no_key(
    settings: Settings, redis_client: redis.Redis
) -> None:
    configured = settings.model_copy(update={"redis_url": redis_test_url()})
    trip = lease_round_trip(configured, "plan-check-t1", "migrator-plan-check", ttl=5.0)
    assert (trip.acquired, trip.alive, trip.after_release, trip.ok) == (
        [True],
        [True],
        [False],
        True,
    )
    assert redis_client.exists(f"{{{configured.redis_prefix}}}:lease:plan-check-t1") == 0


def test_read_only_stores_read_the_schema_and_refuse_to_write(settings: Settings) -> None:
    from alembic.script import ScriptDirectory

    from queue_runtime import migrations

    stores = read_only(settings, timeout=5.0)
    heads = ScriptDirectory(migrations.__path__[0]).get_heads()
    assert stores.inspector.revisions() == list(heads)
    assert stores.inspector.missing(["job_history", "no_such_table"]) == ["no_such_table"]
    assert stores.inspector.dead_count() == 0
    gate: GateStore = stores.gate
    assert gate.rollouts() == []
    with pytest.raises(StoreError):
        gate.upsert_rollout("app.jobs.pay", RolloutMode.ASYNC, 100, "test")
