"""Building a :class:`Job` from a function's traces and its verdict."""

from __future__ import annotations

from collections.abc import Mapping

from inventory._classify._effects import EffectAnalysis
from inventory._classify._enqueued import EnqueuedTasks
from inventory._classify._index import SymbolIndex
from inventory._classify._lifetime import endless_loop
from inventory._classify._tasks import DJANGO_TASK_DECORATORS, broker_of
from inventory._classify._trace import location
from inventory._classify._verdict import Enqueues, Verdict, decide
from inventory.config import JobSetting, ScanConfigError, key_mismatch
from inventory.models import Evidence, Job, Location
from inventory.summary import FunctionInfo


def build_job(
    fn: FunctionInfo,
    index: SymbolIndex,
    analysis: EffectAnalysis,
    settings: Mapping[str, JobSetting],
    enqueued: EnqueuedTasks,
    name: str | None = None,
) -> Job:
    """``name``: the job's name in ``settings`` when it is not ``fn.qualname`` (a library
    callable's)."""
    setting = settings.get(name or fn.qualname)
    traces = analysis.traces(fn.qualname)
    parameters = [p for p in fn.params if p not in ("self", "cls")]
    if setting is not None and setting.key:
        mismatch = key_mismatch(fn.qualname, setting.key, parameters)
        if mismatch:
            raise ScanConfigError(mismatch)

    def task_verdict(task: str, enqueues: Enqueues) -> Verdict:
        own = index.functions[task]
        traced = analysis.traces(task)
        return decide(task, own.params, traced, settings.get(task), enqueues)

    verdict = decide(fn.qualname, fn.params, traces, setting, enqueued.of(traces, task_verdict))
    loop = _endless_loop(fn, index, analysis)
    return Job(
        qualname=fn.qualname,
        location=location(index.function_path(fn.qualname), fn.span),
        idempotency=verdict.idempotency,
        confidence=verdict.confidence,
        effects=[t.effect for t in traces if t.is_effect],
        evidence=_with_loop(loop, _with_closure(fn.qualname, verdict.evidence)),
        suggested_key=verdict.suggested_key,
        pinned=verdict.pinned,
        is_async=fn.is_async,
        parameters=parameters,
        fast_track=verdict.fast_track,
        declared_key=verdict.declared_key,
        keyless_idempotency=verdict.keyless,
        unexplained=list(verdict.unexplained),
        django_task=bool(DJANGO_TASK_DECORATORS.intersection(fn.decorators)),
        task_of=broker_of(index, fn.decorators),
        rebound_at=_rebound_at(fn, index),
        endless_loop=loop,
    )


def _endless_loop(
    fn: FunctionInfo, index: SymbolIndex, analysis: EffectAnalysis
) -> Location | None:
    found = endless_loop(fn.qualname, index, analysis.graph)
    if found is None:
        return None
    holder, fact = found
    return location(index.function_path(holder.qualname), fact.span)


def _rebound_at(fn: FunctionInfo, index: SymbolIndex) -> list[int]:
    """The other statements of its module (or class body) that bind the function's name:
    a rebinding after it, or, for a definition in a later branch, the first one."""
    summary = index.home.get(fn.qualname)
    if summary is None or not summary.rebound:
        return []
    local = fn.qualname.removeprefix(f"{summary.module}.")
    return [line for line in summary.rebound.get(local, []) if line != fn.span.line]


def _with_loop(loop: Location | None, evidence: list[Evidence]) -> list[Evidence]:
    """A job that never returns says so (before the verdict's reason)."""
    if loop is None:
        return evidence
    note = Evidence(
        message="never returns: this loop runs until the process stops; a worker could not "
        "finish the job (its round could be a periodic job)",
        location=loop,
    )
    return [*evidence[:-1], note, *evidence[-1:]]


_LOCALS = ".<locals>."


def _with_closure(qualname: str, evidence: list[Evidence]) -> list[Evidence]:
    """A job nested in another function: a worker cannot import it (before the verdict's reason)."""
    if _LOCALS not in qualname:
        return evidence
    outer = qualname.rsplit(_LOCALS, 1)[0]
    note = Evidence(
        message=f"defined inside {outer}: a worker cannot import a closure; lift it to module "
        "level, passing what it uses from the enclosing scope as parameters, before moving it"
    )
    return [*evidence[:-1], note, *evidence[-1:]]
