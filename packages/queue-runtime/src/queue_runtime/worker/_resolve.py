"""From a claimed row to a call: the registered function, its spec, decoded arguments.

A job that cannot be called is REJECTED (straight to the DLQ, with the
reason): its stored arguments no longer fit the function's signature (the code
changed since enqueue). A name this worker has not registered never gets here
first: the dispatcher hands the job back for a worker that knows it
(``_unknown``), and rejects it only past ``unknown_job_deadline``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from typing import Any

from queue_runtime._spec import JobSpec
from queue_runtime.bootstrap import job_scope
from queue_runtime.codecs import has_references
from queue_runtime.config import RetryPolicy
from queue_runtime.definition import JobDefinition
from queue_runtime.errors import PayloadError, Permanent, QueueError, ReferenceGone, UnknownJob
from queue_runtime.gate import _guard as guard
from queue_runtime.registry import Registry
from queue_runtime.runtime import Runtime
from queue_runtime.store import ClaimedJob
from queue_runtime.worker._outcome import Outcome, OutcomeKind

Arguments = tuple[list[Any], dict[str, Any]]


@dataclass(frozen=True, slots=True)
class Invocation:
    job: ClaimedJob
    function: JobDefinition
    spec: JobSpec
    args: list[Any]
    kwargs: dict[str, Any]
    guarded: Callable[..., Any] | None = None  # the execution guard, for keyed jobs
    scope: Callable[[], AbstractContextManager[object]] = nullcontext  # the framework's, per job
    late: Callable[[], Arguments] | None = None  # arguments read in the scope (references)

    def arguments(self) -> Arguments:
        """The call's arguments: decoded already, or now (inside the scope) for references."""
        return (self.args, self.kwargs) if self.late is None else self.late()

    @property
    def func(self) -> Callable[..., Any]:
        return self.guarded or self.function.fn

    @property
    def is_async(self) -> bool:
        return self.function.is_async

    @property
    def timeout(self) -> float:
        return self.spec.timeout

    @property
    def policy(self) -> RetryPolicy:
        return self.spec.retry

    def encode_result(self, value: Any) -> Any:
        return self.function.codec.encode_result(value)

    def is_permanent(self, exc: BaseException) -> bool:
        """``Permanent`` or a class named in the policy (dotted; builtins also by bare name)."""
        if isinstance(exc, Permanent):
            return True
        names = set(self.policy.permanent_exceptions)
        return any(_names(cls) & names for cls in type(exc).__mro__)


def _names(cls: type) -> set[str]:
    dotted = f"{cls.__module__}.{cls.__qualname__}"
    return {dotted, cls.__qualname__} if cls.__module__ == "builtins" else {dotted}


class Resolver:
    def __init__(self, runtime: Runtime) -> None:
        self._registry: Registry = runtime.registry
        self._runtime = runtime
        # The app's framework (Django, Flask), set up once per process: the worker command
        # did it before importing the app module; a Worker built in Python does it here.
        self._scope = job_scope(runtime.settings)

    def knows(self, name: str) -> bool:
        """Whether this worker has registered ``name`` (others are ``_unknown``'s)."""
        return name in self._registry

    def resolve(self, job: ClaimedJob) -> Invocation | Outcome:
        try:
            function = self._registry.definition(job.name)
        except UnknownJob as exc:
            return Outcome.rejected(f"unknown job: {exc}")
        late: Callable[[], Arguments] | None = None
        args: list[Any] = []
        kwargs: dict[str, Any] = {}
        try:
            spec = self._runtime.spec(function)
            if not function.is_async and has_references(job.args):
                late = functools.partial(function.codec.decode, job.args)
            else:
                args, kwargs = function.codec.decode(job.args)
        except ReferenceGone as exc:  # retried: the row may be committed a moment later
            return Outcome(OutcomeKind.FAILED, error=f"{type(exc).__name__}: {exc}")
        except PayloadError as exc:
            return Outcome.rejected(f"invalid payload: {exc}")
        except QueueError as exc:
            return Outcome.rejected(f"cannot run: {exc}")
        guarded = guard.wrap(self._runtime, job, function)
        return Invocation(job, function, spec, args, kwargs, guarded, self._scope, late)
