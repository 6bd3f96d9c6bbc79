"""Executors, asyncio tasks, run_in_executor and to_thread.

An executor used as ``with ThreadPoolExecutor() as ex:`` and a task group used
as ``async with asyncio.TaskGroup() as tg:`` wait for their work when the
block exits: that work runs in parallel but not in the background, so it is
not reported. Neither is work whose futures or tasks the same function waits
for (``fut.result()``, ``as_completed``, ``wait``, ``await``, ``gather``,
iterating ``ex.map(...)``).
"""

from __future__ import annotations

import ast

from inventory._extract._library import EVENT_LOOP
from inventory._extract._resolve import Resolver, dotted_source
from inventory._extract._scopes import Binding, BindingKind
from inventory._extract._state import Candidate, UseKind
from inventory._extract.detectors._site_common import (
    CallSite,
    argument_node,
    candidate,
    evaluated_in_caller,
    receiver_note,
    waited_at_once,
)
from inventory._extract.detectors._sites_schedulers import (
    partial_registration,
    registration_handed,
)
from inventory._extract.detectors._targets import (
    JobTarget,
    call_arguments,
    job_target,
    unwrap_runner,
)
from inventory.models import Pattern
from inventory.summary import ReceiverKind, TargetKind

EXECUTOR_TYPES = frozenset(
    {
        "concurrent.futures.ThreadPoolExecutor",
        "concurrent.futures.ProcessPoolExecutor",
        "concurrent.futures.Executor",
        "concurrent.futures.thread.ThreadPoolExecutor",
        "concurrent.futures.process.ProcessPoolExecutor",
        "concurrent.futures._base.Executor",
        # Flask-Executor: a ThreadPoolExecutor bound to the app
        "flask_executor.Executor",
        "flask_executor.executor.Executor",
    }
)
FLASK_EXECUTORS = frozenset({"flask_executor.Executor", "flask_executor.executor.Executor"})
TASK_FUNCTIONS = frozenset(
    {
        "asyncio.create_task",
        "asyncio.ensure_future",
        "asyncio.tasks.create_task",
        "asyncio.tasks.ensure_future",
    }
)
TO_THREAD = frozenset({"asyncio.to_thread", "asyncio.threads.to_thread"})
# Same shape as to_thread: ``await run_in_threadpool(f, *args)`` (kwargs go to f too).
THREADPOOL_RUNNERS = frozenset(
    {
        "starlette.concurrency.run_in_threadpool",
        "fastapi.concurrency.run_in_threadpool",
    }
)
# ``await sync_to_async(f)(*args)`` (Django async views, Channels): f runs in a thread.
SYNC_TO_ASYNC = frozenset({"asgiref.sync.sync_to_async", "channels.db.database_sync_to_async"})
# ``await anyio.to_thread.run_sync(f, *args)``: its keywords configure the runner, not f.
ANYIO_RUNNERS = frozenset({"anyio.to_thread.run_sync"})
# ``loop.call_later(delay, f, *args)``: index of the callback.
LOOP_CALLBACKS = {"call_soon": 0, "call_soon_threadsafe": 0, "call_later": 1, "call_at": 1}
TASK_GROUPS = frozenset({"asyncio.TaskGroup", "asyncio.taskgroups.TaskGroup"})
_FUTURE_WAITS = frozenset({"result", "exception"})
_AWAITED = (UseKind.AWAITED, UseKind.AWAITED_DISCARDED)
_UNTYPED = (ReceiverKind.UNKNOWN, ReceiverKind.MODULE, ReceiverKind.CLASS)
_CACHING = frozenset({"lru_cache", "cache", "cached", "alru_cache", "memoize", "memoized"})
# Events and queues by which a spawning function may wait on its task or thread: until it
# says it is ready, or for the items it produces.
HANDOFF_TYPES = frozenset(
    {
        "asyncio.Event",
        "asyncio.locks.Event",
        "threading.Event",
        "anyio.Event",
        "trio.Event",
        "asyncio.Queue",
        "asyncio.queues.Queue",
        "queue.Queue",
        "queue.SimpleQueue",
    }
)
_HANDOFF_REFERENCES = frozenset({"get", "wait"})  # ``run_in_executor(None, q.get)``


def executor_call(call: CallSite) -> Candidate | None:
    if call.method == "submit_stored":
        return _submit_stored(call)
    if call.method == "submit" and _flask_executor_job(call):
        return _executor_job(call)
    if call.method not in ("submit", "map") or call.scoped or _waited_in_place(call):
        return None
    # Pool.map blocks, so only "executor" names are trusted for map.
    words = ("executor",) if call.method == "map" else ("executor", "pool")
    note = receiver_note(call, EXECUTOR_TYPES, "an executor", words)
    target_node = argument_node(call.node, 0, "fn")
    if note is None or target_node is None:
        return None
    resolver = call.state.resolver
    rest = call.node.args[1:]
    if call.method == "submit":  # ``pool.submit(ctx.run, f, x)`` runs f(x)
        target_node, rest = unwrap_runner(target_node, rest, resolver)
    job = job_target(target_node, resolver)
    if evaluated_in_caller(target_node, job):
        return None
    arguments = call_arguments(rest, call.node.keywords, resolver)
    found = candidate(Pattern.EXECUTOR_SUBMIT, call.node, job, call, arguments, note)
    found.waits, found.drop_when_waited, found.iterator = _FUTURE_WAITS, True, call.method == "map"
    return found


