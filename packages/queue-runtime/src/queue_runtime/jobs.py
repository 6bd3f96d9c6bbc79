"""``@job``: registering functions as jobs, addressed by name.

A job's name is its qualified name ``module.function`` unless ``name=`` says
otherwise; workers find the function by that name in the registry (the app's
modules are imported, which runs the decorators). Decorating never connects
anything and never changes what calling the function does.

``JobFunction`` is the top of the runtime: it wraps a
:class:`~queue_runtime.definition.JobDefinition` (what everything below works
with) and adds calling and enqueueing.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import inspect
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Executor
from datetime import datetime, timedelta
from typing import Any, Generic, ParamSpec, TypeVar, overload

from queue_runtime._enqueue import NO_OPTIONS, EnqueueOptions, enqueue_batch, enqueue_one
from queue_runtime._inline import InlineShape
from queue_runtime._spec import JobSpec, resolve_spec
from queue_runtime.config import Idempotency, RetryPolicy, Settings
from queue_runtime.definition import JobDefinition, origin
from queue_runtime.errors import ConfigError
from queue_runtime.handle import JobHandle
from queue_runtime.payload import PayloadCodec
from queue_runtime.registry import Registry, default_registry

P = ParamSpec("P")
R = TypeVar("R")

# Keyword arguments of .enqueue() that are queue options, unless the job itself
# has a parameter of that name (then they go to the job; use .options()).
OPTION_NAMES = ("idempotency_key", "run_at", "tenant", "conn", "priority")
JOB_OPTIONS = frozenset(
    {"pool", "name", "retry", "timeout", "priority", "idempotent", "idempotency", "registry"}
    | {"every", "cron", "timezone"}  # a periodic job (queue_runtime.periodic)
)


class JobFunction(Generic[P, R]):
    """A registered job: call it to run inline, ``.enqueue(...)`` to queue it."""

    def __init__(
        self,
        fn: Callable[P, R],
        name: str,
        pool: str | None = None,
        *,
        of_class: bool = False,
        **options: Any,
    ) -> None:
        """``options``: ``retry``, ``timeout``, ``priority``, ``idempotent``, ``idempotency``,
        and a schedule (``every``, ``cron``, ``timezone``). ``of_class``: ``fn`` is a
        classmethod's function (``@job`` above ``@classmethod``): its first argument is the
        class it is read from, as a classmethod's is."""
        functools.update_wrapper(self, fn)
        # Where the function was defined: a job pickles as a reference to it.
        self._defined_as = str(getattr(fn, "__qualname__", name))
        definition = JobDefinition.declare(fn, name, pool, **options)
        self.definition = definition
        self._of_class = of_class
        self._spec: tuple[Settings, JobSpec] | None = None
        params = definition.codec.signature.parameters
        self._option_names = tuple(o for o in OPTION_NAMES if o not in params)

    def __repr__(self) -> str:
        return f"<job {self.name} pool={self.declared_pool}>"

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        return self.fn(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        """What the job itself does not have, the function it wraps answers: ``@job`` over
        another decorator keeps that decorator's API (``lru_cache``'s ``cache_clear``, a
        task object's ``delay``) for code that still calls it. The job's own names come
        first (``__getattr__`` runs only for a name the job lacks); private names are not
        forwarded."""
        wrapped = self.__dict__.get("__wrapped__")  # the decorated object, as written
        if name.startswith("_") or wrapped is None:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        return getattr(wrapped, name)

    def __reduce__(self) -> str:
        """Pickled by reference, its module and qualified name, as the function it
        decorates was: code that hands it to a process pool or ``multiprocessing`` keeps
        working (the other process imports the module and finds this job there)."""
        return self._defined_as

    def __get__(self, instance: object, owner: type | None = None) -> Any:
        """A job defined as a method, read from an instance: bound to it (:class:`BoundJob`),
        as a plain function would be. Read from the class it stays the job, whose first
        argument is the instance (``Order.send_receipt.enqueue(order, x)``).

        A classmethod's job is bound to the class it is read from, or the instance's class,
        as ``classmethod`` binds: ``Catalog.refresh.enqueue(url)`` (or ``cls.refresh``, on a
        subclass too) queues ``refresh(Catalog, url)``, the class stored by its import path."""
        if self._of_class:
            return self._bound(self, owner if owner is not None else type(instance))
        if instance is None:
            return self
        return self._bound(self, instance)

    @property
    def _bound(self) -> type[BoundJob]:
        return BoundJob

    def __set_name__(self, owner: type, name: str) -> None:
        """A classmethod's job in its class body: a stored class must be ``owner`` or a
        subclass (a payload naming another class is refused in the worker)."""
        if self._of_class:
            self.definition.codec.lead_class = owner

    # -- what the definition says (read-only views) ---------------------------

    @property
    def fn(self) -> Callable[P, R]:
        return self.definition.fn

    @fn.setter
    def fn(self, wrapped: Callable[P, R]) -> None:
        """Run ``wrapped`` instead (a wrapper of the function: the load test's ledger is one).

        The definition is replaced, codec and all else kept: workers and enqueue
        read the registered job's current definition.
        """
        self.definition = dataclasses.replace(self.definition, fn=wrapped)

    @property
    def name(self) -> str:
        return self.definition.name

    @property
    def declared_pool(self) -> str | None:
        return self.definition.declared_pool

    @property
    def pool(self) -> str | None:
        """The pool declared in code (``@job(pool=...)``); config may set it for undecorated pools."""
        return self.definition.declared_pool

    @property
    def retry(self) -> RetryPolicy | None:
        return self.definition.retry

    @property
    def timeout(self) -> float | None:
        return self.definition.timeout

    @property
    def priority(self) -> int | None:
        return self.definition.priority

    @property
    def idempotency(self) -> Idempotency | None:
        return self.definition.idempotency

    @property
    def idempotent(self) -> bool:
        return self.definition.idempotent

    @property
    def is_async(self) -> bool:
        return self.definition.is_async

    @property
    def codec(self) -> PayloadCodec:
        return self.definition.codec

    def spec(self, settings: Settings) -> JobSpec:
        """Pool, retry policy, timeout and priority under ``settings`` (config beats code)."""
        cached = self._spec
        if cached is not None and cached[0] is settings:
            return cached[1]
        spec = resolve_spec(self.definition, settings)
        self._spec = (settings, spec)
        return spec

    def decode(self, payload: dict[str, Any]) -> tuple[list[Any], dict[str, Any]]:
        """Stored JSON -> call arguments (worker side)."""
        return self.definition.codec.decode(payload)

    def encode_result(self, value: Any) -> Any:
        return self.definition.codec.encode_result(value)

    # -- enqueueing -----------------------------------------------------------

    def enqueue(self, *args: P.args, **kwargs: P.kwargs) -> JobHandle:
        """Queue one run; options: idempotency_key=, run_at= (datetime | timedelta), tenant=, conn=, priority=."""
        options = self._split_options(kwargs) if kwargs else NO_OPTIONS
        return enqueue_one(self.definition, args, kwargs, options)

    def _split_options(self, kwargs: dict[str, Any]) -> EnqueueOptions:
        """Pop the queue options out of ``kwargs`` (the rest are the job's arguments)."""
        found: dict[str, Any] = {n: kwargs.pop(n) for n in self._option_names if n in kwargs}
        return EnqueueOptions(**found) if found else NO_OPTIONS

    def options(
        self,
        *,
        idempotency_key: str | None = None,
        run_at: datetime | timedelta | None = None,
        tenant: str | None = None,
        conn: Any = None,
        priority: int | None = None,
        inline: InlineShape = InlineShape.CALL,
        executor: Executor | None = None,
    ) -> BoundEnqueue[P]:
        """Queue options given apart from the arguments (for jobs with a parameter named like one).

        ``inline``: how the job runs while it runs inline (inline mode, or the gate
        keeps it so): ``InlineShape.THREAD`` in a thread, ``EXECUTOR`` through
        ``executor`` (None: the running loop's default), ``TASK`` on the running
        loop, ``CALL`` (the default) in the caller, as the call site did before.
        """
        if executor is not None and inline is not InlineShape.EXECUTOR:
            raise ConfigError(f"{self.name}: executor= goes with inline=InlineShape.EXECUTOR")
        shape = InlineShape(inline)
        options = EnqueueOptions(idempotency_key, run_at, tenant, conn, priority, shape, executor)
        return BoundEnqueue(self.definition, options)

    def enqueue_many(
        self,
        calls: Iterable[tuple[tuple[Any, ...], dict[str, Any]]],
        *,
        run_at: datetime | timedelta | None = None,
        tenant: str | None = None,
        priority: int | None = None,
        idempotency_keys: Sequence[str | None] | None = None,
    ) -> list[JobHandle]:
        """Queue many runs in one transaction (COPY); ``calls`` are ``(args, kwargs)`` pairs.

        ``idempotency_keys``: one key (or None) per call, with ``enqueue``'s semantics.
        """
        options = EnqueueOptions(None, run_at, tenant, None, priority)
        return enqueue_batch(self.definition, list(calls), options, idempotency_keys)


class BoundEnqueue(Generic[P]):
    """A job with its queue options bound: ``.enqueue(...)`` takes only the job's arguments."""

    def __init__(
        self, definition: JobDefinition, options: EnqueueOptions, lead: tuple[Any, ...] = ()
    ) -> None:
        self._definition = definition
        self._options = options
        self._lead = lead  # a method job's instance (BoundJob.options)

    def enqueue(self, *args: P.args, **kwargs: P.kwargs) -> JobHandle:
        return enqueue_one(self._definition, (*self._lead, *args), kwargs, self._options)


class BoundJob:
    """A method job bound to its instance: ``order.send_receipt.enqueue(x)`` queues
    ``Order.send_receipt(order, x)``, the instance being the call's first argument.

    The instance crosses like any argument: a model instance by reference (the
    worker reads the row again), a dataclass, pydantic or attrs object as tagged
    JSON. One no codec covers (a view, a form, an object holding a connection)
    makes the call run as the site ran it, a direct call on that instance
    (``queue_runtime.fallbacks``), and counted. Calling it calls the method.
    """

    def __init__(self, job: JobFunction[..., Any], instance: object) -> None:
        self._job = job
        self.__self__ = instance

    def __repr__(self) -> str:
        lead = self.__self__
        to = lead.__qualname__ if isinstance(lead, type) else type(lead).__name__
        return f"<job {self._job.name} bound to {to}>"

    def __getattr__(self, name: str) -> Any:
        return getattr(self._job, name)

    def __reduce__(self) -> tuple[Any, tuple[object, str]]:
        """Pickled as a bound method is: the instance (or class) and the job's name on it."""
        return getattr, (self.__self__, self._job._defined_as.rpartition(".")[2])

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._job.fn(self.__self__, *args, **kwargs)

    def enqueue(self, *args: Any, **kwargs: Any) -> JobHandle:
        """``JobFunction.enqueue`` with the instance as the first argument."""
        return self._job.enqueue(self.__self__, *args, **kwargs)

    def options(self, **options: Any) -> BoundEnqueue[...]:
        """``JobFunction.options``; its ``.enqueue`` passes the instance first."""
        bound = self._job.options(**options)
        return BoundEnqueue(bound._definition, bound._options, (self.__self__,))

    def enqueue_many(
        self, calls: Iterable[tuple[tuple[Any, ...], dict[str, Any]]], **options: Any
    ) -> list[JobHandle]:
        """``JobFunction.enqueue_many``, the instance first in every call."""
        lead = self.__self__
        return self._job.enqueue_many([((lead, *a), k) for a, k in calls], **options)


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
    every: timedelta | str | float | None = None,
    cron: str | None = None,
    timezone: str | None = None,
) -> Callable[[Callable[P, R]], JobFunction[P, R]]: ...


