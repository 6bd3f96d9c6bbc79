"""Threads, Thread subclasses, processes and multiprocessing pools."""

from __future__ import annotations

import ast

from inventory._extract._library import MP_CONTEXT
from inventory._extract._resolve import Resolved, capitalised
from inventory._extract._scopes import BindingKind
from inventory._extract._state import Candidate, UseKind
from inventory._extract.detectors._site_common import (
    CallSite,
    argument_node,
    candidate,
    evaluated_in_caller,
    keyword_true,
    receiver_note,
    waited_at_once,
)
from inventory._extract.detectors._targets import (
    JobTarget,
    call_arguments,
    coroutine_run,
    job_target,
    packed_arguments,
)
from inventory._extract.values._args import argument
from inventory.models import Argument, Pattern
from inventory.summary import TargetKind

# constructor -> (pattern, index of the target, its keyword, index of ``args``)
CONSTRUCTORS = {
    "threading.Thread": (Pattern.THREAD, 1, "target", 3),
    "threading.Timer": (Pattern.THREAD, 1, "function", 2),
    "multiprocessing.Process": (Pattern.PROCESS, 1, "target", 3),
    "multiprocessing.context.Process": (Pattern.PROCESS, 1, "target", 3),
    "multiprocessing.process.BaseProcess": (Pattern.PROCESS, 1, "target", 3),
    # a context (``multiprocessing.get_context("spawn")``) "has the same API as the
    # multiprocessing module": its Process and Pool are the module's
    f"{MP_CONTEXT}.Process": (Pattern.PROCESS, 1, "target", 3),
}
POOL_TYPES = frozenset(
    {
        "multiprocessing.Pool",
        "multiprocessing.pool.Pool",
        "multiprocessing.pool.ThreadPool",
        "multiprocessing.dummy.Pool",
        f"{MP_CONTEXT}.Pool",
    }
)
_POOL_WAITS = frozenset({"get", "wait"})
_THREAD_WAITS = frozenset({"join"})
_LOOP_RUNNERS = (".serve_forever", ".run_forever")
# A Timer or thread running one of these is a watchdog or a timeout, not application work.
_WATCHDOGS = frozenset(
    {
        "_thread.interrupt_main",
        "os.kill",
        "os._exit",
        "os.abort",
        "signal.raise_signal",
        "signal.pthread_kill",
        "sys.exit",
        "faulthandler.dump_traceback",
    }
)
# Calls that run a web or socket server until the process stops: a function calling one
# is a server, and a thread or process running it is infrastructure, not a job.
SERVER_RUNNERS = frozenset(
    {
        "uvicorn.run",
        "uvicorn.main.run",
        "uvicorn.Server.run",
        "uvicorn.Server.serve",
        "uvicorn.server.Server.run",
        "uvicorn.server.Server.serve",
        "hypercorn.asyncio.serve",
        "hypercorn.trio.serve",
        "werkzeug.serving.run_simple",
        "waitress.serve",
        "aiohttp.web.run_app",
        "flask.Flask.run",
        "flask.app.Flask.run",
    }
)
_SERVER_LOOPS = frozenset({"serve_forever", "run_forever"})
# ``self.app.run(host=..., port=...)`` on an app of a type not known here: a dev server.
_SERVER_NAMES = ("app", "application", "server", "httpd", "socketio")
_SERVER_KEYWORDS = frozenset({"host", "port"})


def runs_a_server(node: ast.Call, resolved: Resolved, method: str) -> bool:
    """A call that runs a web or socket server, or an event loop, until the process stops:
    a function making one is a server (see ``consumers``), not a job."""
    if method in _SERVER_LOOPS or resolved.target in SERVER_RUNNERS:
        return True
    if method != "run" or resolved.receiver_type is not None:
        return False
    name = resolved.receiver_source.rpartition(".")[2].lower()
    named = name.endswith(_SERVER_NAMES)
    return named and any(k.arg in _SERVER_KEYWORDS for k in node.keywords)


# Server classes whose inherited ``run`` / ``serve`` a subclass's thread may run.
_SERVER_CLASSES = ("uvicorn.Server", "uvicorn.server.Server", "hypercorn.", "socketserver.")
_SERVER_METHODS = frozenset({"run", "serve", "serve_forever"})
# Methods on a name passed to the thread (an Event it sets, a queue it fills, a barrier)
# by which the starting function waits for the thread to finish.
_HANDOFF_WAITS = frozenset({"wait", "get", "join", "recv"})
POOL_METHODS = frozenset({"apply_async", "apply", "map_async", "starmap_async"})
# ``X().start()`` on these is not a Thread subclass being started.
_NOT_SUBCLASSES = ("threading.", "multiprocessing.", "apscheduler.", "asyncio.", "builtins.", "?")


