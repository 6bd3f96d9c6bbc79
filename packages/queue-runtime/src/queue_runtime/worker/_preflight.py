"""What a worker checks before it serves: a worker that cannot work fails at once.

``Worker.run`` (the CLI's ``queue-runtime worker`` and an embedding program
alike) raises, before any thread starts:

- :class:`ConfigError` for a pool the settings do not configure (already when
  the ``Worker`` is built);
- :class:`NotConfigured`, :class:`BadDatabaseUrl`, :class:`DatabaseMissing` or
  :class:`StoreUnavailable` when PostgreSQL does not answer for these settings;
- :class:`BadRedisUrl` for a malformed Redis URL (already when the settings
  are read) or a database the server does not have
  (:class:`RedisDatabaseOutOfRange`), :class:`LeasesUnavailable` when Redis
  does not answer: without it no lease can be taken, so the worker would only
  idle;
- :class:`SchemaNotMigrated` when the queue schema is older than this code's
  migrations (``queue-runtime migrate`` not run after an upgrade): such a
  worker would claim jobs and then fail on the tables it expects (the
  periodic switches of 0009, for one). A schema at a revision this code does
  not ship (a newer release migrated it, a rolling deploy) is served.

Each message is one line that says what to check. Once serving, an outage is
ridden out instead (claims pause while Redis is down; PostgreSQL errors are
retried with back-off).
"""

from __future__ import annotations

from collections.abc import Sequence

from queue_runtime.errors import ConfigError, LeasesUnavailable, SchemaNotMigrated
from queue_runtime.migrations import behind
from queue_runtime.pg.connect import probe
from queue_runtime.runtime import Runtime


def preflight(runtime: Runtime, pools: Sequence[str]) -> None:
    check_pools(runtime, pools)
    probe(runtime.settings)
    check_schema(runtime)
    check_redis(runtime)


def check_schema(runtime: Runtime) -> None:
    why = behind(runtime.inspector.revisions())
    if why is not None:
        schema = runtime.settings.schema_name
        raise SchemaNotMigrated(f"schema `{schema}` {why}")


def check_pools(runtime: Runtime, pools: Sequence[str]) -> None:
    configured = sorted(runtime.settings.pools)
    unknown = sorted(set(pools) - set(configured))
    if unknown:
        names = ", ".join(unknown)
        raise ConfigError(f"unknown pool(s) {names}; configured pools: {', '.join(configured)}")


def check_redis(runtime: Runtime) -> None:
    try:
        runtime.leases.ping()
    except ValueError as exc:  # redis-py's answer to a malformed URL
        raise ConfigError(f"redis_url: {exc}; expected redis://host:port/db") from exc
    except LeasesUnavailable as exc:  # RedisDatabaseOutOfRange too: the same class again
        url = runtime.settings.redis_url or ""
        raise type(exc)(f"{_redis_where(url)}: {exc.detail}") from exc


def _redis_where(url: str) -> str:
    """host:port/db, without the credentials a URL may carry."""
    return url.rpartition("@")[2] if "@" in url else url
