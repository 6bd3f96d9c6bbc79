"""Synthetic load: arguments for job ``i`` and the enqueue loop that follows the schedule.

The load test enqueues straight into the queue (the runtime's store, with the
job's real pool, priority and retry budget): the gate decides where an
*application's* enqueues run, and a load test is how a gated job earns its
certification, so it must reach the workers while still uncertified.

With the app's real key (``spec.app_key``), calls come in **pairs that differ
in one argument** (call ``2k+1`` is call ``2k`` with one parameter taken from
the generator's call ``2k+1``, a different parameter for each pair): a key that
leaves out an argument that changes the work (a mail's recipient) gives both
calls one key, and the second would never run. Each such pair is recorded as
a :class:`~migrator.loadtest.report.KeyMerge`, which fails the run.
"""

from __future__ import annotations

import importlib
import inspect
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from migrator.loadtest.report import KeyMerge
from migrator.loadtest.spec import LoadTestSpec, SpecError, schedule
from queue_runtime import QueueError
from queue_runtime.jobs import JobFunction
from queue_runtime.keys import check_key, render_key
from queue_runtime.runtime import Runtime
from queue_runtime.store import NewJob

Call = tuple[tuple[Any, ...], dict[str, Any]]
Generator = Callable[[int], Call]


def load_generator(target: str) -> Callable[[int], Any]:
    """``MODULE:FUNCTION`` -> the function (called with the job index, from 0)."""
    module_name, _, name = target.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise SpecError(f"--args {target}: cannot import {module_name}: {exc}") from exc
    function = getattr(module, name, None)
    if not callable(function):
        raise SpecError(f"--args {target}: {module_name} has no function {name}")
    generator: Callable[[int], Any] = function
    return generator


def as_call(value: Any) -> Call:
    """A generator's answer -> (args, kwargs): a dict is keyword arguments, a list/tuple
    positional ones, a pair ``(tuple, dict)`` both."""
    if isinstance(value, dict):
        return (), dict(value)
    if (
        isinstance(value, tuple)
        and len(value) == 2
        and isinstance(value[0], tuple | list)
        and isinstance(value[1], dict)
    ):
        return tuple(value[0]), dict(value[1])
    if isinstance(value, tuple | list):
        return tuple(value), {}
    return (value,), {}


def signature_generator(jf: JobFunction[..., Any]) -> Generator:
    """Default arguments: each required parameter from its annotation, incrementing with ``i``."""
    makers: list[tuple[str, Callable[[int], Any]]] = []
    for param in jf.codec.signature.parameters.values():
        if param.default is not inspect.Parameter.empty:
            continue
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        makers.append((param.name, _maker(jf.name, param)))

    def generate(i: int) -> Call:
        return (), {name: make(i) for name, make in makers}

    return generate


def _maker(job: str, param: inspect.Parameter) -> Callable[[int], Any]:
    annotation = param.annotation
    if isinstance(annotation, str):
        annotation = {"int": int, "str": str, "float": float, "bool": bool}.get(
            annotation, annotation
        )
    if annotation in (inspect.Parameter.empty, int):
        return lambda i: i
    if annotation is str:
        name = param.name
        return lambda i: f"{name}-{i}"
    if annotation is float:
        return float
    if annotation is bool:
        return lambda i: i % 2 == 0
    raise SpecError(
        f"cannot derive a value for {job}({param.name}: {annotation!r}); give --args MODULE:FUNCTION"
    )


@dataclass
class Enqueued:
    index: int
    job_id: int
    key: str | None
    created: bool
    offset: float


@dataclass
class LoadResult:
    enqueued: list[Enqueued] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    behind_seconds: float = 0.0  # how far the loop fell behind its schedule at worst
    key_pairs: int = 0  # pairs of different calls enqueued under the app's key
    key_merges: list[KeyMerge] = field(default_factory=list)


