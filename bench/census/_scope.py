"""Which sinks no request can reach: the census's rule for a *correct* miss.

``migrator scan`` looks for work started inside the web process: job sites (threads,
executors, tasks, hooks, receivers, schedulers) and slow work inside request handlers.
A sink that only a command line, a job already on a queue, or import-time code reaches is
none of that, and the scan is right to leave it out. The rule decides this from the
package's code alone, by walking *up* from the sink's enclosing function through everything
that mentions it (``_mentions``: by name, over-approximating the callers) to the *roots*,
the places nothing else in the package mentions, and naming each root:

* ``queued_task``: a function a job queue runs in a worker: decorated as a task (Celery
  ``@shared_task`` / ``@app.task``, Dramatiq ``@actor``, Huey ``@task`` / ``@db_task`` /
  ``@periodic_task``, RQ's ``@job``), a method of a Celery ``Task`` class, or handed to a
  queue where it is mentioned (``f.delay(...)``, ``queue.enqueue(f, ...)``, ``dispatch(f)``).
* ``cli``: a command line: a method of a Django management command class (a
  ``BaseCommand`` subclass; ``call_command("name")`` elsewhere is followed like a call), a
  click / typer ``@command`` / ``@group`` / ``@callback``, Flask's ``@app.cli.command``,
  code under ``if __name__ == "__main__":`` or in a ``__main__.py``.
* ``import_time``: called by a module or class body (start-up code: ``app = create_app()``),
  or the sink itself sits in a module or class body.
* ``unreferenced``: nothing in the package names it: a module-level function or a private
  method nobody calls (dead code, or an API for other packages, or only tests call it: tests
  are not read).
* ``unknown``: anything that may run in a request: a function named (not called) by a
  module or class body (a URLconf, a registry, ``atexit.register``), a decorator this rule
  does not know (a route, a receiver, a hook), a public or special method of a class with a
  base outside the package (a framework may call it: ``View.get``, ``Form.clean``), a public
  method nothing mentions (duck-typed frameworks call ``on_get``), or a walk too long to
  finish.

A sink is a correct miss when none of its roots is ``unknown``. Its bucket names the first
of ``queued_task``, ``cli``, ``import_time``, ``unreferenced`` among its roots. Because the
mentions over-approximate the callers (any ``x.get`` mentions every ``get``), a sink left in
``no_entry_point`` may still be a correct miss; one moved out of it has no caller the rule
could not explain. Known blind spots: a function called only from outside Python (a WSGI
``application`` named in a server's config, a console script entry point) counts as
unreferenced; code a command line or a task starts in a thread is counted with them.
"""

from __future__ import annotations

from enum import StrEnum

from bench.census._mentions import ClassDef, Def, Mentions, Place

_TASK_LIBRARIES = frozenset({"celery", "dramatiq", "huey"})
_TASK_DECORATORS = frozenset(
    {"task", "shared_task", "periodic_task", "db_task", "db_periodic_task", "actor"}
)
_RQ = ("rq.", "django_rq.")
_CLI_LIBRARIES = ("click.", "typer.", "asyncclick.", "rich_click.", "cloup.")
_CLI_NAMES = frozenset(c.rstrip(".") for c in _CLI_LIBRARIES)
_CLI_DECORATORS = frozenset({"command", "group", "callback"})
# Decorators that wrap a function without registering it anywhere.
_TRANSPARENT = frozenset(
    {"staticmethod", "classmethod", "property", "cached_property", "setter", "getter"}
    | {"deleter", "abstractmethod", "abstractproperty", "overload", "override", "final"}
    | {"wraps", "lru_cache", "cache", "contextmanager", "asynccontextmanager", "atomic"}
    | {"singledispatch", "singledispatchmethod"}
)
_CONSTRUCTORS = frozenset({"__init__", "__new__", "__post_init__"})
_COMMAND_BASES = ("django.core.management.",)
_TASK_BASES = frozenset({"celery.Task", "celery.app.task.Task"})
_WALK_LIMIT = 3000


class Root(StrEnum):
    QUEUED_TASK = "queued_task"
    CLI = "cli"
    IMPORT_TIME = "import_time"
    UNREFERENCED = "unreferenced"
    UNKNOWN = "unknown"


_PLACE_ROOT = {
    Place.QUEUED: Root.QUEUED_TASK,
    Place.MAIN: Root.CLI,
    Place.IMPORT_CALL: Root.IMPORT_TIME,
    Place.MODULE_REF: Root.UNKNOWN,
}
_ORDER = (Root.QUEUED_TASK, Root.CLI, Root.IMPORT_TIME, Root.UNREFERENCED)


def offline_root(roots: frozenset[Root]) -> Root | None:
    """The bucket of a correct miss (see the module docstring), or None when some root may
    be a request."""
    if Root.UNKNOWN in roots:
        return None
    return next((r for r in _ORDER if r in roots), Root.UNREFERENCED)


