"""The classifier: join file summaries into call sites and jobs with idempotency verdicts.

Pure and deterministic: the same summaries, config and catalogue give the
same sorted output. Only functions reachable from job sites and request
handlers are analysed.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from inventory._catalogue import Catalogue
from inventory._classify._admin import admin_hooks, admin_models, admin_saved
from inventory._classify._arguments import caller_types, sent_types
from inventory._classify._changes import ParameterChanges
from inventory._classify._effects import EffectAnalysis
from inventory._classify._enqueued import EnqueuedTasks
from inventory._classify._fingerprint import with_fingerprints
from inventory._classify._graph import CallGraph
from inventory._classify._guesses import guessed_verdict
from inventory._classify._index import SymbolIndex
from inventory._classify._jobs import build_job
from inventory._classify._library_call import LIBRARY_JOB, NO_PROJECT_FUNCTION
from inventory._classify._lifetime import SPAWNS, is_service
from inventory._classify._local import LocalEffects
from inventory._classify._moved import periodic_sites, registered_names
from inventory._classify._registered import mark_handlers, register_handlers
from inventory._classify._sites import (
    SiteTarget,
    direct_call_sites,
    library_job,
    raw_call_site,
    resolve_site,
    sender_class,
    signal_receivers,
)
from inventory._classify._statements import with_statement_types
from inventory._classify._surroundings import with_surroundings
from inventory._classify._wrappers import with_wrapped_calls
from inventory.config import JobSetting, MigratorConfig
from inventory.models import CallSite, Evidence, Framework, Job, Pattern
from inventory.summary import FileSummary, RawSite, Span, TargetKind

if TYPE_CHECKING:
    from inventory._thirdparty import Library

__all__ = ["classify"]


def classify(
    summaries: list[FileSummary],
    config: MigratorConfig,
    catalogue: Catalogue,
    library: Library | None = None,
) -> tuple[list[CallSite], list[Job]]:
    """``library``: the environment's installed source, read where jobs call into it."""
    ordered = sorted(summaries, key=lambda s: s.path)
    index = SymbolIndex(ordered, library)
    register_handlers(ordered, index)  # views registered in another module than their own
    with index.provisional_orders():  # asked before the libraries the classes use are read
        admins = admin_models(ordered, index)
        # A model's save/delete the admin's requests run (Django's default ModelAdmin hooks).
        saved = admin_saved(index, admins)
    mark_handlers(ordered, index, saved, Framework.DJANGO)
    catalogue = catalogue.typing_arguments(lambda call: with_statement_types(call, index))
    graph = CallGraph(index, catalogue.names_exactly(index.functions), catalogue.explains)
    hooks = admin_hooks(index, admins)
    graph.set_admin_objects(hooks)  # ``obj`` of a registered ModelAdmin's hooks
    sites = _raw_sites(ordered, index, graph) + periodic_sites(index)
    sites, wrapped = with_wrapped_calls(sites, ordered, index, graph)  # project spawn wrappers
    sent_types(index, graph)  # a receiver's keywords, from its signal's sends
    caller_types(index, graph, sites)  # unannotated parameters, from callers
    dynamic = _dynamic_by_function(ordered)
    local = LocalEffects(graph, catalogue, dynamic)
    analysis = EffectAnalysis(graph, local)
    # A library's code is read where the project's calls reach it: its functions are never
    # handlers of their own (a library form field's hook would report a site in site-packages).
    handlers = [
        fn
        for fn in index.functions.values()
        if fn.handler is not None and not index.is_library(fn.qualname)
    ]
    analysis.analyse([*(s.job for s in sites), *(h.qualname for h in handlers)])
    sites = [s for s in sites if not _idle_receiver(s, index, analysis)]
    taken = _site_spans(ordered)
    for function, spans in wrapped.items():
        taken.setdefault(function, []).extend(spans)
    for handler in sorted(handlers, key=lambda f: f.qualname):
        sites += direct_call_sites(handler, graph, analysis, taken.get(handler.qualname, []))
    names = sorted(
        {s.job for s in sites if s.job in index.functions and not s.job.endswith(LIBRARY_JOB)}
    )
    settings = _job_settings(config, index)
    enqueued = EnqueuedTasks(index, analysis)
    jobs = [build_job(index.functions[n], index, analysis, settings, enqueued) for n in names]
    jobs += _library_jobs(sites, index, analysis, settings, enqueued)
    jobs = _with_changes(jobs, local.changes)  # the one reading of what each job changes
    sites = _site_jobs(sites)
    verdicts = {job.qualname: job.idempotency for job in jobs}
    sites = [
        s.model_copy(update={"idempotency": guessed_verdict(s, verdicts[s.job])})
        if s.job in verdicts
        else s
        for s in sites
    ]
    sites, jobs = registered_names(sites, jobs, index)  # ``@job(name=...)`` wins
    sites = with_surroundings(sites, index.functions)  # try/except, transaction.atomic
    return with_fingerprints(sorted(sites, key=_site_order)), jobs


