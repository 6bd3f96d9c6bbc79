"""Turn selected targets into file changes: rewrite, register, verify, write.

Pure until :func:`write_changes`: planning reads sources from a dict and
returns new texts, so the same plan can be shown as a diff, written, or
split into one commit per job. Nothing is written unless every changed
module parses (libcst and CPython's own compiler both accept it).
"""

from __future__ import annotations

import os
import shutil
import sys
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import libcst as cst

from codemods._edits import django_status, flask_status, register, status_endpoint, wrappers
from codemods._edits.imports import project_packages
from codemods._edits.status_endpoint import AppModule
from codemods._rewriter import rewrite_file
from codemods._types import CodemodError, FileChange, SiteOutcome, Status, StatusRoute, Target
from inventory.config import MigrationTarget
from inventory.models import Framework


class ConcurrentChangeError(CodemodError):
    """A file changed between planning and writing; nothing was written."""


@dataclass
class Plan:
    changes: list[FileChange] = field(default_factory=list)
    outcomes: list[SiteOutcome] = field(default_factory=list)
    # Jobs this plan moves: a site rewritten, or the @job decorator added now.
    moved: list[str] = field(default_factory=list)
    refused: dict[str, str] = field(default_factory=dict)
    # The first module whose rewrite cannot be written, with the reason (see plan_changes).
    bad: tuple[str, str] | None = None


def plan_changes(
    sources: dict[str, str],
    targets: list[Target],
    decorations: dict[str, str],
    app: AppModule | None = None,
    api: MigrationTarget = MigrationTarget.QUEUE_RUNTIME,
) -> Plan:
    """Rewrite ``targets`` in ``sources`` (path -> text) and register the jobs that moved.

    ``decorations`` maps a job's qualname to the arguments of its ``@job(...)``
    (``@task(...)`` when ``api`` is Django's);
    ``app`` is where the status endpoint goes when a handler now answers 202.

    A module that cannot be rewritten safely (the result would not parse, or this Python
    cannot check it) holds back only the jobs with an edit in it, all their sites together
    (a half-moved job would not import); the other jobs still move.
    """
    held: list[SiteOutcome] = []
    refused: dict[str, str] = {}
    while True:
        plan = _plan_once(sources, targets, decorations, app, api)
        if plan.bad is None:
            break
        path, reason = plan.bad
        jobs = {t.job.qualname for t in targets if path in _paths(t)}
        if not jobs:  # an added status endpoint or route: nothing to hold back but all
            _refuse_all(plan, path, reason)
            break
        refused[path] = reason
        held += [_held(t, path, reason) for t in targets if t.job.qualname in jobs]
        targets = [t for t in targets if t.job.qualname not in jobs]
    plan.outcomes.extend(held)
    plan.refused.update(refused)
    return plan


def _paths(target: Target) -> set[str]:
    """Every module a target's move edits: its site, the job's definition, its wrapper."""
    paths = {target.site.location.path}
    if target.job.location is not None:
        paths.add(_def_path(target))
    if target.wrapper is not None:
        paths.add(target.wrapper.path)
    return paths


def _held(target: Target, path: str, reason: str) -> SiteOutcome:
    return SiteOutcome(
        site=target.site, status=Status.SKIPPED, reason=f"not applied: {path}: {reason}"
    )


def _plan_once(
    sources: dict[str, str],
    targets: list[Target],
    decorations: dict[str, str],
    app: AppModule | None,
    api: MigrationTarget = MigrationTarget.QUEUE_RUNTIME,
) -> Plan:
    plan = Plan()
    sources = dict(sources)
    modules: dict[str, cst.Module] = {}
    by_path: dict[str, list[Target]] = defaultdict(list)
    for target in targets:
        by_path[target.site.location.path].append(target)
    for path, file_targets in sorted(by_path.items()):
        modules[path] = _rewrite_file(path, sources[path], file_targets, plan)
    moved = {o.site.job for o in plan.outcomes if o.status in (Status.REWRITTEN, Status.ALREADY)}
    moved_targets = [t for t in targets if t.job.qualname in moved]
    _register_jobs(sources, modules, moved_targets, decorations, plan, api)
    accepted = any(
        o.status is Status.REWRITTEN and o.site.handler is Framework.FASTAPI
        for o in plan.outcomes
        if o.site.result_used
    )
    if accepted and app is not None:
        _add_status_endpoint(app, sources, modules, plan)
    for route in _status_routes(targets, plan):
        _add_status_route(route, sources, modules, plan)
    _collect(sources, modules, plan)
    return plan