def thread_constructor(call: CallSite) -> Candidate | None:
    spec = CONSTRUCTORS.get(call.target)
    target_node = argument_node(call.node, spec[1], spec[2]) if spec else None
    if spec is None or target_node is None:
        return None
    resolver = call.state.resolver
    packed = argument_node(call.node, spec[3], "args")
    handed = list(packed.elts) if isinstance(packed, ast.Tuple | ast.List) else []
    made = coroutine_run(target_node, handed, resolver)
    if made is not None:  # Thread(target=asyncio.run, args=(refresh(x),)): refresh runs there
        target_node = made.func
    job = job_target(target_node, resolver)
    if evaluated_in_caller(target_node, job):
        return None  # Thread(target=f(x)): f runs here, the thread gets its result
    if job.target is not None and job.target.endswith(_LOOP_RUNNERS):
        return None  # a server's accept loop or an event loop: infrastructure, not a job
    if job.target in SERVER_RUNNERS:
        return None  # Thread(target=lambda: uvicorn.run(app)): a server
    if job.target in _WATCHDOGS:
        return None  # Timer(s, _thread.interrupt_main): a timeout, not a job
    if inherited_server_loop(job.target, call):
        return None  # Thread(target=self.run) on a uvicorn.Server subclass: a server
    daemon = "daemon" if keyword_true(call.node, "daemon") else ""
    arguments = (
        call_arguments(made.args, [], resolver)
        if made is not None
        else _packed(call, spec[3], "kwargs")
    )
    found = candidate(spec[0], call.node, job, call, arguments, daemon)
    found.waits = _THREAD_WAITS
    found.site.result_used = False  # start() returns nothing; only join() makes the caller wait
    if call.use is not None and call.use.kind is UseKind.RECEIVER and call.use.name == "start":
        found.start_lines.append(call.node.lineno)
    found.handoffs = _handed_names(call, spec[3])
    for name in found.handoffs:
        call.state.watch_name(name)
    return found


def inherited_server_loop(target: str | None, call: CallSite) -> bool:
    """``self.run`` of a project class that inherits ``run`` from a server class."""
    if target is None:
        return False
    owner, _, method = target.rpartition(".")
    local = call.classes.get(owner)
    if local is None or method not in _SERVER_METHODS or method in local.methods:
        return False
    return any(base.startswith(_SERVER_CLASSES) for base in local.bases)


def _handed_names(call: CallSite, args_index: int) -> list[str]:
    """Plain local names in ``args=(...)`` / ``kwargs={...}``: an Event or queue the
    function may wait on (``done.wait()``) until the thread is finished."""
    node = call.node
    packed = [
        argument_node(node, args_index, "args"),
        argument_node(node, args_index + 1, "kwargs"),
    ]
    names: list[str] = []
    for value in packed:
        elements = []
        if isinstance(value, ast.Tuple | ast.List):
            elements = value.elts
        elif isinstance(value, ast.Dict):
            elements = value.values
        names += [
            e.id for e in elements if isinstance(e, ast.Name) and e.id not in call.state.watch
        ]
    return names


def handoff_waited(found: Candidate, uses: dict[str, list[tuple[str, int]]]) -> bool:
    """The function waits on an Event or queue it handed to the thread, after starting it."""
    start = min(found.start_lines, default=found.site.span.line)
    return any(
        method in _HANDOFF_WAITS and line >= start
        for name in found.handoffs
        for method, line in uses.get(name, [])
    )


def _packed(call: CallSite, args_index: int, kwargs_name: str) -> list[Argument]:
    """``args=(...)`` and ``kwargs={...}`` (``kwds`` for pools), by position or keyword."""
    node = call.node
    args = argument_node(node, args_index, "args")
    kwargs = argument_node(node, args_index + 1, kwargs_name)
    return packed_arguments(args, kwargs, call.state.resolver)


def thread_start(call: CallSite) -> Candidate | None:
    """``Sub(...).start()`` / ``t = Sub(); t.start()`` where Sub may derive from Thread."""
    func = call.node.func
    if call.method != "start" or not isinstance(func, ast.Attribute):
        return None
    ctor_node, ctor, bound = _started_object(call, func.value)
    if ctor is None or not _maybe_thread_class(ctor, call):
        return None
    resolver = call.state.resolver
    arguments = []
    if isinstance(ctor_node, ast.Call):
        arguments = call_arguments(ctor_node.args, ctor_node.keywords, resolver)
    # The target is the class: the classifier checks it derives from Thread and takes its run().
    written = ctor_node.func if isinstance(ctor_node, ast.Call) else func.value
    job = JobTarget(ctor, TargetKind.THREAD_SUBCLASS, resolver.text.segment(written))
    found = candidate(Pattern.THREAD, ctor_node or call.node, job, call, arguments)
    found.site.result_used, found.site.detail = False, ""
    found.waits, found.start_lines = _THREAD_WAITS, [call.node.lineno]
    found.bound = bound
    if bound:
        call.state.watch_name(bound)
    return found


