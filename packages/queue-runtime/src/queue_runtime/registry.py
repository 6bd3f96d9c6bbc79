"""The job registry: job names -> what was registered under them.

Workers find a job by its stored name here (the app's modules are imported,
which runs the ``@job`` decorators of :mod:`queue_runtime.jobs`). The registry
holds anything ``Defined`` (a ``JobFunction``), typed by the low protocol, so
it never imports the decorator's module.
"""

from __future__ import annotations

from typing import TypeVar, overload

from queue_runtime.definition import Defined, JobDefinition
from queue_runtime.errors import DuplicateJob, UnknownJob

J = TypeVar("J", bound=Defined)


class Registry:
    """Job names -> registered jobs (``JobFunction`` objects, or any ``Defined``)."""

    def __init__(self) -> None:
        self._jobs: dict[str, Defined] = {}

    def add(self, job: Defined) -> None:
        new = job.definition
        existing = self._jobs.get(new.name)
        if existing is not None and existing.definition.origin != new.origin:
            raise DuplicateJob(f"{new.name!r} is {existing.definition.origin}, not {new.origin}")
        self._jobs[new.name] = job  # same function again (module reloaded): the new one wins

    @overload
    def get(self, name: str) -> Defined: ...
    @overload
    def get(self, name: str, kind: type[J]) -> J: ...
    def get(self, name: str, kind: type[J] | None = None) -> Defined | J:
        """The job registered as ``name``; with ``kind``, checked to be one (``JobFunction``)."""
        try:
            found = self._jobs[name]
        except KeyError:
            raise UnknownJob(f"{name!r} (is its module imported by the worker?)") from None
        if kind is not None and not isinstance(found, kind):
            raise UnknownJob(f"{name!r} is a {type(found).__name__}, not a {kind.__name__}")
        return found

    def definition(self, name: str) -> JobDefinition:
        return self.get(name).definition

    def names(self) -> list[str]:
        return sorted(self._jobs)

    def __contains__(self, name: object) -> bool:
        return name in self._jobs


default_registry = Registry()