def _add_status_endpoint(
    app: AppModule, sources: dict[str, str], modules: dict[str, cst.Module], plan: Plan
) -> None:
    sources.setdefault(app.path, app.source)
    module = modules.get(app.path) or cst.parse_module(sources[app.path])
    modules[app.path] = status_endpoint.add_to_app(app, module)
    if not app.router_exists:
        after = status_endpoint.ROUTER_SOURCE
        plan.changes.append(FileChange(path=app.router_path, before="", after=after, created=True))


def _status_routes(targets: list[Target], plan: Plan) -> list[StatusRoute]:
    """The Flask and Django status routes the rewritten 202 answers point at, once each."""
    rewritten = [o.site for o in plan.outcomes if o.status is Status.REWRITTEN]
    routes = [t.status_route for t in targets if t.status_route and t.site in rewritten]
    return list(dict.fromkeys(r for r in routes if r is not None))


def _add_status_route(
    route: StatusRoute, sources: dict[str, str], modules: dict[str, cst.Module], plan: Plan
) -> None:
    sources.setdefault(route.path, route.source)
    module = modules.get(route.path) or cst.parse_module(sources[route.path])
    if route.framework is Framework.FLASK:
        modules[route.path] = flask_status.add_route(route, module)
        return
    modules[route.path] = django_status.add_pattern(route, module)
    view = django_status.view_path(route)
    if not route.view_exists and all(c.path != view for c in plan.changes):
        after = django_status.VIEW_SOURCE
        plan.changes.append(FileChange(path=view, before="", after=after, created=True))


def _rewrite_file(path: str, source: str, targets: list[Target], plan: Plan) -> cst.Module:
    rewritten = rewrite_file(path, source, targets)
    plan.outcomes.extend(o.site_outcome() for o in rewritten.outcomes)
    return rewritten.module or cst.parse_module(source)


def _register_jobs(
    sources: dict[str, str],
    modules: dict[str, cst.Module],
    moved: list[Target],
    decorations: dict[str, str],
    plan: Plan,
    api: MigrationTarget = MigrationTarget.QUEUE_RUNTIME,
) -> None:
    """Decorate each moved job where it is defined (its module may also hold sites)."""
    by_path: dict[str, dict[str, str]] = defaultdict(dict)
    scheduled = _schedules(moved, plan)
    for target in moved:
        if target.delivery:  # the delivery job is the runtime's own: nothing to register here
            continue
        wrapper = target.wrapper
        if wrapper is not None:  # the wrapper is the job; the function it calls stays as it is
            module = modules.get(wrapper.path) or cst.parse_module(sources[wrapper.path])
            modules[wrapper.path] = wrappers.add_wrapper(module, wrapper)
        qualpath = wrapper.name if wrapper is not None else target.qualpath
        schedule = scheduled.get(target.job.qualname)
        by_path[_job_path(target)][qualpath] = ", ".join(
            [decorations[target.job.qualname], *([schedule] if schedule else [])]
        )
    decorated: set[tuple[str, str]] = set()
    first_party = project_packages(sources, (t.job.qualname for t in moved))
    for path, arguments in sorted(by_path.items()):
        module = modules.get(path) or cst.parse_module(sources[path])
        modules[path], added = register.register(module, arguments, first_party, api)
        decorated.update((path, qualpath) for qualpath in added)
    rewritten = {o.site.job for o in plan.outcomes if o.status is Status.REWRITTEN}
    changed = [
        t
        for t in moved
        if t.job.qualname in rewritten
        or (_job_path(t), t.wrapper.name if t.wrapper else t.qualpath) in decorated
    ]
    plan.moved.extend(dict.fromkeys(t.job.qualname for t in changed))


