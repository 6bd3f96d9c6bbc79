"""The composition root: Settings plus the connections built from them, lazily.

``configure()`` builds the Runtime once (from the config sources and explicit
overrides); the job functions and ``get_job`` use ``current()``. Nothing
connects until a job is enqueued or looked up: importing the app's modules
(and so registering its jobs) never touches the network.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from queue_runtime._settings_load import load_settings, with_overrides
from queue_runtime.config import Mode, Settings
from queue_runtime.errors import NotConfigured
from queue_runtime.registry import Registry, default_registry

if TYPE_CHECKING:
    import redis
    from psycopg_pool import ConnectionPool

    from queue_runtime.pg.store import PgJobStore
    from queue_runtime.redis_leases import RedisLeaseStore

log = logging.getLogger("queue_runtime")
T = TypeVar("T")


class Runtime:
    """Settings, the job registry, and (created on first use) the pool, store and Redis client."""

    def __init__(self, settings: Settings, registry: Registry | None = None) -> None:
        self.settings = settings
        self.registry = registry or default_registry
        self._lock = threading.Lock()
        self._parts: dict[str, Any] = {}

    def __repr__(self) -> str:
        return f"Runtime(mode={self.mode}, schema={self.settings.schema_name!r})"

    @property
    def mode(self) -> Mode:
        return self.settings.effective_mode

    def _lazy(self, name: str, factory: Callable[[], T]) -> T:
        """One instance per Runtime even when threads race to create it."""
        with self._lock:
            if name not in self._parts:
                self._parts[name] = factory()
            return self._parts[name]

    @property
    def pool(self) -> ConnectionPool:
        from queue_runtime.pg.connect import open_pool

        return self._lazy("pool", lambda: open_pool(self.settings))

    @property
    def store(self) -> PgJobStore:
        from queue_runtime.pg.store import PgJobStore

        if "store" not in self._parts:  # fast path without the lock: enqueue reads this often
            pool = self.pool
            self._lazy("store", lambda: PgJobStore(pool, self.settings))
        return self._parts["store"]

    @property
    def redis(self) -> redis.Redis:
        return self._lazy("redis", self._redis_client)

    def _redis_client(self) -> redis.Redis:
        import redis

        return redis.Redis.from_url(
            self._redis_url(), socket_timeout=5.0, socket_connect_timeout=2.0
        )

    def _redis_url(self) -> str:
        if not self.settings.redis_url:
            raise NotConfigured("redis_url is not set")
        return self.settings.redis_url

    @property
    def leases(self) -> RedisLeaseStore:
        from queue_runtime.redis_leases import RedisLeaseStore

        url, prefix = self._redis_url(), self.settings.redis_prefix
        return self._lazy("leases", lambda: RedisLeaseStore.from_url(url, prefix))

    def close(self) -> None:
        """Close what was opened (pool, Redis clients); safe to call twice.

        Closing the current Runtime also unsets it: the next ``current()``
        configures a fresh one from the config sources.
        """
        _forget(self)
        with self._lock:
            parts, self._parts = self._parts, {}
        if "pool" in parts:
            parts["pool"].close()
        for name in ("redis", "leases"):
            if name in parts:
                parts[name].close()


_current: Runtime | None = None
_current_lock = threading.Lock()


def configure(settings: Settings | None = None, **overrides: Any) -> Runtime:
    """Build the Runtime every job uses: ``settings`` as given, or from the config sources.

    ``configure()`` reads ``[tool.queue_runtime]`` and the environment;
    ``configure(database_url=...)`` overrides fields; ``configure(settings)``
    uses a ready Settings. A previously configured Runtime is closed.
    """
    global _current
    if settings is None:
        built = load_settings(**overrides)
    else:
        built = with_overrides(settings, **overrides) if overrides else settings
    runtime = Runtime(built)
    with _current_lock:
        previous, _current = _current, runtime
    if previous is not None:
        previous.close()
    _warn_if_implicitly_inline(built)
    return runtime


def current() -> Runtime:
    """The configured Runtime; configured from the config sources on first use."""
    global _current
    with _current_lock:
        if _current is None:
            _current = Runtime(load_settings())
            _warn_if_implicitly_inline(_current.settings)
        return _current


def _forget(runtime: Runtime) -> None:
    global _current
    with _current_lock:
        if _current is runtime:
            _current = None


def _warn_if_implicitly_inline(settings: Settings) -> None:
    if settings.mode is None and not settings.database_url:
        _warn_once()


_warned = threading.Event()


def _warn_once() -> None:
    # A log record, not warnings.warn: an app's test suite turning warnings
    # into errors must not break because the queue runs inline there.
    if not _warned.is_set():
        _warned.set()
        log.warning(
            "queue_runtime: no database_url configured; jobs run INLINE (in-process) at enqueue. "
            "Set QUEUE_RUNTIME_DATABASE_URL or configure(database_url=...) to queue them."
        )