def job(fn: Callable[..., Any] | None = None, /, **options: Any) -> Any:
    """Register a function as a job: ``@job`` or ``@job(pool="batch", retry=RetryPolicy(...))``.

    ``every=timedelta(minutes=5)`` (or ``"5m"``) or ``cron="*/5 * * * *"`` (in
    ``timezone=``, default UTC) makes it periodic: workers enqueue it once per tick.

    Above ``@classmethod`` it registers the classmethod (named ``module.Class.method``):
    ``Class.method.enqueue(x)`` stores the class by its import path and the worker calls
    ``method(Class, x)``; a classmethod job cannot be periodic (a tick has no class to pass).
    """

    unknown = sorted(set(options) - JOB_OPTIONS)
    if unknown:
        raise ConfigError(f"@job() got unknown option(s) {unknown}; known: {sorted(JOB_OPTIONS)}")

    def register(func: Callable[P, R]) -> JobFunction[P, R]:
        opts = dict(options)  # the same decorator may register several functions
        registry: Registry = opts.pop("registry", None) or default_registry
        of_class = isinstance(func, classmethod)  # @job above @classmethod
        fn = func.__func__ if isinstance(func, classmethod) else func
        name = opts.pop("name", None) or origin(fn)
        if of_class and (opts.get("every") is not None or opts.get("cron") is not None):
            raise ConfigError(
                f"{name}: a classmethod job cannot be periodic (a tick has no class to pass "
                "it); schedule a module-level function that calls it"
            )
        kind = AsyncJobFunction if inspect.iscoroutinefunction(fn) else JobFunction
        jf = kind(fn, name, opts.pop("pool", None), of_class=of_class, **opts)
        registry.add(jf)
        return jf

    return register(fn) if fn is not None else register