def _started_object(
    call: CallSite, value: ast.expr
) -> tuple[ast.expr | ast.stmt | None, str | None, str | None]:
    """(constructor call, constructor, name the object is bound to) of the started object."""
    if isinstance(value, ast.Call):
        inner = call.state.resolver.expr(value.func)
        return value, inner.target if capitalised(inner.target) else None, None
    binding = call.resolved.binding
    source = call.resolved.receiver_source
    if isinstance(value, ast.Name) and binding is not None and binding.kind is BindingKind.INSTANCE:
        return binding.node, binding.target, source
    if call.receiver_type and isinstance(value, ast.Attribute):
        return None, call.receiver_type, source
    return None, None, None


def _maybe_thread_class(ctor: str, call: CallSite) -> bool:
    if ctor in CONSTRUCTORS or ctor.startswith(_NOT_SUBCLASSES):
        return False
    local = call.classes.get(ctor)
    if local is None:
        return capitalised(ctor)  # defined elsewhere: the classifier checks its bases
    return local.thread_like or (local.external_bases and "run" in local.methods)


def pool_call(call: CallSite) -> Candidate | None:
    if call.method not in POOL_METHODS:
        return None
    note = receiver_note(call, POOL_TYPES, "a process pool", ("pool",))
    target_node = argument_node(call.node, 0, "func")
    if note is None or target_node is None or waited_at_once(call.use, _POOL_WAITS):
        return None
    job = job_target(target_node, call.state.resolver)
    blocking = call.method == "apply"
    detail = ", ".join(filter(None, [note, "blocking: waits for the result" if blocking else ""]))
    found = candidate(Pattern.PROCESS, call.node, job, call, _pool_arguments(call), detail)
    found.waits, found.drop_when_waited = _POOL_WAITS, not blocking
    return found


def _pool_arguments(call: CallSite) -> list[Argument]:
    if call.method in ("apply", "apply_async"):
        return _packed(call, 1, "kwds")
    iterable = argument_node(call.node, 1, "iterable")
    return [] if iterable is None else [argument("iterable", iterable, call.state.resolver)]


# Greenlets and green threads: fire-and-forget in the web process, like a thread.
# callable -> index of the function it runs
GREENLET_SPAWNERS = {
    "gevent.spawn": 0,
    "gevent.spawn_raw": 0,
    "gevent.spawn_later": 1,
    "gevent.Greenlet.spawn": 0,
    "gevent.greenlet.Greenlet.spawn": 0,
    "gevent.Greenlet.spawn_later": 1,
    "eventlet.spawn": 0,
    "eventlet.spawn_n": 0,
    "eventlet.spawn_after": 1,
    "eventlet.greenthread.spawn": 0,
    "eventlet.greenthread.spawn_n": 0,
    "eventlet.greenthread.spawn_after": 1,
}
GREENLET_METHODS = frozenset(
    {"spawn", "spawn_n", "spawn_later", "spawn_after", "start_background_task"}
)
_GREEN_POOLS = ("gevent.pool.", "eventlet.greenpool.", "eventlet.GreenPool")
_SOCKETIO = ("flask_socketio.SocketIO", "socketio.Server", "socketio.AsyncServer")
_GREENLET_WAITS = frozenset({"join", "get", "wait"})


def greenlet_call(call: CallSite) -> Candidate | None:
    """``gevent.spawn(f, *a)``, ``eventlet.spawn_after(s, f)``, ``pool.spawn(f)``,
    ``socketio.start_background_task(f, *a)``."""
    index = _greenlet_index(call)
    node = call.node
    if index is None or waited_at_once(call.use, _GREENLET_WAITS):
        return None
    if len(node.args) <= index or any(isinstance(a, ast.Starred) for a in node.args[: index + 1]):
        return None
    resolver = call.state.resolver
    job = job_target(node.args[index], resolver)
    if job.target is not None and job.target.endswith(_LOOP_RUNNERS):
        return None  # gevent.spawn(server.serve_forever): infrastructure
    arguments = call_arguments(node.args[index + 1 :], node.keywords, resolver)
    detail = f"{call.target.rpartition('.')[2]}: a greenlet in the web process"
    found = candidate(Pattern.THREAD, node, job, call, arguments, detail)
    found.waits, found.drop_when_waited = _GREENLET_WAITS, True
    return found


def _greenlet_index(call: CallSite) -> int | None:
    index = GREENLET_SPAWNERS.get(call.target)
    if index is not None:
        return index
    rtype = call.receiver_type or ""
    if call.method in ("spawn", "spawn_n") and rtype.startswith(_GREEN_POOLS):
        return 0
    if call.method == "start_background_task" and rtype.startswith(_SOCKETIO):
        return 0
    return None
