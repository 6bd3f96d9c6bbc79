"""``@job``: registering functions as jobs, addressed by name.

A job's name is its qualified name ``module.function`` unless ``name=`` says
otherwise; workers find the function by that name in the registry (the app's
modules are imported, which runs the decorators). Decorating never connects
anything and never changes what calling the function does.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Iterable
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, Generic, ParamSpec, TypeVar, overload

from queue_runtime.config import Idempotency, RetryPolicy, Settings
from queue_runtime.errors import ConfigError, DuplicateJob, UnknownJob
from queue_runtime.payload import PayloadCodec
from queue_runtime.spec import JobSpec, resolve_spec

if TYPE_CHECKING:
    from queue_runtime.handle import JobHandle

P = ParamSpec("P")
R = TypeVar("R")

# Keyword arguments of .enqueue() that are queue options, unless the job itself
# has a parameter of that name (then they go to the job; use .options()).
OPTION_NAMES = ("idempotency_key", "run_at", "tenant", "conn", "priority")
JOB_OPTIONS = frozenset(
    {"pool", "name", "retry", "timeout", "priority", "idempotent", "idempotency", "registry"}
)


class Registry:
    """Job names -> job functions."""

    def __init__(self) -> None:
        self._jobs: dict[str, JobFunction[..., Any]] = {}

    def add(self, jf: JobFunction[..., Any]) -> None:
        existing = self._jobs.get(jf.name)
        if existing is not None and _origin(existing.fn) != _origin(jf.fn):
            raise DuplicateJob(f"{jf.name!r} is {_origin(existing.fn)}, not {_origin(jf.fn)}")
        self._jobs[jf.name] = jf  # same function again (module reloaded): the new one wins

    def get(self, name: str) -> JobFunction[..., Any]:
        try:
            return self._jobs[name]
        except KeyError:
            raise UnknownJob(f"{name!r} (is its module imported by the worker?)") from None

    def names(self) -> list[str]:
        return sorted(self._jobs)

    def __contains__(self, name: object) -> bool:
        return name in self._jobs


default_registry = Registry()


def _declared_idempotency(name: str, options: dict[str, Any]) -> Idempotency | None:
    """``idempotency=`` (a verdict), else ``idempotent=True/False`` when given, else None (undeclared).

    ``idempotent=False`` declares the job non_idempotent: the gate holds it
    until it is certified. Not saying anything leaves the verdict to the
    inventory (``Settings.inventory_path``), if any.
    """
    given = options.get("idempotency")
    flag = options.get("idempotent")
    if given is not None:
        try:
            verdict = Idempotency(given)
        except ValueError:
            known = ", ".join(v.value for v in Idempotency)
            raise ConfigError(f"{name}: idempotency={given!r}; expected one of {known}") from None
        if flag is not None and bool(flag) != (verdict is Idempotency.IDEMPOTENT):
            raise ConfigError(
                f"{name}: idempotent={flag!r} contradicts idempotency={verdict.value!r}"
            )
        return verdict
    if flag is None:
        return None
    return Idempotency.IDEMPOTENT if flag else Idempotency.NON_IDEMPOTENT


def _origin(fn: Callable[..., Any]) -> str:
    return f"{fn.__module__}.{fn.__qualname__}"


class JobFunction(Generic[P, R]):
    """A registered job: call it to run inline, ``.enqueue(...)`` to queue it."""

    def __init__(self, fn: Callable[P, R], name: str, pool: str | None, **options: Any) -> None:
        functools.update_wrapper(self, fn)
        self.fn = fn
        self.name = name
        self.declared_pool = pool
        self.retry: RetryPolicy | None = options.get("retry")
        self.timeout: float | None = options.get("timeout")
        self.priority: int | None = options.get("priority")
        self.idempotency: Idempotency | None = _declared_idempotency(name, options)
        self.idempotent: bool = self.idempotency is Idempotency.IDEMPOTENT
        self.is_async = inspect.iscoroutinefunction(fn)
        self.codec = PayloadCodec(fn, name)
        self._spec: tuple[Settings, JobSpec] | None = None
        self._option_names = tuple(
            o for o in OPTION_NAMES if o not in self.codec.signature.parameters
        )

    def __repr__(self) -> str:
        return f"<job {self.name} pool={self.declared_pool}>"

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        return self.fn(*args, **kwargs)

    @property
    def pool(self) -> str | None:
        """The pool declared in code (``@job(pool=...)``); config may set it for undecorated pools."""
        return self.declared_pool

    def spec(self, settings: Settings) -> JobSpec:
        """Pool, retry policy, timeout and priority under ``settings`` (config beats code)."""
        cached = self._spec
        if cached is not None and cached[0] is settings:
            return cached[1]
        spec = resolve_spec(self, settings)
        self._spec = (settings, spec)
        return spec

    def decode(self, payload: dict[str, Any]) -> tuple[list[Any], dict[str, Any]]:
        """Stored JSON -> call arguments (worker side)."""
        return self.codec.decode(payload)

    def encode_result(self, value: Any) -> Any:
        return self.codec.encode_result(value)

    def enqueue(self, *args: P.args, **kwargs: P.kwargs) -> JobHandle:
        """Queue one run; options: idempotency_key=, run_at= (datetime | timedelta), tenant=, conn=, priority=."""
        from queue_runtime._enqueue import EnqueueOptions, enqueue_one

        options = {name: kwargs.pop(name) for name in self._option_names if name in kwargs}
        return enqueue_one(self, args, kwargs, EnqueueOptions(**options))

    def options(
        self,
        *,
        idempotency_key: str | None = None,
        run_at: datetime | timedelta | None = None,
        tenant: str | None = None,
        conn: Any = None,
        priority: int | None = None,
    ) -> BoundEnqueue[P]:
        """Queue options given apart from the arguments (for jobs with a parameter named like one)."""
        from queue_runtime._enqueue import EnqueueOptions

        return BoundEnqueue(self, EnqueueOptions(idempotency_key, run_at, tenant, conn, priority))

    def enqueue_many(
        self,
        calls: Iterable[tuple[tuple[Any, ...], dict[str, Any]]],
        *,
        run_at: datetime | timedelta | None = None,
        tenant: str | None = None,
        priority: int | None = None,
    ) -> list[JobHandle]:
        """Queue many runs in one transaction (COPY); ``calls`` are ``(args, kwargs)`` pairs."""
        from queue_runtime._enqueue import EnqueueOptions, enqueue_batch

        return enqueue_batch(
            self, list(calls), EnqueueOptions(None, run_at, tenant, None, priority)
        )


class BoundEnqueue(Generic[P]):
    def __init__(self, jf: JobFunction[P, Any], options: Any) -> None:
        self._jf = jf
        self._options = options

    def enqueue(self, *args: P.args, **kwargs: P.kwargs) -> JobHandle:
        from queue_runtime._enqueue import enqueue_one

        return enqueue_one(self._jf, args, kwargs, self._options)


@overload
def job(fn: Callable[P, R], /) -> JobFunction[P, R]: ...
@overload
def job(
    *,
    pool: str | None = None,
    name: str | None = None,
    retry: RetryPolicy | None = None,
    timeout: float | None = None,
    priority: int | None = None,
    idempotent: bool | None = None,
    idempotency: Idempotency | str | None = None,
    registry: Registry | None = None,
) -> Callable[[Callable[P, R]], JobFunction[P, R]]: ...


def job(fn: Callable[..., Any] | None = None, /, **options: Any) -> Any:
    """Register a function as a job: ``@job`` or ``@job(pool="batch", retry=RetryPolicy(...))``."""

    unknown = sorted(set(options) - JOB_OPTIONS)
    if unknown:
        raise ConfigError(f"@job() got unknown option(s) {unknown}; known: {sorted(JOB_OPTIONS)}")

    def register(func: Callable[P, R]) -> JobFunction[P, R]:
        opts = dict(options)  # the same decorator may register several functions
        registry = opts.pop("registry", None) or default_registry
        name = opts.pop("name", None) or _origin(func)
        jf = JobFunction(func, name, opts.pop("pool", None), **opts)
        registry.add(jf)
        return jf

    return register(fn) if fn is not None else register
