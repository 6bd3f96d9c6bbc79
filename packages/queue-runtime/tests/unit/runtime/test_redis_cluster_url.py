"""Redis Cluster URLs: seeds, credentials, TLS; malformed ones fail in Settings, in one line."""

from __future__ import annotations

import re

import pytest
from pydantic import ValidationError

from queue_runtime._redis_url import ClusterAddress, is_cluster_url, parse_cluster_url
from queue_runtime.config import Settings
from queue_runtime.errors import ConfigError


def test_seed_nodes_credentials_and_tls() -> None:
    assert parse_cluster_url("redis+cluster://10.0.0.1:7000,10.0.0.2:7001/") == ClusterAddress(
        nodes=(("10.0.0.1", 7000), ("10.0.0.2", 7001)), username=None, password=None, tls=False
    )
    found = parse_cluster_url("rediss+cluster://app:p%40ss@redis-a,[::1]:7002/0")
    assert found.nodes == (("redis-a", 6379), ("::1", 7002))
    assert (found.username, found.password, found.tls) == ("app", "p@ss", True)
    assert parse_cluster_url("redis://:secret@h:7000").password == "secret"  # redis_cluster = true
    assert found.seeds == "redis-a:6379,::1:7002"  # no password in what errors show


def test_cluster_schemes_are_recognised() -> None:
    assert is_cluster_url("redis+cluster://h:1/") and is_cluster_url("REDISS+CLUSTER://h:1")
    assert not is_cluster_url("redis://h:1/0") and not is_cluster_url("unix:///tmp/r.sock")


@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("redis+cluster://h:1/3", "database 0 only"),
        ("redis+cluster://h:1/?ssl_cert_reqs=none", "no ?options"),
        ("redis+cluster://h:1,,h:2/", "'' is not host:port"),
        ("redis+cluster://h:99999/", "out of range"),
        ("redis+cluster://h:port/", "'h:port' is not host:port"),
        ("unix+cluster:///tmp/r.sock", "looks like redis+cluster://"),
    ],
)
def test_malformed_urls_say_what_to_fix(url: str, says: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(says)):
        parse_cluster_url(url)


def test_settings_refuse_a_malformed_cluster_url_at_once() -> None:
    assert Settings(redis_url="redis+cluster://h:7000,h:7001/").redis_url
    with pytest.raises(ValidationError, match="database 0 only"):
        Settings(redis_url="redis://h:7000/2", redis_cluster=True)
    with pytest.raises(ValidationError, match="no braces"):
        Settings(redis_url="redis+cluster://h:7000/", redis_prefix="{qr}")
    assert Settings(redis_url="redis://h:7000/2").redis_url  # a single node: database 2 is fine