class AppKeyPairs:
    """The calls and keys of a load under the app's real key, and the pairs it merged."""

    def __init__(self, jf: JobFunction[..., Any], key: str, generate: Generator) -> None:
        try:
            check_key(jf, key)  # the key function imported for real, against the job
        except QueueError as exc:
            raise SpecError(f"the app's key: {exc}") from exc
        self.jf, self.key, self.generate = jf, key, generate
        self._seen: dict[str, tuple[int, str]] = {}  # key -> (first call, its arguments)
        self._base: dict[str, Any] = {}
        self.varied: str | None = None

    def call(self, index: int) -> Call:
        """Call ``index``: an odd one is the previous call with one argument changed."""
        bound = self._bound(*self.generate(index))
        self.varied = None
        if index % 2 == 1:
            names = [n for n in self._base if n in bound and bound[n] != self._base[n]]
            if names:
                self.varied = names[(index // 2) % len(names)]
                bound = {**self._base, self.varied: bound[self.varied]}
        else:
            self._base = bound
        return (), bound

    def key_of(self, index: int, call: Call, payload: str) -> tuple[str, KeyMerge | None]:
        """The app's key for the call, and the merge when another call already holds it."""
        key = render_key(self.jf, self.key, *call)
        first = self._seen.setdefault(key, (index, payload))
        if first[1] == payload:
            return key, None
        return key, KeyMerge(key=key, first=first[0], second=index, differs_in=self.varied)

    def _bound(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
        return dict(self.jf.codec.signature.bind(*args, **kwargs).arguments)


class Enqueuer:
    """Follows the schedule from ``started`` (monotonic) in a thread; ``result`` when joined."""

    def __init__(
        self,
        runtime: Runtime,
        jf: JobFunction[..., Any],
        spec: LoadTestSpec,
        run_id: str,
        generate: Generator,
    ) -> None:
        self.runtime = runtime
        self.jf = jf
        self.spec = spec
        self.run_id = run_id
        self.generate = generate
        self.result = LoadResult()
        self.pairs = AppKeyPairs(jf, spec.app_key, generate) if spec.app_key else None
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()

    def start(self, started: float) -> None:
        self._thread = threading.Thread(
            target=self._run, args=(started,), name="loadtest-enqueue", daemon=True
        )
        self._thread.start()

    def join(self) -> LoadResult:
        if self._thread is not None:
            self._thread.join()
        return self.result

    def stop(self) -> None:
        self._stop.set()

    def _run(self, started: float) -> None:
        spec_ = self.jf.spec(self.runtime.settings)
        for index, offset in enumerate(schedule(self.spec)):
            delay = started + offset - time.monotonic()
            if delay > 0 and self._stop.wait(delay):
                return
            self.result.behind_seconds = max(self.result.behind_seconds, -delay)
            try:
                new = self._new_job(index, spec_)
                job_id, created = self.runtime.store.enqueue_returning(new)
            except Exception as exc:  # a refused or failed enqueue is reported, the load goes on
                self.result.errors.append(f"job {index}: {type(exc).__name__}: {exc}")
                continue
            self.result.enqueued.append(
                Enqueued(index, job_id, new.idempotency_key, created, offset)
            )

    def _new_job(self, index: int, job_spec: Any) -> NewJob:
        if self.pairs is not None:
            return self._app_keyed_job(self.pairs, index, job_spec)
        args, kwargs = self.generate(index)
        key = None
        if (
            "idempotency_key" in kwargs
            and "idempotency_key" not in self.jf.codec.signature.parameters
        ):
            key = kwargs.pop("idempotency_key")
        if key is None and self.spec.key:
            key = self.spec.key.format(run=self.run_id, i=index)
        payload = self.jf.codec.encode(tuple(args), kwargs, self.runtime.settings.max_payload_bytes)
        return self._job(payload, job_spec, None if key is None else str(key))

    def _app_keyed_job(self, pairs: AppKeyPairs, index: int, job_spec: Any) -> NewJob:
        """The call under the app's real key; a merged pair is recorded (and not enqueued)."""
        call = pairs.call(index)
        payload = self.jf.codec.encode(*call, self.runtime.settings.max_payload_bytes)
        key, merge = pairs.key_of(index, call, payload.json)
        self.result.key_pairs += index % 2
        if merge is not None:
            self.result.key_merges.append(merge)
            raise KeyMergedError(f"call {index} got the key of call {merge.first}: {key!r}")
        return self._job(payload, job_spec, key)

    def _job(self, payload: dict[str, Any], job_spec: Any, key: str | None) -> NewJob:
        return NewJob(
            name=self.jf.name,
            pool=job_spec.pool,
            args=payload,
            priority=job_spec.priority,
            idempotency_key=key,
            max_attempts=job_spec.retry.max_attempts,
        )


class KeyMergedError(SpecError):
    """Two different calls got one key from the app's key (the run fails on it)."""
