"""Threads, Thread subclasses, processes and multiprocessing pools."""

from __future__ import annotations

import ast

from inventory._extract._args import argument
from inventory._extract._resolve import capitalised
from inventory._extract._scopes import BindingKind
from inventory._extract._site_common import (
    CallSite,
    argument_node,
    candidate,
    guessed_from_name,
    keyword_true,
    waited_at_once,
)
from inventory._extract._state import Candidate, UseKind
from inventory._extract._targets import JobTarget, call_arguments, job_target, packed_arguments
from inventory.models import Pattern
from inventory.summary import TargetKind

# constructor -> (pattern, index of the target, its keyword, index of ``args``)
CONSTRUCTORS = {
    "threading.Thread": (Pattern.THREAD, 1, "target", 3),
    "threading.Timer": (Pattern.THREAD, 1, "function", 2),
    "multiprocessing.Process": (Pattern.PROCESS, 1, "target", 3),
    "multiprocessing.context.Process": (Pattern.PROCESS, 1, "target", 3),
    "multiprocessing.process.BaseProcess": (Pattern.PROCESS, 1, "target", 3),
}
POOL_TYPES = frozenset(
    {
        "multiprocessing.Pool",
        "multiprocessing.pool.Pool",
        "multiprocessing.pool.ThreadPool",
        "multiprocessing.dummy.Pool",
    }
)
_POOL_WAITS = frozenset({"get", "wait"})
POOL_METHODS = frozenset({"apply_async", "apply", "map_async", "starmap_async"})
# ``X().start()`` on these is not a Thread subclass being started.
_NOT_SUBCLASSES = ("threading.", "multiprocessing.", "apscheduler.", "asyncio.", "builtins.", "?")


def thread_constructor(call: CallSite) -> Candidate | None:
    spec = CONSTRUCTORS.get(call.target)
    if spec is None:
        return None
    pattern, index, keyword, args_index = spec
    target_node = argument_node(call.node, index, keyword)
    if target_node is None:
        return None
    resolver = call.state.resolver
    job = job_target(target_node, resolver)
    if job.target is not None and job.target.endswith(".serve_forever"):
        return None  # a server's accept loop: not a job
    arguments = packed_arguments(
        argument_node(call.node, args_index, "args"),
        argument_node(call.node, args_index + 1, "kwargs"),
        resolver,
    )
    found = candidate(
        pattern,
        call.node,
        job,
        call,
        arguments,
        "daemon" if keyword_true(call.node, "daemon") else "",
    )
    found.waits = frozenset({"join"})
    found.site.result_used = False  # start() returns nothing; only join() makes the caller wait
    if call.use is not None and call.use.kind is UseKind.RECEIVER and call.use.name == "start":
        found.start_lines.append(call.node.lineno)
    return found


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
    job = JobTarget(
        ctor, TargetKind.THREAD_SUBCLASS, resolver.text.segment(ctor_node or func.value)
    )
    found = candidate(Pattern.THREAD, ctor_node or call.node, job, call, arguments)
    found.site.result_used, found.site.detail = False, ""
    found.waits, found.start_lines = frozenset({"join"}), [call.node.lineno]
    found.bound = bound
    if bound:
        call.state.watch_name(bound)
    return found


def _started_object(
    call: CallSite, value: ast.expr
) -> tuple[ast.AST | None, str | None, str | None]:
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
    guess = (
        None
        if call.receiver_type in POOL_TYPES
        else guessed_from_name(call, "a process pool", ("pool",))
    )
    if call.receiver_type not in POOL_TYPES and guess is None:
        return None
    target_node = argument_node(call.node, 0, "func")
    if target_node is None or waited_at_once(call.use, _POOL_WAITS):
        return None
    resolver = call.state.resolver
    job = job_target(target_node, resolver)
    if call.method in ("apply", "apply_async"):
        arguments = packed_arguments(
            argument_node(call.node, 1, "args"), argument_node(call.node, 2, "kwds"), resolver
        )
    else:
        iterable = argument_node(call.node, 1, "iterable")
        arguments = [argument("iterable", iterable, resolver)] if iterable is not None else []
    blocking = call.method == "apply"
    found = candidate(
        Pattern.PROCESS,
        call.node,
        job,
        call,
        arguments,
        ", ".join(filter(None, [guess, "blocking: waits for the result" if blocking else ""])),
    )
    found.waits, found.drop_when_waited = _POOL_WAITS, not blocking
    return found