def _mark_coroutine_function(obj: object) -> None:
    """``obj``, a job object standing for an ``async def`` function, is a coroutine
    function to ``inspect.iscoroutinefunction`` (Python 3.12+: its documented marker)
    and to ``asyncio.iscoroutinefunction`` (Python 3.11: asyncio's own marker)."""
    mark = getattr(inspect, "markcoroutinefunction", None)
    if mark is not None:
        mark(obj)
    else:
        obj._is_coroutine = asyncio.coroutines._is_coroutine  # type: ignore[attr-defined]


class AsyncJobFunction(JobFunction[P, R]):
    """A job whose function is ``async def``, still a coroutine function to whoever asks.

    Frameworks choose how to run a callable by asking: Starlette's background tasks
    (``inspect.iscoroutinefunction`` of the object or of its ``__call__``), Django's
    signals and views, asyncio's helpers. Told "sync", they would call it in a thread
    and drop the coroutine unawaited: the work of a site apply left alone would
    silently stop once another site of the job moved. So ``__call__`` is ``async`` and
    the object carries the coroutine-function marker; calling it gives what calling
    the function gave, a coroutine to await."""

    def __init__(self, fn: Callable[P, R], name: str, pool: str | None = None, **kw: Any) -> None:
        super().__init__(fn, name, pool, **kw)
        _mark_coroutine_function(self)

    async def __call__(self, *args: P.args, **kwargs: P.kwargs) -> Any:  # type: ignore[override]
        return await self.fn(*args, **kwargs)  # type: ignore[misc]

    @property
    def _bound(self) -> type[BoundJob]:
        return AsyncBoundJob


class AsyncBoundJob(BoundJob):
    """:class:`BoundJob` of an ``async def`` method: a coroutine function, as the bound
    method was (see :class:`AsyncJobFunction`)."""

    def __init__(self, job: JobFunction[..., Any], instance: object) -> None:
        super().__init__(job, instance)
        _mark_coroutine_function(self)

    async def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return await self._job.fn(self.__self__, *args, **kwargs)