def _with_changes(jobs: list[Job], changes: ParameterChanges) -> list[Job]:
    """Each job with what it changes of its parameters (``Job.changes``)."""
    return [
        job.model_copy(update={"changes": changes.of(job.qualname, job.parameters)})
        if job.qualname in changes.index.functions
        else job
        for job in jobs
    ]


def _idle_receiver(site: CallSite, index: SymbolIndex, analysis: EffectAnalysis) -> bool:
    """A signal receiver that returns a value and reaches no effect and no call it could not
    follow: a plugin registry's answer (``return [CsvExporter]``), a menu's entries. The
    sender reads the value, so it never leaves the request (apply refuses it), and nothing in
    it is work a queue would take: not a site, as a request handler is one only where slow
    work is reached. A receiver returning nothing stays a site even when no effect is found:
    that may be a blind spot of the scan (a related manager's ``remove``), never silence."""
    fn = index.functions.get(site.job)
    if site.pattern != Pattern.SIGNAL_RECEIVER or fn is None or not fn.returns_value:
        return False
    return not any(t.is_effect or t.gap for t in analysis.traces(site.job))


def _raw_sites(
    summaries: list[FileSummary], index: SymbolIndex, graph: CallGraph
) -> list[CallSite]:
    sites: list[CallSite] = []
    receivers = signal_receivers(summaries, index)
    for summary in summaries:
        for raw in summary.sites:
            target = resolve_site(index, raw, receivers)
            if target is None:
                continue
            if (
                raw.pattern in SPAWNS
                and target.job
                and is_service(target.job, index, graph, callees=False)
            ):
                continue  # a thread or task serving until the process stops: its machinery
            if target.library is not None:
                target = _register_library_job(index, summary, raw, target)
            if target.job and raw.enclosing_function and raw.pattern != Pattern.SIGNAL_RECEIVER:
                # Connecting a receiver runs nothing: the connecting function (ready(),
                # module setup) does not do the receiver's work.
                graph.add_site_edge(raw.enclosing_function, target.job)
            if target.job and raw.pattern == Pattern.SIGNAL_RECEIVER:
                _type_instance(index, graph, summary.module, raw, target.job)
                _type_pk_set(index, graph, summary.module, raw, target.job)
            sites.append(raw_call_site(summary, raw, target))
    return sites


def _register_library_job(
    index: SymbolIndex, summary: FileSummary, raw: RawSite, target: SiteTarget
) -> SiteTarget:
    """``on_commit(partial(default_storage.delete, name))``: the library callable is
    analysed as a one-line job calling it (registered under a key that is no dotted
    name, so no project call ever resolves to it); the site names the callable."""
    assert target.library is not None
    fn = library_job(raw, target.library)
    if fn.qualname not in index.functions:
        index.functions[fn.qualname] = fn
        index.home[fn.qualname] = summary
    return SiteTarget(fn.qualname, target.reason)


