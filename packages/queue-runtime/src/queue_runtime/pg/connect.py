"""Connections to PostgreSQL: one psycopg_pool per Runtime, created lazily.

Pooled connections are autocommit: a single-statement operation (enqueue,
claim, complete_many) is its own transaction, one round trip. Multi-statement
operations open an explicit transaction. Statements are prepared by psycopg
after their first use (``prepare_threshold=1``): the hot queries run many times.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any, Protocol

import psycopg
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict
from psycopg_pool import ConnectionPool, PoolTimeout

from queue_runtime.config import Settings
from queue_runtime.errors import BadDatabaseUrl, DatabaseMissing, NotConfigured, StoreUnavailable
from queue_runtime.pg._errors import translated

Conn = psycopg.Connection[Any]

CONNECTION_KWARGS: dict[str, Any] = {"autocommit": True, "prepare_threshold": 1}
# Seconds to wait for a pooled connection (and for the first one at open): an
# app enqueueing while PostgreSQL is down gets an error, not a hung request.
POOL_TIMEOUT = 10.0


# Seconds a command-line tool waits for PostgreSQL to answer its first connection
# (``probe``): a wrong port or host fails in about this long, not after POOL_TIMEOUT.
PROBE_TIMEOUT = 2.0


def checked_url(url: str) -> str:
    """``url`` as psycopg takes it (an SQLAlchemy ``postgresql+psycopg://`` prefix dropped),
    parsed once: a malformed URL raises :class:`BadDatabaseUrl` at once, before any pool waits."""
    plain = url.replace("postgresql+psycopg://", "postgresql://", 1)
    try:
        info = conninfo_to_dict(plain)
    except psycopg.ProgrammingError as exc:
        raise BadDatabaseUrl(f"{_redacted(url)}: {_one_line(exc)}") from exc
    # libpq reads the port only when it connects, and calls a bad one a failed connection.
    for port in str(info.get("port") or "").split(","):
        if port and not (port.isdigit() and 0 < int(port) < 65536):
            raise BadDatabaseUrl(f"{_redacted(url)}: port {port!r} is not a number 1-65535")
    return plain


def probe(settings: Settings, timeout: float = PROBE_TIMEOUT) -> None:
    """Connect once, within ``timeout`` seconds, to check PostgreSQL answers for these settings.

    Raises NotConfigured, BadDatabaseUrl, DatabaseMissing (the server has no such
    database) or StoreUnavailable (refused, unresolvable host, authentication) with
    the server's reason in one line.
    """
    if not settings.database_url:
        raise NotConfigured()
    url = checked_url(settings.database_url)
    try:
        psycopg.connect(url, connect_timeout=max(1, round(timeout))).close()
    except psycopg.OperationalError as exc:
        reason = _one_line(exc)
        where = _where(url)
        if "does not exist" in reason and "database" in reason:
            raise DatabaseMissing(f"{where}: {reason}") from exc
        raise StoreUnavailable(f"{where}: {reason}") from exc


def _where(url: str) -> str:
    info = conninfo_to_dict(url)
    host, port = info.get("host") or "localhost", info.get("port") or "5432"
    return f"{host}:{port}/{info.get('dbname') or info.get('user') or ''}"


def _redacted(url: str) -> str:
    """The URL without a password (``user:secret@`` becomes ``user:***@``)."""
    head, at, tail = url.rpartition("@")
    if not at or "://" not in head:
        return url
    scheme, _, credentials = head.partition("://")
    user, colon, _ = credentials.partition(":")
    return f"{scheme}://{user}{':***' if colon else ''}@{tail}"


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())


def open_pool(settings: Settings, max_size: int = 10, **connect: Any) -> ConnectionPool:
    """A started pool for ``settings.database_url`` (raises NotConfigured without one,
    BadDatabaseUrl at once for a malformed one); ``connect`` adds connection parameters
    (``options="-c jit=off"`` sets a server setting once per connection, no round trip)."""
    if not settings.database_url:
        raise NotConfigured()
    pool = ConnectionPool(
        checked_url(settings.database_url),
        min_size=1,
        max_size=max_size,
        kwargs={**CONNECTION_KWARGS, **connect},
        open=False,
        timeout=POOL_TIMEOUT,
        name=f"queue_runtime.{settings.schema_name}",
    )
    try:
        pool.open(wait=True, timeout=POOL_TIMEOUT)
    except PoolTimeout:
        pool.close()  # stop its reconnecting threads; the next use tries again
        raise
    return pool


def connect(settings: Settings, **overrides: Any) -> psycopg.Connection[Any]:
    """One dedicated connection (LISTEN, long-running workers), autocommit by default."""
    if not settings.database_url:
        raise NotConfigured()
    return psycopg.connect(settings.database_url, **{**CONNECTION_KWARGS, **overrides})


def application_name(url: str) -> str | None:
    """The ``application_name`` a DSN sets, if any."""
    found = conninfo_to_dict(url).get("application_name")
    return str(found) if found else None


NOTIFY_TIMEOUT = 0.5  # seconds between checks of the stop flag


def notifications(
    settings: Settings, app_name: str, stop: threading.Event, connected: Callable[[], None]
) -> Iterator[str]:
    """Payloads (pool names) NOTIFYed on the channel, until ``stop``; ``connected()`` once listening.

    A lost connection raises :class:`StoreUnavailable` (the caller reconnects).
    """
    with translated(), connect(settings, application_name=app_name, connect_timeout=5) as conn:
        conn.execute(sql.SQL("LISTEN {}").format(sql.Identifier(channel(settings))))
        connected()
        while not stop.is_set():
            for note in conn.notifies(timeout=NOTIFY_TIMEOUT):
                yield note.payload


def channel(settings: Settings) -> str:
    """The NOTIFY channel workers LISTEN on; the payload is the pool name."""
    return f"{settings.schema_name}_jobs"


class Connections(Protocol):
    """Where the pg stores get a connection: a ``ConnectionPool`` or a :class:`LazyPool`."""

    def connection(self) -> AbstractContextManager[Conn]: ...
    def close(self) -> None: ...


class LazyPool:
    """A Runtime's pool, opened on first use: building the stores never connects.

    After the first open, ``connection()`` is one attribute read more than the
    pool's own (no lock on the enqueue path).
    """

    def __init__(self, settings: Settings, max_size: int = 10, **connect: Any) -> None:
        self._settings = settings
        self._max_size = max_size
        self._connect = connect  # extra connection parameters (``open_pool``)
        self._pool: ConnectionPool | None = None
        self._lock = threading.Lock()

    @property
    def opened(self) -> bool:
        return self._pool is not None

    def get(self) -> ConnectionPool:
        pool = self._pool
        if pool is None:
            with self._lock:
                if self._pool is None:
                    self._pool = open_pool(self._settings, self._max_size, **self._connect)
                pool = self._pool
        return pool

    def connection(self) -> AbstractContextManager[Conn]:
        return self.get().connection()

    def close(self) -> None:
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.close()


class Direct:
    """A fresh connection per use (read-only tools with their own timeout): no pool."""

    def __init__(self, url: str, **kwargs: Any) -> None:
        self._url = url.replace("postgresql+psycopg://", "postgresql://", 1)
        self._kwargs = {**CONNECTION_KWARGS, **kwargs}

    @contextmanager
    def connection(self) -> Iterator[Conn]:
        with psycopg.connect(self._url, **self._kwargs) as conn:
            yield conn

    def close(self) -> None:
        """Nothing is kept open between uses."""
