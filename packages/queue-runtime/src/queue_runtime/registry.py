"""The job registry: job names -> what was registered under them.

Workers find a job by its stored name here (the app's modules are imported,
which runs the ``@job`` decorators of :mod:`queue_runtime.jobs`). A loader
(:meth:`Registry.add_loader`) may register a name on first lookup instead: the
Django task backend imports a task by its module path, as Django's own
workers do, so a worker need not import every tasks module up front. The registry
holds anything ``Defined`` (a ``JobFunction``), typed by the low protocol, so
it never imports the decorator's module.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar, overload

from queue_runtime.definition import Defined, JobDefinition
from queue_runtime.errors import DuplicateJob, UnknownJob

J = TypeVar("J", bound=Defined)
Loader = Callable[[str], Defined | None]  # a name -> the job to register under it, or None


class Registry:
    """Job names -> registered jobs (``JobFunction`` objects, or any ``Defined``)."""

    def __init__(self) -> None:
        self._jobs: dict[str, Defined] = {}
        self._loaders: list[Loader] = []

    def add_loader(self, loader: Loader) -> None:
        """Ask ``loader`` for names not registered yet (once per process and loader)."""
        if loader not in self._loaders:
            self._loaders.append(loader)

    def _load(self, name: str) -> Defined | None:
        for loader in self._loaders:
            found = loader(name)
            if found is not None:
                self.add(found)
                return found
        return None

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
        found = self._jobs.get(name) or self._load(name)
        if found is None:
            raise UnknownJob(f"{name!r} (is its module imported by the worker?)")
        if kind is not None and not isinstance(found, kind):
            raise UnknownJob(f"{name!r} is a {type(found).__name__}, not a {kind.__name__}")
        return found

    def definition(self, name: str) -> JobDefinition:
        return self.get(name).definition

    def names(self) -> list[str]:
        return sorted(self._jobs)

    def __contains__(self, name: object) -> bool:
        return name in self._jobs or (isinstance(name, str) and self._load(name) is not None)


default_registry = Registry()