def _library_jobs(
    sites: list[CallSite],
    index: SymbolIndex,
    analysis: EffectAnalysis,
    settings: dict[str, JobSetting],
    enqueued: EnqueuedTasks,
) -> list[Job]:
    """Jobs of the library callables sites run, named by the callable's dotted name, with
    no location: ``migrator apply`` has no project function to move (it refuses them)."""
    keys = sorted({s.job for s in sites if s.job.endswith(LIBRARY_JOB)})
    analysis.analyse(keys)
    jobs = []
    for key in keys:
        name = key.removesuffix(LIBRARY_JOB)
        job = build_job(index.functions[key], index, analysis, settings, enqueued, name)
        note = Evidence(message=f"{name} is a library callable: {NO_PROJECT_FUNCTION}")
        evidence = [
            e.model_copy(update={"chain": [name if c == key else c for c in e.chain]})
            for e in job.evidence
        ]
        effects = [
            e.model_copy(update={"chain": [name if c == key else c for c in e.chain]})
            for e in job.effects
        ]
        update = {
            "qualname": name,
            "location": None,
            "parameters": [],
            "evidence": [*evidence[:-1], note, *evidence[-1:]],
            "effects": effects,
        }
        jobs.append(job.model_copy(update=update))
    return jobs


def _site_jobs(sites: list[CallSite]) -> list[CallSite]:
    """Sites that run a library callable name it, not the synthetic key."""
    return [
        s.model_copy(update={"job": s.job.removesuffix(LIBRARY_JOB)})
        if s.job.endswith(LIBRARY_JOB)
        else s
        for s in sites
    ]


_SENDER = re.compile(r"\(sender=([A-Za-z_][\w.]*)\)")


def _type_instance(
    index: SymbolIndex, graph: CallGraph, module: str, raw: RawSite, job: str
) -> None:
    """A model signal's ``instance`` is the sender: ``connect(f, sender=Page)``; a receiver
    taking ``**kwargs`` reads it as ``kwargs["instance"]`` (Django passes it by keyword)."""
    found = _SENDER.search(raw.detail)
    fn = index.functions.get(job)
    if found is None or fn is None or ("instance" not in fn.params and not fn.kwarg):
        return
    sender = sender_class(index, module, found.group(1))
    if sender is not None:
        graph.type_parameter(job, "instance", sender)


# Django's ``m2m_changed`` hands its receivers ``pk_set``, "a set of primary key values"
# (its documentation); for ``pre_add`` / ``pre_remove`` it is the set Django then adds or
# removes, so a receiver discarding from it vetoes part of the change (nautobot keeps a
# job's default queue so). Typed as the set it is, what a receiver does to it is known.
_M2M_CHANGED = "django.db.models.signals.m2m_changed"


def _type_pk_set(index: SymbolIndex, graph: CallGraph, module: str, raw: RawSite, job: str) -> None:
    fn = index.functions.get(job)
    if fn is None or "pk_set" not in fn.params:
        return
    for signal in raw.signals:
        if index.resolve(signal).name == _M2M_CHANGED or signal == _M2M_CHANGED:
            graph.type_parameter(job, "pk_set", "builtins.set")
            return


def _job_settings(config: MigratorConfig, index: SymbolIndex) -> dict[str, JobSetting]:
    """[tool.migrator.jobs] keyed by definition: users may name a job by a re-export."""
    settings = {index.resolve(name).name: setting for name, setting in config.jobs.items()}
    return settings | dict(config.jobs)  # an exact name wins over a resolved one


def _site_spans(summaries: list[FileSummary]) -> dict[str, list[Span]]:
    spans: dict[str, list[Span]] = {}
    for summary in summaries:
        for raw in summary.sites:
            if raw.enclosing_function:
                spans.setdefault(raw.enclosing_function, []).append(raw.span)
    return spans


def _dynamic_by_function(summaries: list[FileSummary]) -> dict[str, list[RawSite]]:
    """DYNAMIC sites make the function that starts them opaque."""
    found: dict[str, list[RawSite]] = {}
    for summary in summaries:
        for raw in summary.sites:
            if raw.target_kind == TargetKind.DYNAMIC and raw.enclosing_function:
                found.setdefault(raw.enclosing_function, []).append(raw)
    return found


def _site_order(site: CallSite) -> tuple[str, int, int, str, str]:
    return (
        site.location.path,
        site.location.line,
        site.location.column,
        site.pattern.value,
        site.job,
    )
