"""The composition root: Settings, the registry, the stores and the gate cache, typed.

``configure()`` builds the Runtime once (from the config sources and explicit
overrides); the job functions and ``get_job`` use ``current()``. Nothing
connects until a job is enqueued or looked up: importing the app's modules
(and so registering its jobs) never touches the network.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from queue_runtime._gate_cache import GateCache
from queue_runtime._settings_load import load_settings, with_overrides
from queue_runtime._spec import JobSpec, resolve_spec
from queue_runtime.config import Mode, Settings
from queue_runtime.definition import JobDefinition
from queue_runtime.errors import NotConfigured
from queue_runtime.local_keys import LocalKeys
from queue_runtime.registry import Registry, default_registry
from queue_runtime.shadow import flush_for
from queue_runtime.store import (
    DashboardStore,
    GateSnapshot,
    GateStore,
    Inspector,
    JobStore,
    KeyStore,
    LeaseStore,
    Stores,
)

if TYPE_CHECKING:
    from queue_runtime.pg.connect import Connections

log = logging.getLogger("queue_runtime")
T = TypeVar("T")


class _Once(Generic[T]):
    """A value made on first use, once, even when threads race to make it."""

    __slots__ = ("_lock", "_make", "value")

    def __init__(self, make: Callable[[], T]) -> None:
        self._make = make
        self._lock = threading.Lock()
        self.value: T | None = None

    @classmethod
    def of(cls, value: T) -> _Once[T]:
        once = cls(lambda: value)
        once.value = value
        return once

    def get(self) -> T:
        value = self.value  # the fast path, without the lock: enqueue reads this often
        if value is None:
            with self._lock:
                if self.value is None:
                    self.value = self._make()
                value = self.value
        return value

    def take(self) -> T | None:
        """The value if it was made, and forget it (closing)."""
        with self._lock:
            value, self.value = self.value, None
        return value


class Runtime:
    """Settings, the job registry, the four stores, the gate's per-process cache.

    ``Runtime(settings)`` runs on PostgreSQL and Redis, opened on first use;
    ``Runtime(settings, stores=Stores(...))`` on the stores given (the
    in-memory ones of ``queue_runtime.testing``, a wrapper in a test).
    """

    def __init__(
        self, settings: Settings, registry: Registry | None = None, stores: Stores | None = None
    ) -> None:
        self.settings = settings
        self.registry = registry or default_registry
        self.gate_cache = GateCache(self._gate_snapshot, settings.rollout_refresh)
        # Definition -> its spec under these settings: enqueue and the worker read it per job.
        # No lock: two threads may both resolve it, to the same answer.
        self._specs: dict[JobDefinition, JobSpec] = {}
        self._pool: _Once[Connections] = _Once(self._open_pool)  # unused with stores given
        self.has_store = stores is not None or bool(settings.database_url)
        self._keys: _Once[KeyStore] = _Once(self._guard_keys)
        self._given = stores
        if stores is not None:
            self._jobs: _Once[JobStore] = _Once.of(stores.jobs)
            self._gate: _Once[GateStore] = _Once.of(stores.gate)
            self._inspector: _Once[Inspector] = _Once.of(stores.inspector)
            self._leases: _Once[LeaseStore] = _Once.of(stores.leases)
            return
        self._jobs = _Once(self._pg_jobs)
        self._gate = _Once(self._pg_gate)
        self._inspector = _Once(self._pg_inspector)
        self._leases = _Once(self._redis_leases)

    def __repr__(self) -> str:
        return f"Runtime(mode={self.mode}, schema={self.settings.schema_name!r})"

    @property
    def mode(self) -> Mode:
        return self.settings.effective_mode

    def spec(self, definition: JobDefinition) -> JobSpec:
        """The job's pool, retry policy, timeout and priority under these settings (cached)."""
        found = self._specs.get(definition)
        if found is None:
            found = self._specs[definition] = resolve_spec(definition, self.settings)
        return found

    @property
    def store(self) -> JobStore:
        """The job store (PostgreSQL unless other stores were given)."""
        return self._jobs.get()

    @property
    def gate_store(self) -> GateStore:
        return self._gate.get()

    @property
    def keys(self) -> KeyStore:
        """The execution guard's keys: the gate store's, in process when there is no store."""
        return self._keys.get()

    @property
    def inspector(self) -> Inspector:
        return self._inspector.get()

    @property
    def leases(self) -> LeaseStore:
        return self._leases.get()

    def open_dashboard(self) -> DashboardStore:
        """What the web dashboard reads, for the caller to close: on PostgreSQL a small pool
        of its own (JIT off, opened on first use); else the given stores' ``dashboard``."""
        if self._given is None:
            from queue_runtime.pg.dashboard import PgDashboard

            return PgDashboard.open(self.settings)
        if self._given.dashboard is None:
            raise NotConfigured("the Runtime's stores have no dashboard store (Stores.dashboard)")
        return self._given.dashboard

    @property
    def opened(self) -> bool:
        """Whether any store was built yet (``configure()`` builds none)."""
        parts = (self._jobs, self._gate, self._inspector, self._leases)
        return any(part.value is not None for part in parts)

    def _gate_snapshot(self) -> GateSnapshot:
        return self.gate_store.snapshot()

    def _guard_keys(self) -> KeyStore:
        if self.has_store:
            return self.gate_store
        # No database (inline mode): the keys live as long as this process, and the guard
        # still holds in it (a repeated call answers with the first run's result).
        return LocalKeys(retention_seconds=self.settings.key_retention_days * 86_400)

    # -- the default stores: PostgreSQL (one pool for the three) and Redis ---------

    def _open_pool(self) -> Connections:
        # Opened by its first connection(), inside the store's error translation.
        from queue_runtime.pg.connect import LazyPool

        return LazyPool(self.settings)

    def _pg_jobs(self) -> JobStore:
        from queue_runtime.pg.store import PgJobStore

        return PgJobStore(self._pool.get(), self.settings)

    def _pg_gate(self) -> GateStore:
        from queue_runtime.pg.gate import PgGateStore

        return PgGateStore(self._pool.get(), self.settings.schema_name)

    def _pg_inspector(self) -> Inspector:
        from queue_runtime.pg.inspect import PgInspector

        # Live workers are presence records in Redis: the lease store, built when asked.
        return PgInspector(self._pool.get(), self.settings.schema_name, lambda: self.leases)

    def _redis_leases(self) -> LeaseStore:
        from queue_runtime.redis import RedisLeaseStore

        s = self.settings
        if not s.redis_url:
            raise NotConfigured("redis_url is not set")
        return RedisLeaseStore.from_url(s.redis_url, s.redis_prefix, cluster=s.redis_cluster)

    def close(self) -> None:
        """Close what was opened (stores, pool, Redis client); safe to call twice.

        Closing the current Runtime also unsets it: the next ``current()``
        configures a fresh one from the config sources.
        """
        _forget(self)
        flush_for(self)  # the shadow evidence counted in this process, before the stores close
        for part in (self._jobs, self._gate, self._inspector, self._leases):
            found = part.take()
            if found is not None:
                found.close()
        self._keys.take()  # the gate store's (closed above) or in process: nothing to close
        pool = self._pool.take()
        if pool is not None:
            pool.close()


_current: Runtime | None = None
_current_lock = threading.Lock()


def configure(
    settings: Settings | None = None, *, stores: Stores | None = None, **overrides: Any
) -> Runtime:
    """Build the Runtime every job uses: ``settings`` as given, or from the config sources.

    ``configure()`` reads ``[tool.queue_runtime]`` and the environment;
    ``configure(database_url=...)`` overrides fields; ``configure(settings)``
    uses a ready Settings; ``stores=`` runs it on those stores instead of
    PostgreSQL and Redis (``queue_runtime.testing.memory_stores()`` in an app's
    tests). A previously configured Runtime is closed.
    """
    global _current
    if settings is None:
        built = load_settings(**overrides)
    else:
        built = with_overrides(settings, **overrides) if overrides else settings
    runtime = Runtime(built, stores=stores)
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


def configured() -> Runtime | None:
    """The current Runtime if one is configured, without configuring one (the pytest plugin)."""
    with _current_lock:
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
