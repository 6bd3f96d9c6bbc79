"""What a job is, as data: its name, what its code declares, its codec, its function.

``JobDefinition`` is the frozen record every layer below ``@job`` works with
(the registry, the spec, the gate, enqueue, the worker); ``JobFunction`` (in
:mod:`queue_runtime.jobs`) wraps one and adds calling and enqueueing. Anything
with a ``definition`` (``Defined``) can be registered and gated, so these
layers never import the decorator's module.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Protocol

from queue_runtime._limits import PRIORITY_RANGE
from queue_runtime.codecs import allow_modules
from queue_runtime.config import Idempotency, RetryPolicy
from queue_runtime.errors import ConfigError
from queue_runtime.payload import PayloadCodec
from queue_runtime.periodic import Schedule


# eq=False: a definition is identified by the object (hashing is then cheap, and two
# registrations of one function under one name stay two definitions).
@dataclass(frozen=True, slots=True, eq=False)
class JobDefinition:
    name: str
    declared_pool: str | None
    retry: RetryPolicy | None
    timeout: float | None
    priority: int | None
    idempotency: Idempotency | None  # None: undeclared, the inventory decides
    is_async: bool
    codec: PayloadCodec
    fn: Callable[..., Any]
    schedule: Schedule | None = None  # a periodic job's ticks (@job(every=...) / cron=)

    @classmethod
    def declare(
        cls,
        fn: Callable[..., Any],
        name: str,
        pool: str | None = None,
        *,
        retry: RetryPolicy | None = None,
        timeout: float | None = None,
        priority: int | None = None,
        idempotent: bool | None = None,
        idempotency: Idempotency | str | None = None,
        every: timedelta | str | float | None = None,
        cron: str | None = None,
        timezone: str | None = None,
    ) -> JobDefinition:
        """The definition of ``fn`` from ``@job``'s options (idempotency and schedule checked)."""
        verdict = declared_idempotency(name, idempotency, idempotent)
        if priority is not None and (type(priority) is not int or priority not in PRIORITY_RANGE):
            raise ConfigError(
                f"{name}: priority={priority!r:.60}; expected an int from "
                f"{PRIORITY_RANGE.start} to {PRIORITY_RANGE.stop - 1} (a smallint)"
            )
        is_async = inspect.iscoroutinefunction(fn)
        codec = PayloadCodec(fn, name)
        allow_modules(fn.__module__)  # the job's own package: its classes may come back by path
        schedule = _schedule(name, every, cron, timezone)
        return cls(name, pool, retry, timeout, priority, verdict, is_async, codec, fn, schedule)

    @property
    def definition(self) -> JobDefinition:
        """Itself: a definition is ``Defined`` too (the gate takes either)."""
        return self

    @property
    def idempotent(self) -> bool:
        return self.idempotency is Idempotency.IDEMPOTENT

    @property
    def origin(self) -> str:
        """``module.qualname`` of the function (what a duplicate name is reported as)."""
        return origin(self.fn)


class Defined(Protocol):
    """Anything carrying a job definition: a ``JobFunction``, or the definition itself."""

    @property
    def definition(self) -> JobDefinition: ...


def origin(fn: Callable[..., Any]) -> str:
    return f"{fn.__module__}.{fn.__qualname__}"


def declared_idempotency(
    name: str, given: Idempotency | str | None, flag: bool | None
) -> Idempotency | None:
    """``idempotency=`` (a verdict), else ``idempotent=True/False`` when given, else None (undeclared).

    ``idempotent=False`` declares the job non_idempotent: the gate holds it
    until it is certified. Not saying anything leaves the verdict to the
    inventory (``Settings.inventory_path``), if any.
    """
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


def _schedule(
    name: str, every: timedelta | str | float | None, cron: str | None, timezone: str | None
) -> Schedule | None:
    """``@job(every=...)`` / ``cron=`` as a Schedule; None for a job that is not periodic."""
    if every is None and cron is None:
        if timezone is not None:
            raise ConfigError(f"{name}: timezone= goes with cron=")
        return None
    try:
        return Schedule.of(every, cron, timezone)
    except ConfigError as exc:
        raise ConfigError(f"{name}: {exc}") from None