class Scope:
    """The roots of functions of one package (memoised per function)."""

    def __init__(self, mentions: Mentions) -> None:
        self.m = mentions
        self.task_package = any(names & _TASK_LIBRARIES for names in mentions.imports.values())
        self._by_name: dict[str, list[ClassDef]] = {}
        for cls in mentions.classes.values():
            self._by_name.setdefault(cls.name, []).append(cls)
        self._class_kind: dict[str, frozenset[Root]] = {}
        self._memo: dict[str, frozenset[Root]] = {}

    def roots(self, function: str, line: int) -> frozenset[Root]:
        """The roots of the sink at ``line`` whose enclosing function (or module, or class)
        the sink finder named ``function``."""
        if function not in self.m.defs:
            return frozenset({self._body_root(function, line)})
        if function not in self._memo:
            self._memo[function] = self._walk(function)
        return self._memo[function]

    def _body_root(self, scope: str, line: int) -> Root:
        if scope in self.m.classes:
            return Root.IMPORT_TIME
        guards = self.m.main_lines.get(scope)
        if guards is None and scope not in self.m.imports:
            return Root.UNKNOWN  # not a module, class or def this index knows
        if any(start <= line <= end for start, end in guards or ()):
            return Root.CLI
        return Root.CLI if scope.endswith("__main__") else Root.IMPORT_TIME

    def _walk(self, start: str) -> frozenset[Root]:
        found: set[Root] = set()
        seen: set[str] = set()
        todo = [start]
        while todo:
            name = todo.pop()
            if name in seen:
                continue
            seen.add(name)
            if len(seen) > _WALK_LIMIT:
                return frozenset({Root.UNKNOWN})
            roots, callers = self._step(self.m.defs[name])
            found |= roots
            if Root.UNKNOWN in found:
                return frozenset({Root.UNKNOWN})
            todo.extend(c for c in callers if c in self.m.defs)
        return frozenset(found)

    def _step(self, d: Def) -> tuple[set[Root], list[str]]:
        """The roots ``d`` itself is, and the functions that mention it."""
        roots = {r for r in (self._decorator_root(x, d.module) for x in d.decorators) if r}
        roots |= self._class_roots(d)
        if d.parent is not None:
            return roots, [d.parent]
        callers: list[str] = []
        mentions = [(p, s) for p, s in self._mentions_of(d) if s != d.qualname]
        for place, scope in mentions:
            if place is Place.CALLER:
                callers.append(scope)
            else:
                roots.add(_PLACE_ROOT[place])
        if not mentions and not roots:
            roots.add(Root.UNREFERENCED if _may_be_dead(d) else Root.UNKNOWN)
        return roots, callers

    def _mentions_of(self, d: Def) -> set[tuple[Place, str]]:
        found = self.m.mentioned(d.name)
        if d.cls is not None and d.name in _CONSTRUCTORS:
            for name in self._family(d.cls):
                found |= self.m.mentioned(name)
        if d.cls is not None and ".management.commands." in d.module:
            found |= self.m.mentioned(d.module.rpartition(".")[2])  # call_command("name")
        return found

    def _decorator_root(self, dotted: str, module: str) -> Root | None:
        last = dotted.rpartition(".")[2]
        if last in _TRANSPARENT:
            return None
        cli = dotted.startswith((*_CLI_LIBRARIES, "flask.cli.", "django.core.management."))
        if cli and last not in _CLI_DECORATORS:
            return None  # ``@click.option``, ``@with_appcontext``, ``@no_translations``
        if last in _TASK_DECORATORS and (self.task_package or dotted.startswith("celery.")):
            return Root.QUEUED_TASK
        if last == "job" and dotted.startswith(_RQ):
            return Root.QUEUED_TASK
        if last in _CLI_DECORATORS and (dotted.startswith(_CLI_LIBRARIES) or ".cli." in dotted):
            return Root.CLI
        if last in _CLI_DECORATORS and self.m.imports.get(module, set()) & _CLI_NAMES:
            return Root.CLI  # ``@tracking.command()`` on a click group of this module
        return Root.UNKNOWN

    def _class_roots(self, d: Def) -> set[Root]:
        if d.cls is None:
            return set()
        kind = self._kind_of(d.cls)
        if kind & {Root.CLI, Root.QUEUED_TASK}:
            return set(kind)
        hook = not d.name.startswith("_") or (d.name.startswith("__") and d.name.endswith("__"))
        if Root.UNKNOWN in kind and hook and d.name not in _CONSTRUCTORS:
            return {Root.UNKNOWN}
        return set()

    def _kind_of(self, qualname: str) -> frozenset[Root]:
        """{CLI}: a management command class; {QUEUED_TASK}: a Celery Task class; {UNKNOWN}:
        some base is outside the package; empty: only package bases (or none)."""
        if qualname not in self._class_kind:
            self._class_kind[qualname] = frozenset()  # a cycle of bases adds nothing
            cls = self.m.classes[qualname]
            kinds: set[Root] = set()
            for base in cls.bases:
                kinds |= self._base_kind(base)
            if Root.CLI in kinds or Root.QUEUED_TASK in kinds:
                kinds -= {Root.UNKNOWN}
            self._class_kind[qualname] = frozenset(kinds)
        return self._class_kind[qualname]

    def _base_kind(self, base: str) -> set[Root]:
        if base.startswith(_COMMAND_BASES) and base.endswith("Command"):
            return {Root.CLI}
        if base in _TASK_BASES:
            return {Root.QUEUED_TASK}
        outside = "." in base and base.split(".")[0] not in self.m.roots
        local = [] if outside else self._by_name.get(base.rpartition(".")[2], [])
        if not local:
            return set() if base in ("object", "builtins.object") else {Root.UNKNOWN}
        kinds: set[Root] = set()
        for cls in local:
            kinds |= self._kind_of(cls.qualname)
        return kinds

    def _family(self, qualname: str) -> set[str]:
        """The class's name and the names of the package classes deriving from it."""
        names = {self.m.classes[qualname].name}
        grew = True
        while grew:
            grew = False
            for cls in self.m.classes.values():
                if cls.name not in names and any(b.rpartition(".")[2] in names for b in cls.bases):
                    names.add(cls.name)
                    grew = True
        return names


def _may_be_dead(d: Def) -> bool:
    """Nothing mentions ``d``: dead (or an API for others) unless a framework may call it by
    its name: a public or special method."""
    return d.cls is None or (d.name.startswith("_") and not d.name.endswith("__"))
