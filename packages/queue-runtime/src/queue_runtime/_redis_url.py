"""Redis URLs: a single node's, checked (:func:`check_node_url`), and a Redis Cluster's.

A single node: ``redis://[[user]:password@]host[:port][/db]``, ``rediss://``
(TLS) or ``unix:///path/to/socket[?db=N]``. The database is a number (redis-py
silently uses database 0 for ``/abc``, so it is refused here); whether the
server has that many databases only the server knows (``RedisDatabaseOutOfRange``
when it answers).

A cluster: ``redis+cluster://`` (or any URL with ``redis_cluster``).

``redis+cluster://[user[:password]@]host:port[,host:port...][/0]`` names seed
nodes of one cluster (``rediss+cluster://`` with TLS); the client discovers
the other nodes, and follows failovers, itself. With ``redis_cluster = true`` a
``redis://`` / ``rediss://`` URL is read the same way. A cluster has database 0
only, and the URL takes no ``?options``. A single-node URL is left to
``redis.Redis.from_url``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import parse_qs, unquote, urlsplit

from queue_runtime.errors import ConfigError

CLUSTER_SCHEMES = {"redis+cluster": False, "rediss+cluster": True}  # scheme -> TLS
_PLAIN_SCHEMES = {"redis": False, "rediss": True}
_NODE_SCHEMES = ("redis", "rediss", "unix")
_EXPECTED = "redis://host:port/db, rediss://host:port/db, unix:///path?db=N or redis+cluster://..."
_DEFAULT_PORT = 6379
_URL = re.compile(
    r"^(?P<scheme>[A-Za-z+]+)://(?P<netloc>[^/?#]*)(?P<path>[^?#]*)(?P<query>\?[^#]*)?(#.*)?$"
)
_NODE = re.compile(r"^(?:\[(?P<ipv6>[0-9A-Fa-f:.]+)\]|(?P<host>[^:\[\]]+))(?::(?P<port>\d+))?$")


@dataclass(frozen=True, slots=True)
class ClusterAddress:
    """Seed nodes and credentials of a Redis Cluster (never printed: it holds the password)."""

    nodes: tuple[tuple[str, int], ...]
    username: str | None
    password: str | None
    tls: bool

    @property
    def seeds(self) -> str:
        """``host:port,...``: what an error message may show."""
        return ",".join(f"{host}:{port}" for host, port in self.nodes)


def is_cluster_url(url: str) -> bool:
    return url.partition("://")[0].lower() in CLUSTER_SCHEMES


def parse_cluster_url(url: str) -> ClusterAddress:
    """The seed nodes of ``url``; ConfigError (one line, what to fix) when it is malformed."""
    found = _URL.match(url.strip())
    schemes = {**CLUSTER_SCHEMES, **_PLAIN_SCHEMES}
    if found is None or found["scheme"].lower() not in schemes:
        raise ConfigError(
            "a Redis Cluster URL looks like redis+cluster://host:port[,host:port...]/"
            f" (got {_scheme_only(url)})"
        )
    if found["path"] not in ("", "/", "/0"):
        raise ConfigError(f"a Redis Cluster has database 0 only (the URL names {found['path']})")
    if found["query"]:
        raise ConfigError("a Redis Cluster URL takes no ?options")
    userinfo, _, hosts = found["netloc"].rpartition("@")
    username, _, password = userinfo.partition(":")
    return ClusterAddress(
        nodes=tuple(_node(part) for part in hosts.split(",")),
        username=unquote(username) or None,
        password=unquote(password) or None,
        tls=schemes[found["scheme"].lower()],
    )


def _node(text: str) -> tuple[str, int]:
    found = _NODE.match(text.strip())
    if found is None:
        raise ConfigError(f"Redis Cluster URL: {text!r} is not host:port")
    port = int(found["port"] or _DEFAULT_PORT)
    if not 0 < port < 65536:
        raise ConfigError(f"Redis Cluster URL: port {port} of {text!r} is out of range")
    return found["ipv6"] or found["host"], port


def _scheme_only(url: str) -> str:
    scheme, sep, _ = url.partition("://")
    return f"{scheme}://..." if sep else "no scheme://"


def check_node_url(url: str) -> None:
    """ConfigError (one line, what to fix) unless ``url`` is a well-formed single-node URL."""
    parts = urlsplit(url.strip())
    if "://" not in url or parts.scheme.lower() not in _NODE_SCHEMES:
        what = f"scheme {_scheme_only(url)}" if "://" in url else "no scheme://"
        raise ConfigError(f"the URL has {what}; expected {_EXPECTED}")
    try:
        parts.port  # noqa: B018 - urlsplit checks the port only when it is read
    except ValueError:
        nodes = parts.netloc.rpartition("@")[2]  # never the password
        raise ConfigError(f"{nodes!r} is not host:port with a port from 1 to 65535") from None
    if parts.scheme.lower() == "unix":
        _check_database(parse_qs(parts.query).get("db", ["0"])[-1])
    else:
        _check_database(parts.path.removeprefix("/") or "0")
        if "db" in parse_qs(parts.query):
            _check_database(parse_qs(parts.query)["db"][-1])


def _check_database(text: str) -> None:
    if not text.isdigit():
        raise ConfigError(f"database {text!r} is not a number (e.g. /0)")
