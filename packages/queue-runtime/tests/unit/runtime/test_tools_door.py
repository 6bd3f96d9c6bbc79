"""``queue_runtime.tools``, the tools' door into the runtime, is exactly what it promises."""

from __future__ import annotations

import pytest

from queue_runtime import tools
from queue_runtime.config import Settings
from queue_runtime.errors import LeasesUnavailable, NotConfigured


def test_all_is_exactly_the_door() -> None:
    assert sorted(tools.__all__) == ["LeaseRoundTrip", "ReadOnly", "lease_round_trip", "read_only"]
    defined = {
        name
        for name, value in vars(tools).items()
        if not name.startswith("_") and getattr(value, "__module__", None) == tools.__name__
    }
    assert defined <= set(tools.__all__)  # nothing public is defined outside __all__
    assert all(hasattr(tools, name) for name in tools.__all__)


def test_the_door_needs_the_servers_it_reads() -> None:
    with pytest.raises(NotConfigured):
        tools.read_only(Settings(database_url=None), timeout=1.0)
    with pytest.raises(LeasesUnavailable, match="no redis_url configured"):
        tools.lease_round_trip(Settings(redis_url=None), "t", "w", ttl=1.0)


def test_a_round_trip_is_ok_only_when_taken_alive_then_released() -> None:
    assert tools.LeaseRoundTrip([True], [True], [False]).ok
    assert not tools.LeaseRoundTrip([False], [False], [False]).ok
    assert not tools.LeaseRoundTrip([True], [True], [True]).ok  # the release did not take
