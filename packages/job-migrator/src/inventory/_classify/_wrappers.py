"""Spawn wrappers: a project function or method that hands its own parameter to a spawn
primitive (a thread, an executor, a task, ``run_in_executor``, a greenlet).

``def create_background_task(coro, name=None)`` that calls ``asyncio.create_task(coro)``,
keeps a reference and logs failures is, for its callers, ``create_task`` itself:
``create_background_task(notify(user))`` starts ``notify`` in the background. The
extractor sees the inner site with a DYNAMIC target written with the parameter: the
parameter itself (``target=fn``), called (``create_task(coro_fn(*args))``), in a partial
(``partial(fn, *args)``) or a lambda (``lambda: fn(x)``). Here that site makes the
function a wrapper, and each call to it (in any file, a method through its instance,
``task_manager.create_task(coro)`` on a module-level object included) a site of the same
pattern whose job is the argument in the parameter's place (by position or keyword). A
function passing its own parameter on to a wrapper is one too, to a fixed point of
``_ROUNDS`` levels. A job that never returns (an unbroken ``while True``: a monitor or a
heartbeat) or that runs a server's loop is infrastructure, not a site.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from inventory._classify._graph import CallGraph
from inventory._classify._index import SymbolIndex, SymbolKind
from inventory._classify._library_call import (
    LIBRARY_JOB,
    NO_PROJECT_FUNCTION,
    library_call,
    value_bound,
)
from inventory._classify._lifetime import LOOPS, endless_loop, is_service
from inventory._classify._spawned import REFERENCE as _REFERENCE
from inventory._classify._spawned import WRAPPED as _WRAPPED
from inventory._classify._trace import location
from inventory._extract._library import LOG_METHODS
from inventory.models import CallSite, Pattern
from inventory.summary import (
    CallInfo,
    FactKind,
    FileSummary,
    FunctionInfo,
    RawSite,
    Span,
    TargetKind,
)

UNKNOWN_JOB = "unknown"
_ROUNDS = 4  # wrappers of wrappers...: deeper chains are not seen in real code
_CALLED = re.compile(r"^([A-Za-z_][\w.]*)\s*\(")
_JOINED = (Pattern.THREAD, Pattern.PROCESS)  # result_use_lines of these are the joins
# Futures and tasks waited for by the caller are not background work (as in place).
_FUTURES = (Pattern.EXECUTOR_SUBMIT, Pattern.ASYNCIO_TASK)
_FUTURE_WAITS = frozenset({"result", "exception", "wait"})
_NOT_POSITIONAL = ("staticmethod",)
_LOG_METHODS = LOG_METHODS | {"success"}  # loguru's ``success`` too
_SLEEPS = frozenset({"asyncio.sleep", "time.sleep", "anyio.sleep", "trio.sleep", "gevent.sleep"})
_QUEUE_GETS = frozenset(
    {
        "asyncio.Queue.get",
        "queue.Queue.get",
        "multiprocessing.Queue.get",
        "asyncio.Queue.get_nowait",
    }
    | {"asyncio.queues.Queue.get", "queue.SimpleQueue.get", "asyncio.PriorityQueue.get"}
)


@dataclass(frozen=True)
class Wrapper:
    qualname: str
    param: str
    position: int  # of the argument at a call (``self`` not counted)
    pattern: Pattern
    waited: bool = False  # the wrapper waits for what it started (joins its thread)
    closure: str = ""  # the wrapper's own closure it spawns, which calls the parameter
    repeats: bool = False  # ... over and over: a loop, or a sleep between calls


@dataclass(frozen=True)
class _Handed:
    """A call to a wrapper: the site it makes (None: infrastructure, drained in place)."""

    site: CallSite | None
    written: str  # the argument in the wrapper's parameter's place
    wrapper: Wrapper
    caller: FunctionInfo
    job: str | None
    drained: bool = False  # ``submit_job(f).result()``: waited for in the caller


@dataclass(frozen=True)
class _Job:
    job: str | None
    reason: str = ""
    library: str | None = None  # a library callable handed over (``shutil.rmtree``)


def with_wrapped_calls(
    sites: list[CallSite], summaries: list[FileSummary], index: SymbolIndex, graph: CallGraph
) -> tuple[list[CallSite], dict[str, list[Span]]]:
    """``sites`` plus the calls to spawn wrappers, as sites of the wrapped primitive's
    pattern, and the spans of those calls by enclosing function.

    A wrapper's own inner site (its job is "whatever the caller passes") goes once its
    callers are found: each of them names the real job. Unused, it stays, unknown.
    """
    wrappers = _wrappers([raw for s in summaries for raw in s.sites], index, graph)
    seen = {(s.path, raw.span.line, raw.span.column) for s in summaries for raw in s.sites}
    found: list[CallSite] = []
    used: set[str] = set()
    closures: dict[str, str] = {}  # wrapper -> the closure it spawns (its inner site's job)
    for _ in range(_ROUNDS):
        closures |= {w.qualname: w.closure for w in wrappers.values() if w.closure}
        fresh = _calls_to(wrappers, index, graph, seen, used)
        found += [h.site for h in fresh if h.site is not None]
        wrappers = _passed_on(fresh, index, graph, wrappers)
        if not wrappers:
            break
    kept = [s for s in [*sites, *found] if not _replaced(s, used, closures)]
    spans: dict[str, list[Span]] = {}
    for site in found:
        at = site.location
        span = Span(line=at.line, column=at.column, end_line=at.end_line, end_column=at.end_column)
        spans.setdefault(site.enclosing_function or "", []).append(span)
    return kept, spans


def _replaced(site: CallSite, used: set[str], closures: dict[str, str]) -> bool:
    """A used wrapper's inner site: its callers' sites name the real jobs."""
    within = site.enclosing_function or ""
    return within in used and site.job in (UNKNOWN_JOB, closures.get(within))


def _wrappers(raws: list[RawSite], index: SymbolIndex, graph: CallGraph) -> dict[str, Wrapper]:
    found: dict[str, Wrapper] = {}
    for raw in raws:
        if raw.enclosing_function is None:
            continue
        fn = index.functions.get(raw.enclosing_function)
        if raw.target_kind != TargetKind.DYNAMIC:
            closure = _closure_wrapper(raw.target, fn, raw.pattern, index, graph)
            if closure is not None:
                found.setdefault(closure.qualname, closure)
            continue
        wrapper = _wrapper(fn, raw.target_source, raw)
        if wrapper is not None:
            found.setdefault(wrapper.qualname, wrapper)
    return found


def _closure_wrapper(
    job: str | None,
    fn: FunctionInfo | None,
    pattern: Pattern,
    index: SymbolIndex,
    graph: CallGraph,
) -> Wrapper | None:
    """``def every(func, interval)`` that spawns its own ``async def loop()`` which calls
    ``func`` (``await func()``, or hands it alone to a helper calling it:
    ``self._restart(func)``) is a wrapper of ``func`` when the closure only repeats or
    guards what the caller passes: every other call it makes sleeps or logs. A closure
    doing work of its own with the parameter as a callback (``download(path, open_file)``)
    is the job itself."""
    if fn is None or job is None or not job.startswith(f"{fn.qualname}.<locals>."):
        return None
    closure = index.functions.get(job)
    if closure is None or pattern == Pattern.SIGNAL_RECEIVER:
        return None
    for param in fn.params:
        runs = [c for c in closure.calls if _runs_param(c, param, closure, graph)]
        if runs and all(c in runs or _bookkeeping(c) for c in closure.calls):
            found = _as_wrapper(fn, param, pattern)
            repeats = _repeats(closure)
            return replace(found, closure=job, repeats=repeats) if found else None
    return None


def _runs_param(call: CallInfo, param: str, closure: FunctionInfo, graph: CallGraph) -> bool:
    if _calls_param(call, param):
        return True
    alone = len(call.arg_sources) + len(call.kwarg_sources) == 1
    return alone and _hands_to_caller(call, param, closure, graph)


def _bookkeeping(call: CallInfo) -> bool:
    """A sleep between rounds, or a log line."""
    method = call.target.rpartition(".")[2]
    return call.target in _SLEEPS or call.target == "print" or method in _LOG_METHODS


def _repeats(closure: FunctionInfo) -> bool:
    """``while True:`` or a sleep between rounds: the closure runs its job periodically."""
    if any(fact.kind == FactKind.LOOP_FOREVER for fact in closure.facts):
        return True
    return any(call.target in _SLEEPS for call in closure.calls)


def _consumes_first(job: str | None, index: SymbolIndex) -> bool:
    """``data = await audit_queue.get()`` first, or ``async for x in source.stream():``:
    run over and over, a queue's or a stream's consumer."""
    fn = index.functions.get(job) if job else None
    if fn is None:
        return False
    if any(fact.kind == FactKind.STREAM_LOOP for fact in fn.facts):
        return True
    return bool(fn.calls) and fn.calls[0].target in _QUEUE_GETS


def _own_plumbing(wrapper: Wrapper, call: CallInfo, caller: FunctionInfo, written: str) -> bool:
    """``self.create_permanent_task(self._heart_beat)`` in the wrapper's own class, through
    a wrapper that runs it over and over: the object keeping its private machinery
    (listeners, heartbeats) running, not the application's work. A one-shot
    ``self._schedule(self._purge_and_log(cmd))`` is work like any other; a tracker's
    monitor loop is infrastructure by its loop (``_infrastructure``), not by its name."""
    if not caller.is_method or call.receiver_source != "self":
        return False
    own = caller.qualname.rpartition(".")[0]
    return own == wrapper.qualname.rpartition(".")[0] and written.startswith("self._")


def _calls_param(call: CallInfo, param: str) -> bool:
    """``func()`` / ``await func(x)``."""
    return call.target == param or (
        call.target.endswith(".__call__") and call.receiver_source == param
    )


def _hands_to_caller(call: CallInfo, param: str, closure: FunctionInfo, graph: CallGraph) -> bool:
    """``await self._restart(func)`` where ``_restart(self, func)`` calls ``func()``."""
    if param in call.arg_sources:
        position = call.arg_sources.index(param)
    elif param in call.kwarg_sources.values():
        position = -1
    else:
        return False
    callee = graph.index.functions.get(graph.resolve_call(call, closure).function or "")
    if callee is None:
        return False
    if position < 0:
        name = next(k for k, v in call.kwarg_sources.items() if v == param)
    else:
        bound = callee.is_method and not any(d.endswith(_NOT_POSITIONAL) for d in callee.decorators)
        at = position + (1 if bound else 0)
        name = callee.params[at] if at < len(callee.params) else ""
    return bool(name) and any(_calls_param(inner, name) for inner in callee.calls)


def _wrapper(fn: FunctionInfo | None, written: str, raw: RawSite) -> Wrapper | None:
    if fn is None or raw.pattern == Pattern.SIGNAL_RECEIVER:
        return None  # connecting a receiver given as a parameter starts nothing
    wrapper = _as_wrapper(fn, written, raw.pattern)
    if wrapper is None or raw.pattern not in _JOINED or not raw.result_use_lines:
        return wrapper  # a task's or future's reference kept is not a wait
    return replace(wrapper, waited=True)


def callable_root(written: str) -> str | None:
    """The name the callable is written with: ``fn``, ``fn(*a)``, ``partial(fn, x)``,
    ``lambda: fn(x)``; None for anything else."""
    written = written.strip()
    if _REFERENCE.match(written):
        return written
    found = _WRAPPED.match(written) or _CALLED.match(written)
    return found.group(1) if found else None


def _as_wrapper(fn: FunctionInfo, written: str, pattern: Pattern) -> Wrapper | None:
    param = callable_root(written)
    if param is None or param not in fn.params:
        return None
    bound = fn.is_method and not any(d.endswith(_NOT_POSITIONAL) for d in fn.decorators)
    position = fn.params.index(param) - (1 if bound else 0)
    return Wrapper(fn.qualname, param, position, pattern) if position >= 0 else None


def _calls_to(
    wrappers: dict[str, Wrapper],
    index: SymbolIndex,
    graph: CallGraph,
    seen: set[tuple[str, int, int]],
    used: set[str],
) -> list[_Handed]:
    """(site, the argument as written, the wrapper, ...) for every call to one of ``wrappers``
    (site None: infrastructure, or drained in place); the wrappers called are added to
    ``used``."""
    names = {_called_as(qualname) for qualname in wrappers}
    found: list[_Handed] = []
    for caller in list(index.functions.values()) if names else []:
        for call in caller.calls:
            if call.target.rpartition(".")[2] not in names:
                continue  # the cheap test first: most calls are to nothing of the kind
            wrapper = wrappers.get(graph.resolve_call(call, caller).function or "")
            path = index.function_path(caller.qualname)
            if wrapper is None or (path, call.span.line, call.span.column) in seen:
                continue
            seen.add((path, call.span.line, call.span.column))
            written = _argument(wrapper, call)
            if written is None:
                continue
            used.add(wrapper.qualname)
            job = _job(written, call, caller, index, graph)
            if job.library is not None:
                job = _library_job(job, wrapper, call, caller, index)
            site = _site(wrapper, call, written, job, caller, index, graph)
            drained = wrapper.pattern in _FUTURES and _waited_in_caller(call, caller)
            found.append(_Handed(site, written, wrapper, caller, job.job, drained))
    return found


def _called_as(qualname: str) -> str:
    """The last name a call to the wrapper is written with: ``Task(coro)`` runs
    ``Task.__init__``."""
    owner, _, name = qualname.rpartition(".")
    return owner.rpartition(".")[2] if name == "__init__" else name


def _site(
    wrapper: Wrapper,
    call: CallInfo,
    written: str,
    job: _Job,
    caller: FunctionInfo,
    index: SymbolIndex,
    graph: CallGraph,
) -> CallSite | None:
    if _infrastructure(job.job, written, index, graph):
        return None  # spawn(heartbeat), spawn(server.serve_forever): never returns
    if wrapper.repeats and _consumes_first(job.job, index):
        return None  # create_permanent_task(process_next_entry): a queue's consumer loop
    if wrapper.repeats and _own_plumbing(wrapper, call, caller, written.strip()):
        return None  # create_permanent_task(self._heart_beat): the manager's own machinery
    if wrapper.pattern in _FUTURES and _waited_in_caller(call, caller):
        return None  # submit_job(f).result(): drained in the same call, as in place
    if job.job is not None:
        graph.add_site_edge(caller.qualname, job.job)
    return CallSite(
        location=location(index.function_path(caller.qualname), call.span),
        pattern=wrapper.pattern,
        job=job.job or UNKNOWN_JOB,
        target_source=written,
        unresolved_reason=job.reason,
        enclosing_function=caller.qualname,
        handler=caller.handler,
        result_used=call.result_used or wrapper.waited,
    )


def _waited_in_caller(call: CallInfo, caller: FunctionInfo) -> bool:
    """``run_bg(f).result()`` or ``fut = run_bg(f)`` then ``fut.result()`` in the caller."""
    made = f"{call.target}()"
    for other in caller.calls:
        head, _, method = other.target.rpartition(".")
        if method in _FUTURE_WAITS and made in (head, other.returned_from):
            return True
    return False


def _infrastructure(job: str | None, written: str, index: SymbolIndex, graph: CallGraph) -> bool:
    """A job that runs until the process stops (``_lifetime``): a server's or an event
    loop's ``serve_forever``, a function running one, an unbroken ``while True``, a monitor
    looping on a liveness check and waiting each round (``while is_active(): ...
    await asyncio.sleep(5)``), or a function that runs one of those in its stead
    (``await tracker.track(txid, on_event, is_active)``). A wrapper that runs its job over
    and over gives it a round; a job that loops itself needs none."""
    if written.endswith(LOOPS):
        return True
    if job is None:
        return False
    return is_service(job, index, graph) or endless_loop(job, index, graph) is not None


def _argument(wrapper: Wrapper, call: CallInfo) -> str | None:
    if wrapper.param in call.kwarg_sources:
        return call.kwarg_sources[wrapper.param]
    sources = call.arg_sources
    if wrapper.position < len(sources) and not any(
        s.startswith("*") for s in sources[: wrapper.position + 1]
    ):
        return sources[wrapper.position]
    return None


def _job(
    written: str, call: CallInfo, caller: FunctionInfo, index: SymbolIndex, graph: CallGraph
) -> _Job:
    """The job the wrapper is handed: the function of ``notify(user)``, ``notify``,
    ``partial(notify, user)``, ``lambda: notify(user)`` or ``self.notify``, a name looked up
    as Python looks it up (the caller's own nested ``def`` first, then its module's names,
    imports included), and a library callable (``shutil.rmtree``) as at a direct site."""
    wrapped = _WRAPPED.match(written.strip())
    called = None if wrapped else _CALLED.match(written)
    if called is not None:
        return _called_job(called.group(1), call, caller, graph)
    name = wrapped.group(1) if wrapped else written.strip()
    if not _REFERENCE.match(name):
        return _Job(None, f"'{written}' is handed to a spawn wrapper: only known at run time")
    return _referenced(name, caller, index, graph)


def _referenced(name: str, caller: FunctionInfo, index: SymbolIndex, graph: CallGraph) -> _Job:
    """``cleanup`` (a nested ``def`` of the caller or of a function enclosing it, else a
    name of the caller's module or imported there), ``self.cleanup``, ``shutil.rmtree``."""
    head, _, rest = name.partition(".")
    if caller.is_method and caller.params and head == caller.params[0] and rest.isidentifier():
        method = index.method(caller.qualname.rpartition(".")[0], rest)
        if method is not None:
            return _Job(method)
        return _Job(None, f"'{name}' is no method of the caller's class in the project")
    if head in caller.params:
        what = f"a method of the parameter '{head}'" if rest else "the parameter"
        return _Job(None, f"'{name}' is {what} of {caller.qualname}: only known at run time")
    nested = _nested_def(head, caller.qualname, index)
    if nested is not None:
        return _Job(nested) if not rest else _Job(None, f"'{name}': an attribute of a function")
    qualified = f"{index.home[caller.qualname].module}.{name}"
    function = graph.table_functions([qualified])[0]
    if function is not None:
        return _Job(function)
    found = index.resolve(qualified)
    if found.kind == SymbolKind.CLASS:
        return _Job(None, f"{found.name} has no __init__ in the project")
    if found.kind == SymbolKind.EXTERNAL and not index.is_library(found.name):
        bound = value_bound(found.name)
        if bound:
            return _Job(None, bound)
        return _Job(None, f"{found.name}: {NO_PROJECT_FUNCTION}", library=found.name)
    if found.kind == SymbolKind.MISSING and rest:
        return _Job(
            None,
            f"'{name}': a method of '{head}', a value whose type is not known here, so "
            "what it runs is not analysed",
        )
    return _Job(None, f"'{name}' could not be resolved to a project function")


def _library_job(
    job: _Job, wrapper: Wrapper, call: CallInfo, caller: FunctionInfo, index: SymbolIndex
) -> _Job:
    """``hass.async_add_executor_job(shutil.rmtree, path)``: the library callable, analysed
    as a one-line job (registered under a key no project call resolves to) calling it with
    what the wrapper is handed beside it, as at a direct site (``_library_call``)."""
    assert job.library is not None
    written = _argument(wrapper, call) or ""
    inner = _PARTIAL_ARGS.match(written.strip())
    positional = _split(inner.group(1)) if inner else []
    if wrapper.param in call.kwarg_sources:  # handed by keyword: the positionals are its own
        positional += call.arg_sources
    else:  # ``add_executor_job(target, *args)``: what follows the callable is its arguments
        positional += call.arg_sources[wrapper.position + 1 :]
    named = {k: v for k, v in call.kwarg_sources.items() if k != wrapper.param}
    fn = library_call(job.library, written, call.span, positional, named, call.result_used)
    key = f"{job.library}{LIBRARY_JOB}"
    if key not in index.functions:
        index.functions[key] = fn
        index.home[key] = index.home[caller.qualname]
    return _Job(key, job.reason)


_PARTIAL_ARGS = re.compile(r"^(?:functools\.)?partial\(\s*[\w.]+\s*,(.*)\)$", re.DOTALL)


def _split(arguments: str) -> list[str]:
    """``a, f(b, c), d`` -> ``["a", "f(b, c)", "d"]``: commas at the top level only."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(arguments):
        depth += ch in "([{"
        depth -= ch in ")]}"
        if ch == "," and depth == 0:
            parts.append(arguments[start:i].strip())
            start = i + 1
    parts.append(arguments[start:].strip())
    return [p for p in parts if p]


def _nested_def(name: str, scope: str, index: SymbolIndex) -> str | None:
    """The ``def name`` nested in ``scope`` or in a function enclosing it, innermost first."""
    while scope:
        found = f"{scope}.<locals>.{name}"
        if found in index.functions:
            return found
        scope = scope.rpartition(".<locals>.")[0]
    return None


def _called_job(name: str, call: CallInfo, caller: FunctionInfo, graph: CallGraph) -> _Job:
    """``wrapper(notify(user))``: the inner call, written inside the wrapper call's span."""
    last = name.rpartition(".")[2]
    for target in graph.targets(caller.qualname):
        inner = target.call
        inside = inner is not call and _inside(inner.span, call.span)
        if inside and inner.target.rpartition(".")[2] == last and target.function is not None:
            return _Job(target.function)
    return _Job(None, f"the coroutine '{name}(...)' could not be resolved to a project function")


def _inside(span: Span, outer: Span) -> bool:
    end = (span.end_line or span.line, span.end_column or span.column)
    outer_end = (outer.end_line or outer.line, outer.end_column or outer.column)
    return (outer.line, outer.column) < (span.line, span.column) and end <= outer_end


def _passed_on(
    fresh: list[_Handed], index: SymbolIndex, graph: CallGraph, inner: dict[str, Wrapper]
) -> dict[str, Wrapper]:
    """A caller handing its own parameter to a wrapper (of ``inner``) is a wrapper in turn,
    and so is one handing it a closure of its own that calls a parameter."""
    found: dict[str, Wrapper] = {}
    for handed in fresh:
        fn, pattern = handed.caller, handed.wrapper.pattern
        if handed.drained:
            continue
        if handed.job is None:
            wrapper = _as_wrapper(fn, handed.written, pattern) if handed.site else None
        else:
            wrapper = _closure_wrapper(handed.job, fn, pattern, index, graph)
        if wrapper is not None:
            waited = inner[handed.wrapper.qualname].waited
            found.setdefault(wrapper.qualname, replace(wrapper, waited=waited))
    return found
