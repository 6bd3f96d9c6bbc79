"""Call sites: resolve the extractor's RawSites globally, and find DIRECT_CALL sites.

DIRECT_CALL: inside a request handler, a call whose transitive effects are
slow (sends, payments, outside HTTP, images, reports, uploads, publishes,
subprocesses, sleeps). Decision: when the callee is a project function, the
callee is the job (it can be moved as is). When the handler calls a slow
library API inline, the handler itself is reported as the job, once per
handler, with the first slow API as ``target_source``: there is no project
function to move, and the reviewer must extract one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from inventory._classify._by_name import guessed_sites
from inventory._classify._effects import EffectAnalysis
from inventory._classify._graph import CallGraph
from inventory._classify._guesses import plugin_overrides
from inventory._classify._index import Resolved, SymbolIndex, SymbolKind
from inventory._classify._library_call import NO_PROJECT_FUNCTION, library_call, value_bound
from inventory._classify._moved import moved_job
from inventory._classify._target import CallTarget
from inventory._classify._tasks import immediate_task
from inventory._classify._trace import Trace, location
from inventory._extract._resolve import MODEL_LOADED, USER_MODEL
from inventory._extract.detectors._sites_signals import (
    BLINKER_FACTORIES,
    BLINKER_TYPES,
    SIGNAL_TYPES,
)
from inventory.models import DISPATCHED, Argument, CallSite, EffectKind, Location, Pattern
from inventory.summary import (
    CallInfo,
    FactKind,
    FileSummary,
    FunctionInfo,
    RawSite,
    Span,
    TargetKind,
)

K = EffectKind
SLOW = frozenset(
    {K.EMAIL_SEND, K.SMS_SEND, K.PUSH_SEND, K.PAYMENT, K.HTTP_GET, K.HTTP_POST, K.HTTP_PUT}
    | {K.HTTP_PATCH, K.HTTP_DELETE, K.IMAGE_PROCESS, K.REPORT_GENERATE, K.OBJECT_PUT}
    | {K.MESSAGE_PUBLISH, K.SUBPROCESS, K.SLEEP}
)
UNKNOWN_JOB = "unknown"
_UNKNOWN = "?."
_SIGNAL_CLASSES = BLINKER_TYPES | SIGNAL_TYPES  # ``paid = Signal()``, blinker's or Django's
_SIGNAL_SEND = (".Signal.send", ".Signal.send_robust", ".ModelSignal.send")
_CONNECTED = re.compile(r"^(?:connected to|receiver of) ([\w.]+)")
_THREAD = "threading.Thread"
_MODEL_BASE = ".Model"  # django.db.models.Model, flask_sqlalchemy's db.Model


@dataclass(frozen=True)
class SiteTarget:
    job: str | None  # project function qualname, None when unresolved
    reason: str = ""
    library: str | None = None  # a library callable run as the job (``partial(storage.delete, n)``)
    moved: bool = False  # the site hands ``job.enqueue`` itself on: a moved site (Pattern.ENQUEUE)


# Targets that name the callable the site runs: a lambda or a call result runs an
# expression around it (``lambda: list(self.fetch())``), whose project calls would be lost.
_TYPED_HERE = (SymbolKind.FUNCTION, SymbolKind.CLASS)
_CALLABLE_REFS = frozenset({TargetKind.FUNCTION, TargetKind.PARTIAL, TargetKind.BOUND_METHOD})


def resolve_site(
    index: SymbolIndex, raw: RawSite, receivers: dict[str, list[str]] | None = None
) -> SiteTarget | None:
    """The job a raw site runs; None when the site turns out not to be one.

    ``receivers``: signal name as written -> the receivers connected to it in the scan.
    """
    if raw.signal_to_confirm and not all(_blinker_signal(index, s) for s in raw.signals or [""]):
        return None  # ``@imported.connect``: not a signal where it is made
    if raw.target is None or raw.target_kind == TargetKind.DYNAMIC:
        return SiteTarget(None, raw.unresolved_reason or "the target is only known at run time")
    if raw.target_kind == TargetKind.YIELDED:
        return _yielded(index, raw)
    if raw.pattern == Pattern.ENQUEUE:
        moved = moved_job(index, raw.target)  # no site unless it enqueues a queue_runtime @job
        return SiteTarget(moved) if moved else None
    if raw.target.startswith(_UNKNOWN):
        made = _method_of_returned(index, raw)
        return SiteTarget(None, _unknown_method(raw)) if made is None else SiteTarget(made)
    handed = _handed_enqueue(index, raw.target)
    if handed is not None:
        return SiteTarget(handed, moved=True)
    task = immediate_task(index, raw.target)
    if task is not None:
        return SiteTarget(task)  # ``on_commit(lambda: send.enqueue(x))``: runs ``send``
    found = index.resolve(raw.target)
    if found.kind == SymbolKind.EXTERNAL and found.name.endswith(_SIGNAL_SEND):
        return SiteTarget(None, _signal_sent(raw, receivers or {}))
    if raw.target_kind == TargetKind.THREAD_SUBCLASS:
        return _thread_subclass(index, found.name) if found.kind == SymbolKind.CLASS else None
    if "()." in found.name and found.kind not in _TYPED_HERE:
        # ``mailer.send`` with ``mailer = make_mailer()`` in another module, whose return the
        # index cannot type: a method of an object of unknown type, as for a local
        return SiteTarget(None, _unknown_method(raw))
    if found.kind == SymbolKind.FUNCTION:
        receiver = index.functions.get(found.name)
        if raw.pattern == Pattern.SIGNAL_RECEIVER and receiver is not None and receiver.vetoes:
            return None  # a receiver that only checks and raises: a synchronous veto
        return SiteTarget(found.name)
    if found.kind == SymbolKind.CLASS:
        init = index.method(found.name, "__init__")
        return SiteTarget(init, "" if init else f"{found.name} has no __init__ in the project")
    if found.kind == SymbolKind.EXTERNAL and raw.target_kind in _CALLABLE_REFS:
        bound = value_bound(found.name)
        if bound:
            # ``to_thread(f.write, chunk)`` typed as io.IOBase.write: a method of a value the
            # caller holds (a file at its position, a session), or a builtin applied to one:
            # what a repeat does depends on that value's state, which a one-line job of the
            # callable alone cannot show.
            return SiteTarget(None, bound)
        return SiteTarget(None, f"{found.name}: {NO_PROJECT_FUNCTION}", library=found.name)
    if found.kind == SymbolKind.EXTERNAL:
        return SiteTarget(None, f"{found.name} is not defined in the scanned project")
    return SiteTarget(None, f"{found.name} could not be resolved to a project function")


def _blinker_signal(index: SymbolIndex, name: str) -> bool:
    """``app.events.order_paid``, imported where a receiver is connected to it, is a signal
    where it is made: ``signal("order-paid")``, ``Namespace().signal(...)`` (blinker's or
    Flask's), or an instance of blinker's ``Signal`` / ``NamedSignal`` or Django's ``Signal``."""
    if not name:
        return False
    found = index.resolve(name)  # an instance resolves to its class, through re-exports
    if found.name in _SIGNAL_CLASSES:
        return True
    # a value made by a call is no class to resolve to: read it where it is assigned
    module, _, head = found.name.rpartition(".")
    summary = index.modules.get(module)
    made = summary.assignments.get(head, "") if summary is not None else ""
    return made.endswith("()") and index.resolve(made[:-2]).name in BLINKER_FACTORIES


def _handed_enqueue(index: SymbolIndex, target: str) -> str | None:
    """The ``@job`` whose ``enqueue`` a site hands on as its callable: the shapes
    ``migrator apply`` writes for work run later, ``add_task(fn.enqueue, a)`` and
    ``on_commit(partial(fn.enqueue, a))``. Enqueueing is what runs there, so the site
    is moved, like a call of ``fn.enqueue(a)`` (``_extract.detectors._sites_moved``)."""
    head, _, method = target.rpartition(".")
    return moved_job(index, head) if method == "enqueue" and head else None


def _yielded(index: SymbolIndex, raw: RawSite) -> SiteTarget:
    """``with reserve(ids) as release: on_commit(release)``: the job is the function the
    project context manager ``reserve`` yields (a def of its own, or a module function),
    when every one of its yields gives that same function."""
    manager = index.resolve(raw.target or "")
    given = f"'{raw.target_source}' is what the context manager {manager.name} gives"
    function = index.functions.get(manager.name) if manager.kind == SymbolKind.FUNCTION else None
    if function is None:
        return SiteTarget(None, f"{given}, and that is not a project function")
    yielded = function.yields_callable
    if yielded is None:
        return SiteTarget(
            None,
            f"{given}: not a @contextmanager generator whose every yield gives the same "
            "function, so only known at run time",
        )
    found = index.resolve(yielded)
    if found.kind != SymbolKind.FUNCTION:
        return SiteTarget(None, f"{given}: it yields {found.name}, not a project function")
    return SiteTarget(found.name)


def library_job(raw: RawSite, name: str) -> FunctionInfo:
    """A library callable run as the job, as a one-line job that calls it with the
    arguments bound at the site (``_library_call``)."""
    positional = [a.source for a in raw.arguments if a.name.startswith("#")]
    named = {a.name: a.source for a in raw.arguments if not a.name.startswith("#")}
    return library_call(name, raw.target_source, raw.span, positional, named, raw.result_used)


def sender_class(index: SymbolIndex, module: str, written: str) -> str | None:
    """The project class a signal's ``sender=`` names.

    A model loaded at run time (``get_model("catalogue", "Category")``,
    ``get_image_model()``) resolves to nothing; by convention the variable is named
    after the model, so the one project model of that name stands for it.
    """
    found = index.resolve(f"{module}.{written}")
    if found.kind == SymbolKind.EXTERNAL:
        found = library_model(index, found.name)
    if found.kind == SymbolKind.CLASS:
        return found.name
    name = written.rsplit(".", 1)[-1]
    models = [q for q, c in index.classes.items() if c.name == name and _is_model(index, q)]
    return models[0] if len(models) == 1 else None


# Django's "Referencing the User model": connect to the user model's signals with
# ``sender=settings.AUTH_USER_MODEL`` (a "app_label.Model" string, resolved at run time).
_SETTINGS_USER_MODEL = f"django.conf.settings.{USER_MODEL}"


def library_model(index: SymbolIndex, name: str) -> Resolved:
    """A sender the project imports from an installed library (``django.contrib.auth``'s
    ``User``, a third-party app's model), read from its source as the index reads any
    library class; ``settings.AUTH_USER_MODEL``, the project's user model or Django's.
    EXTERNAL still when no source is installed."""
    if name == _SETTINGS_USER_MODEL:
        found = index.resolve(f"{MODEL_LOADED}{USER_MODEL}")
        if found.kind != SymbolKind.EXTERNAL:
            return found
        name = found.name
    return index.resolve_in_library(name)


def _is_model(index: SymbolIndex, cls: str) -> bool:
    return any(b not in index.classes and b.endswith(_MODEL_BASE) for b in index.mro(cls))


def _method_of_returned(index: SymbolIndex, raw: RawSite) -> str | None:
    """``m = make_manager(); Thread(target=m.run)`` (or ``m`` a module-level name bound so):
    the project method ``run`` of the class the index knows ``make_manager`` returns (its
    annotation, or the class every return builds), as a call ``m.run()`` is typed
    (``_graph.CallGraph._on_returned``). None when the index does not name a project function."""
    if not raw.returned_from or raw.target is None:
        return None
    method = raw.target.rsplit(".", 1)[-1]
    found = index.resolve(f"{raw.returned_from}.{method}")
    return found.name if found.kind == SymbolKind.FUNCTION else None


def _unknown_method(raw: RawSite) -> str:
    """``lambda: instance.file.delete(False)``: say what is called, never the ``?.`` marker."""
    method = (raw.target or "").rsplit(".", 1)[-1]
    written = re.search(rf"([\w.()\[\]]+)\.{re.escape(method)}\s*\(", raw.target_source)
    source = raw.target_source.strip()
    if written:
        call = f"{written.group(1)}.{method}"
    elif re.fullmatch(rf"[\w.]+\.{re.escape(method)}", source):
        call = source  # handed on uncalled: ``Thread(target=m.send)``
    else:
        call = method
    return (
        f"{call}: a method of an object whose type is not known here, so its work is not analysed"
    )


def _signal_sent(raw: RawSite, receivers: dict[str, list[str]]) -> str:
    """``lambda: slug_changed.send(...)``: the work is whatever the receivers do."""
    written = re.search(r"([\w.]+)\.send(?:_robust)?\s*\(", raw.target_source)
    signal = written.group(1) if written else "a signal"
    found = receivers.get(signal.rsplit(".", 1)[-1], []) if written else []
    if not found:
        return f"sends {signal}: its receivers run here, and none is connected in the scan"
    names = ", ".join(found[:3]) + (f" and {len(found) - 3} more" if len(found) > 3 else "")
    return f"sends {signal}: its receivers run here ({names}, each a job of its own)"


def signal_receivers(summaries: list[FileSummary], index: SymbolIndex) -> dict[str, list[str]]:
    """Signal name (last dotted part, as connected) -> the receivers connected to it."""
    found: dict[str, list[str]] = {}
    for summary in summaries:
        for raw in summary.sites:
            written = _CONNECTED.match(raw.detail)
            if raw.pattern != Pattern.SIGNAL_RECEIVER or raw.target is None or written is None:
                continue
            job = index.resolve(raw.target)
            if job.kind == SymbolKind.FUNCTION:
                found.setdefault(written.group(1).rsplit(".", 1)[-1], []).append(job.name)
    return {name: sorted(set(jobs)) for name, jobs in found.items()}


def _thread_subclass(index: SymbolIndex, cls: str) -> SiteTarget | None:
    if not index.derives_from(cls, _THREAD):
        return None  # a class named like a thread that is not one: no site
    run = index.method(cls, "run")
    return SiteTarget(run, "" if run else f"{cls} derives from Thread but defines no run()")


def raw_call_site(summary: FileSummary, raw: RawSite, target: SiteTarget) -> CallSite:
    return CallSite(
        location=location(summary.path, raw.span),
        pattern=Pattern.ENQUEUE if target.moved else raw.pattern,
        job=target.job or UNKNOWN_JOB,
        target_source=raw.target_source,
        unresolved_reason=target.reason,
        enclosing_function=raw.enclosing_function,
        handler=raw.handler,
        result_used=raw.result_used,
        result_use_lines=raw.result_use_lines,
        result_kept_in=raw.result_kept_in,
        arguments=[_typed_value(a) for a in raw.arguments],
    )


_TYPED_VALUES = (
    (
        re.compile(r"^(datetime\.)?(datetime|date)\b|^(timezone|django\.utils\.timezone)\.now\("),
        "a datetime",
    ),
    (re.compile(r"^(decimal\.)?Decimal\("), "a Decimal"),
    (re.compile(r"^(uuid\.)?(UUID\(|uuid[1345]\()"), "a UUID"),
)


def _typed_value(argument: Argument) -> Argument:
    """``datetime.now()``, ``Decimal("1.5")``, ``UUID(...)``: not plain JSON, but stored as
    their JSON form when the job's parameter is annotated with the type."""
    if argument.serialisable is not None or argument.reason:
        return argument
    for pattern, what in _TYPED_VALUES:
        if pattern.search(argument.source):
            reason = (
                f"{what}: stored as JSON only if the job's parameter is annotated with its type "
                "(queue_runtime converts it back); unannotated it is refused at enqueue"
            )
            return argument.model_copy(update={"reason": reason})
    return argument


def direct_call_sites(
    handler: FunctionInfo, graph: CallGraph, analysis: EffectAnalysis, taken: list[Span]
) -> list[CallSite]:
    """``taken``: spans of the handler's other sites (``create_task(notify(x))`` is one site)."""
    path = graph.index.function_path(handler.qualname)
    targets = [t for t in graph.targets(handler.qualname) if not _within(t.call.span, taken)]
    sites = [
        _direct(handler, path, t.call, t.function, _written(t), t.run_inside)
        for t in targets
        if t.function
        and t.function != handler.qualname
        and _slow_call(graph, analysis, t.function, t)
    ]
    sites += guessed_sites(
        handler,
        graph,
        analysis,
        targets,
        lambda traces: _is_slow(graph, traces),
        lambda t, job, reason: _direct(
            handler, path, t.call, job or UNKNOWN_JOB, _written(t)
        ).model_copy(update={"unresolved_reason": reason}),
    )
    sites += _dispatched_sites(handler, path, graph, analysis, taken)
    inline = [
        t
        for t in analysis.traces(handler.qualname)
        if _inline_slow(t, handler.qualname) and not _within(t.effect.location, taken)
    ]
    first = inline[0].effect if inline else None
    calls = [t.call for t in graph.targets(handler.qualname)]
    call = next((c for c in calls if first and c.span.line == first.location.line), None)
    if first is not None and call is not None:
        sites.append(_direct(handler, path, call, handler.qualname, first.api))
    return _one_per_call(sites)


def _one_per_call(sites: list[CallSite]) -> list[CallSite]:
    """One site per call and job: ``EXPORTERS[fmt].export(rows)`` over a table of two
    instances whose classes inherit the same ``export`` resolves once per member, to the
    same method; the call is one site of that job, not one per member."""
    seen: dict[tuple[int, int, str], CallSite] = {}
    for site in sites:
        seen.setdefault((site.location.line, site.location.column, site.job), site)
    return list(seen.values())


def _dispatched_sites(
    handler: FunctionInfo,
    path: str,
    graph: CallGraph,
    analysis: EffectAnalysis,
    taken: list[Span],
) -> list[CallSite]:
    """``ENGINES[name](x)`` or ``fn = ENGINES.get(name); fn(x)`` in a handler, through a
    module-level table of project functions: one site per function of the table that does
    slow work, at that call. Which one runs is chosen at run time, so the call names none of
    them: the site says so (``DISPATCHED``), and apply leaves it."""
    sites: list[CallSite] = []
    calls = {(c.span.line, c.span.column): c for c in handler.calls}
    for fact in handler.facts:
        values = (
            graph.table_of(handler.qualname, fact)
            if fact.kind is FactKind.DYNAMIC_DISPATCH
            else None
        )
        call = calls.get((fact.span.line, fact.span.column))
        if not values or call is None or _within(call.span, taken):
            continue
        functions = list(dict.fromkeys(f for f in graph.table_functions(values) if f))
        analysis.analyse(functions)
        slow = [f for f in functions if f != handler.qualname and _slow_call(graph, analysis, f)]
        written = fact.text.partition("(")[0]
        sites += [
            _direct(handler, path, call, job, written).model_copy(
                update={"unresolved_reason": _dispatched_reason(written, len(values), job)}
            )
            for job in slow
        ]
    return sites


def _dispatched_reason(written: str, values: int, job: str) -> str:
    name = job.rpartition(".")[2]
    return (
        f"{DISPATCHED}`{written}`: {name} is one of the {values} values of a table, chosen at "
        f"run time, and the call names none of them; call `{name}(...)` by name where the "
        "handler picks it (a statement of its own), then scan and apply again"
    )


def _within(span: Span | Location, outer: list[Span]) -> bool:
    start = (span.line, span.column)
    end = (span.end_line or span.line, span.end_column or span.column)
    return any(
        (o.line, o.column) <= start and end <= (o.end_line or o.line, o.end_column or o.column)
        for o in outer
    )


def _slow_call(
    graph: CallGraph, analysis: EffectAnalysis, function: str, call: CallTarget | None = None
) -> bool:
    """The handler's call of ``function`` does slow work inline (with ``call``: what that
    call can reach, not what runs only under a flag it leaves out). An empty method with more
    overrides than the effects follow (a plugin hook: a gap for the verdict) is slow when
    one of its overrides is: one of them runs inside the request."""
    traces = analysis.traces(function) if call is None else analysis.traces_of_call(call, function)
    if _is_slow(graph, traces):
        return True
    overrides = plugin_overrides(graph.index, function)
    analysis.analyse(overrides)
    return any(_is_slow(graph, analysis.traces(o)) for o in overrides)


def _is_slow(graph: CallGraph, traces: list[Trace]) -> bool:
    """Slow work the call does inline: not work it starts in the background (a site edge),
    which already has its own site."""
    return any(
        t.kind in SLOW
        and (t.is_effect or t.gap)  # a gap: slow work behind a guessed call
        and not t.found.backoff  # a retry's back-off sleep: only when the work failed
        and not graph.crosses_site_edge(t.chain)
        for t in traces
    )


def _inline_slow(trace: Trace, handler: str) -> bool:
    slow = trace.kind in SLOW and not trace.found.backoff
    return slow and trace.chain == (handler,) and trace.is_effect


def _written(target: CallTarget) -> str:
    call = target.call
    method = call.target.rsplit(".", 1)[-1]
    return f"{call.receiver_source}.{method}" if call.receiver_source else method


def _direct(
    handler: FunctionInfo,
    path: str,
    call: CallInfo,
    job: str,
    written: str,
    run_inside: bool = False,
) -> CallSite:
    """``run_inside``: the framework runs ``job`` inside the call written (a manager's
    ``create`` runs the model's ``save``): the call's arguments are not the job's."""
    return CallSite(
        location=location(path, call.span),
        pattern=Pattern.DIRECT_CALL,
        job=job,
        target_source=written,
        run_inside=written if run_inside else "",
        enclosing_function=handler.qualname,
        handler=handler.handler,
        result_used=call.result_used,
        arguments=[] if run_inside else _arguments(call),
    )


def _arguments(call: CallInfo) -> list[Argument]:
    positional = [
        _argument(f"#{i}", source, call.args[i] if i < len(call.args) else "<expr>")
        for i, source in enumerate(call.arg_sources)
    ]
    named = [_argument(k, s, call.kwargs.get(k, "<expr>")) for k, s in call.kwarg_sources.items()]
    return positional + named


def _argument(name: str, source: str, value: object) -> Argument:
    literal = value != "<expr>"
    return Argument(
        name=name,
        source=source,
        serialisable=True if literal else None,
        reason="" if literal else "not a literal: check its type before enqueueing",
    )