def _submit_stored(call: CallSite) -> Candidate | None:
    """Flask-Executor ``submit_stored(future_key, fn, *args)``: fn is the second argument."""
    if call.receiver_type not in FLASK_EXECUTORS:
        return None
    target_node = argument_node(call.node, 1, "fn")
    if target_node is None:
        return None
    resolver = call.state.resolver
    job = job_target(target_node, resolver)
    arguments = call_arguments(call.node.args[2:], call.node.keywords, resolver)
    detail = "Flask-Executor stored future"
    return candidate(Pattern.EXECUTOR_SUBMIT, call.node, job, call, arguments, detail)


def _flask_executor_job(call: CallSite) -> bool:
    """``f.submit(...)`` on a function of this file decorated with ``@executor.job``."""
    binding = call.resolved.binding
    node = binding.node if binding is not None else None
    if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        return False
    resolver = call.state.resolver
    for decorator in node.decorator_list:
        head, _, last = resolver.expr(decorator).target.rpartition(".")
        if last == "job" and head in FLASK_EXECUTORS:
            return True
    return False


def _executor_job(call: CallSite) -> Candidate:
    resolver = call.state.resolver
    func = call.node.func
    assert isinstance(func, ast.Attribute)
    job = job_target(func.value, resolver)
    arguments = call_arguments(call.node.args, call.node.keywords, resolver)
    detail = "Flask-Executor @job function submitted"
    found = candidate(Pattern.EXECUTOR_SUBMIT, call.node, job, call, arguments, detail)
    found.waits, found.drop_when_waited = _FUTURE_WAITS, True
    return found


def _waited_in_place(call: CallSite) -> bool:
    """``list(ex.map(...))``, ``for r in ex.map(...)``, ``ex.submit(f).result()``."""
    if call.method == "map" and call.use is not None and call.use.kind is UseKind.ITERATED:
        return True
    return waited_at_once(call.use, _FUTURE_WAITS)


def loop_callback(call: CallSite) -> Candidate | None:
    """``loop.call_later(delay, f, *args)`` / ``call_soon(f)``: f runs on the event loop later."""
    index = LOOP_CALLBACKS.get(call.method)
    if index is None or not _owns_tasks(call):
        return None
    node = call.node
    if len(node.args) <= index or any(isinstance(a, ast.Starred) for a in node.args[: index + 1]):
        return None
    resolver = call.state.resolver
    job = job_target(node.args[index], resolver)
    arguments = call_arguments(node.args[index + 1 :], [], resolver)
    detail = f"loop.{call.method}: runs on the event loop after the caller returns"
    return candidate(Pattern.ASYNCIO_TASK, node, job, call, arguments, detail)


def task_call(call: CallSite) -> Candidate | None:
    if call.target not in TASK_FUNCTIONS and not (
        call.method == "create_task" and _owns_tasks(call)
    ):
        return None
    if call.scoped or (call.use is not None and (call.use.kind in _AWAITED or call.use.awaited)):
        return None
    if waited_at_once(call.use, _FUTURE_WAITS) or _memoised(call):
        return None
    coro = argument_node(call.node, 0, "coro")
    if coro is None:
        return None
    job = coroutine_target(coro, call.state.resolver)
    found = candidate(Pattern.ASYNCIO_TASK, call.node, job, call, [])
    found.waits, found.drop_when_waited = _FUTURE_WAITS, True
    if isinstance(coro, ast.Call):
        _hand_over(found, coro.func, [*coro.args, *(k.value for k in coro.keywords)], call)
    return found


def _hand_over(found: Candidate, func: ast.expr, args: list[ast.expr], call: CallSite) -> None:
    """Events and queues of this function the job can reach: passed to it
    (``run(conn, ready)``), or seen by a function defined inside this one (a closure).
    When the function then waits on one after the start (``await ready.wait()``,
    ``q.get()``), the job is the request's own plumbing (it opens a connection and says
    when it is ready, it produces the items the request reads right below), not
    background work: see ``handoff_waited``."""
    scope = call.state.resolver.scope
    names = {a.id for a in args if isinstance(a, ast.Name)}
    local = scope.names.get(func.id) if isinstance(func, ast.Name) else None
    if local is not None and local.kind is BindingKind.FUNCTION:  # a nested def: its closure
        names |= {n for n, b in scope.names.items() if _handoff(b)}
    found.handoffs = sorted(n for n in names if n in scope.names and _handoff(scope.names[n]))
    for name in found.handoffs:
        call.state.watch_name(name)