def _schedules(moved: list[Target], plan: Plan) -> dict[str, str]:
    """``every=``/``cron=`` per job whose scheduler registration was removed here, and only then:
    a job the runtime ticks must not also run from a registration still in place."""
    removed = [o.site for o in plan.outcomes if o.status is Status.REWRITTEN]
    return {t.job.qualname: t.schedule for t in moved if t.schedule and t.site in removed}


def _job_path(target: Target) -> str:
    """Where the registered job lives: its wrapper's module, else its own definition's."""
    return target.wrapper.path if target.wrapper is not None else _def_path(target)


def _def_path(target: Target) -> str:
    assert target.job.location is not None  # selection only lets jobs with a definition through
    return target.job.location.path


def _collect(sources: dict[str, str], modules: dict[str, cst.Module], plan: Plan) -> None:
    for path, module in sorted(modules.items()):
        after = module.code
        if after == sources[path]:
            continue
        problem = checkable(sources[path], path)
        if problem is None and (error := verify(after, path)) is not None:
            problem = f"the rewritten module would not parse: {error}"
        if problem is not None:
            plan.bad = (path, problem)
            plan.changes.clear()
            return
        plan.changes.append(FileChange(path=path, before=sources[path], after=after))


def _refuse_all(plan: Plan, path: str, reason: str) -> None:
    """One bad module stops the whole change set: a half-applied move would not import."""
    plan.changes.clear()
    plan.refused[path] = reason
    plan.moved.clear()
    for i, outcome in enumerate(plan.outcomes):
        if outcome.status is Status.REWRITTEN:
            plan.outcomes[i] = outcome.model_copy(
                update={"status": Status.SKIPPED, "reason": f"not applied: {path}: {reason}"}
            )


def checkable(before: str, path: str) -> str | None:
    """None when this Python compiles the original module, so its rewrite can be checked."""
    if before == "" or verify(before, path) is None:
        return None
    version = ".".join(map(str, sys.version_info[:2]))
    return (
        f"Python {version}, which runs migrator, does not compile this module as it is (newer "
        "syntax?), so its rewrite cannot be checked: run migrator with the project's Python"
    )


def verify(text: str, path: str) -> str | None:
    """None when both libcst and CPython parse ``text``, else the error."""
    try:
        cst.parse_module(text)
        compile(text, path, "exec", dont_inherit=True)
    except (cst.ParserSyntaxError, SyntaxError, ValueError) as exc:
        return str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return None


def read_source(path: Path) -> str:
    """The exact text (no newline translation), so untouched bytes stay untouched."""
    return path.read_bytes().decode("utf-8")


def write_changes(root: Path, changes: list[FileChange]) -> None:
    """Write every change, after checking that none parses badly or changed meanwhile."""
    for change in changes:
        problem = verify(change.after, change.path)
        if problem is not None:
            raise CodemodError(
                f"{change.path}: refusing to write code that does not parse: {problem}"
            )
        if _current(root / change.path) != change.before:
            raise ConcurrentChangeError(
                f"{change.path} changed since the plan was made; nothing written"
            )
    for change in changes:
        _atomic_write(root / change.path, change.after)


def _current(path: Path) -> str:
    """The file's text; empty for a file that does not exist (yet)."""
    return read_source(path) if path.exists() else ""


def _atomic_write(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.migrator-tmp")
    tmp.write_bytes(text.encode("utf-8"))
    if path.exists():
        shutil.copymode(path, tmp)  # keep the executable bit and permissions of the original
    os.replace(tmp, path)
