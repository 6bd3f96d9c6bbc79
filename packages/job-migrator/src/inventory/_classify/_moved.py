"""Moved sites: which ``fn.enqueue(...)`` calls hand a ``queue_runtime`` job to the queue.

The extractor reports every ``x.enqueue(...)`` / ``x.options(...).enqueue(...)`` shape
(``inventory._extract.detectors._sites_moved``); here ``x`` is resolved across modules
(re-exports included) and kept only when it is a project function decorated with
``queue_runtime``'s ``@job``. An ``.enqueue`` of anything else (an RQ queue, a Django
``@task``, a project object) is no moved site.

The runtime registers such a function as ``module.qualname`` (``queue_runtime.definition.
origin``), which is the qualified name the inventory gives it, unless ``@job(name=...)``
names it otherwise: then :func:`registered_names` reports the job, and its sites, under
that name (the one ``migrator rollout set`` and the dashboard use).
"""

from __future__ import annotations

import ast

from inventory._classify._index import SymbolIndex, SymbolKind
from inventory._classify._trace import location
from inventory.models import CallSite, Job, Pattern
from inventory.summary import FunctionInfo

JOB_DECORATORS = frozenset({"queue_runtime.job", "queue_runtime.jobs.job"})
_PERIODIC = frozenset({"every", "cron"})  # ``@job(every="15m")``: workers enqueue it per tick


def moved_job(index: SymbolIndex, target: str) -> str | None:
    """The project function a moved site enqueues; None when ``target`` is no ``@job``."""
    found = index.resolve(target)
    fn = index.functions.get(found.name) if found.kind == SymbolKind.FUNCTION else None
    if fn is None or not is_registered_job(fn):
        return None
    return fn.qualname


def is_registered_job(fn: FunctionInfo) -> bool:
    return bool(JOB_DECORATORS.intersection(fn.decorators))


def registered_name(fn: FunctionInfo) -> str:
    """The name the runtime registers ``fn`` under: ``@job(name="...")`` when given literally."""
    for dotted, source in zip(fn.decorators, fn.decorator_sources, strict=False):
        if dotted in JOB_DECORATORS:
            named = _literal_name(source)
            if named:
                return named
    return fn.qualname


def periodic_sites(index: SymbolIndex) -> list[CallSite]:
    """``@job(every=...)`` / ``@job(cron=...)``: a scheduler site ``apply`` moved into the
    decorator (no enqueue call is left); the moved site is the decorated function."""
    found = []
    for fn in index.functions.values():
        summary = index.home.get(fn.qualname)
        if summary is None or not is_registered_job(fn) or not _periodic(fn):
            continue
        found.append(
            CallSite(
                location=location(summary.path, fn.span),
                pattern=Pattern.ENQUEUE,
                job=fn.qualname,
                target_source=f"@job on {fn.qualname.rpartition('.')[2]} (periodic)",
            )
        )
    return found


def _periodic(fn: FunctionInfo) -> bool:
    return any(
        dotted in JOB_DECORATORS and _PERIODIC.intersection(_keywords(source))
        for dotted, source in zip(fn.decorators, fn.decorator_sources, strict=False)
    )


def _keywords(source: str) -> dict[str, ast.expr]:
    try:
        node = ast.parse(source.strip(), mode="eval").body
    except SyntaxError:
        return {}
    if not isinstance(node, ast.Call):
        return {}
    return {k.arg: k.value for k in node.keywords if k.arg}


def _literal_name(source: str) -> str | None:
    value = _keywords(source).get("name")
    if isinstance(value, ast.Constant) and isinstance(value.value, str):
        return value.value
    return None


def registered_names(
    sites: list[CallSite], jobs: list[Job], index: SymbolIndex
) -> tuple[list[CallSite], list[Job]]:
    """Jobs and their sites under the name the runtime registers (``@job(name="...")``)."""
    names = {}
    for job in jobs:
        fn = index.functions.get(job.qualname)
        if fn is not None and is_registered_job(fn) and registered_name(fn) != job.qualname:
            names[job.qualname] = registered_name(fn)
    if not names:
        return sites, jobs
    renamed = [s.model_copy(update={"job": names[s.job]}) if s.job in names else s for s in sites]
    jobs = [
        j.model_copy(update={"qualname": names[j.qualname]}) if j.qualname in names else j
        for j in jobs
    ]
    return renamed, jobs