def _handoff(binding: Binding) -> bool:
    return binding.kind is BindingKind.INSTANCE and binding.target in HANDOFF_TYPES


def _waits_by_reference(target: ast.expr, call: CallSite) -> None:
    """``await loop.run_in_executor(None, q.get)``: a wait on ``q`` run in a thread."""
    state = call.state
    if not isinstance(target, ast.Attribute) or target.attr not in _HANDOFF_REFERENCES:
        return
    key = dotted_source(target.value)
    if key is not None and key in state.watch:
        state.method_uses[state.watch[key]].append((target.attr, call.node.lineno))


def _memoised(call: CallSite) -> bool:
    """A task made to be awaited many times, not to run in the background: returned from a
    cached function (``@lru_cache`` over ``create_task(f(*a))``) or stored in a cache."""
    use, info = call.use, call.state.info
    if use is not None and use.kind is UseKind.RETURNED and info is not None:
        return any(d.rpartition(".")[2] in _CACHING for d in info.decorators)
    if use is not None and use.kind is UseKind.STORED:
        return "cache" in use.name.rpartition(".")[2].lower()
    return False


def _owns_tasks(call: CallSite) -> bool:
    """An event loop or an unscoped TaskGroup (``tg.create_task`` on a group held elsewhere)."""
    rtype = call.receiver_type
    if rtype == EVENT_LOOP or rtype in TASK_GROUPS:
        return True
    resolved = call.resolved
    if rtype is not None or resolved.receiver not in _UNTYPED:
        return False
    # ``self.loop``, ``context_var.get().loop``: named an event loop, of a type not known here
    return resolved.receiver_source.rpartition(".")[2].lower().endswith("loop")


def coroutine_target(coro: ast.expr, resolver: Resolver) -> JobTarget:
    source = resolver.text.segment(coro)
    if not isinstance(coro, ast.Call):
        reason = f"the coroutine '{source}' was created elsewhere: only known at run time"
        return JobTarget(None, TargetKind.DYNAMIC, source, reason)
    inner = job_target(coro.func, resolver)
    arguments = call_arguments(coro.args, coro.keywords, resolver)
    if inner.target is None:
        return JobTarget(None, TargetKind.DYNAMIC, source, inner.reason, arguments)
    kind = TargetKind.YIELDED if inner.kind is TargetKind.YIELDED else TargetKind.CALL_RESULT
    # ``layer = get_layer(); create_task(layer.save(x))``: the receiver is what that call
    # returns, for the index to type, as for the same call written on its own
    return JobTarget(inner.target, kind, source, "", arguments, returned=inner.returned)


def _sync_to_async(call: CallSite) -> bool:
    inner = call.node.func
    if not isinstance(inner, ast.Call):
        return False
    return call.state.resolver.expr(inner.func).target in SYNC_TO_ASYNC


def thread_call(call: CallSite) -> Candidate | None:
    """``loop.run_in_executor(ex, f, *a)`` / ``asyncio.to_thread(f, *a)``: a site even when awaited."""
    node = call.node
    if call.method == "run_in_executor":
        target_node, rest, keywords = argument_node(node, 1, "func"), node.args[2:], []
    elif call.target in TO_THREAD or call.target in THREADPOOL_RUNNERS:
        target_node, rest, keywords = argument_node(node, 0, "func"), node.args[1:], node.keywords
    elif call.target in ANYIO_RUNNERS:
        target_node, rest, keywords = argument_node(node, 0, "func"), node.args[1:], []
    elif _sync_to_async(call):
        assert isinstance(node.func, ast.Call)
        target_node, rest, keywords = argument_node(node.func, 0, "func"), node.args, node.keywords
    else:
        return None
    if target_node is None or partial_registration(target_node, call):
        return None
    scheduled = registration_handed(call, target_node, rest, keywords)
    if scheduled is not None:
        return scheduled  # sync_to_async(scheduler.add_job)(f): a registration, in a thread
    resolver = call.state.resolver
    _waits_by_reference(target_node, call)
    if call.method == "run_in_executor":  # ``run_in_executor(None, ctx.run, f, x)`` runs f(x)
        target_node, rest = unwrap_runner(target_node, rest, resolver)
    job = job_target(target_node, resolver)
    if evaluated_in_caller(target_node, job):
        return None
    found = candidate(
        Pattern.RUN_IN_EXECUTOR, node, job, call, call_arguments(rest, keywords, resolver)
    )
    found.waits = _FUTURE_WAITS
    _hand_over(found, target_node, [*rest, *(k.value for k in keywords)], call)
    return found
