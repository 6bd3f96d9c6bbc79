"""Work handed to a framework or library to run later: BackgroundTasks, on_commit, and
the decorators that make a function a signal receiver or a scheduled job."""

from __future__ import annotations

import ast

from inventory._extract._resolve import Resolver
from inventory._extract._source import SourceText, span_of
from inventory._extract._state import Candidate, FunctionState
from inventory._extract.detectors._site_common import CallSite, argument_node, candidate
from inventory._extract.detectors._sites_schedulers import scheduler_decorator
from inventory._extract.detectors._sites_signals import (
    LIFECYCLE_SIGNALS,
    RECEIVER_DECORATORS,
    blinker_decorator,
    imported_object,
    only_imports,
    sender_name,
    signal_names,
)
from inventory._extract.detectors._sites_signals import only_vetoes as only_vetoes
from inventory._extract.detectors._targets import JobTarget, call_arguments, job_target
from inventory.models import Framework, Pattern
from inventory.summary import RawSite, TargetKind

BACKGROUND_TASKS = frozenset(
    {
        "fastapi.BackgroundTasks",
        "fastapi.background.BackgroundTasks",
        "starlette.background.BackgroundTasks",
    }
)
BACKGROUND_TASK = frozenset(
    {"starlette.background.BackgroundTask", "fastapi.background.BackgroundTask"}
)
ON_COMMIT = frozenset({"django.db.transaction.on_commit"})


def background_call(call: CallSite) -> Candidate | None:
    node = call.node
    is_method = call.method == "add_task" and call.receiver_type in BACKGROUND_TASKS
    if not is_method and call.target not in BACKGROUND_TASK:
        return None
    target_node = argument_node(node, 0, "func")
    if target_node is None:
        return None
    resolver = call.state.resolver
    job = job_target(target_node, resolver)
    detail = "" if is_method else "BackgroundTask object: runs after the response is sent"
    return candidate(
        Pattern.BACKGROUND_TASKS,
        node,
        job,
        call,
        call_arguments(node.args[1:], node.keywords, resolver),
        detail,
    )


def on_commit_call(call: CallSite) -> Candidate | None:
    if call.target not in ON_COMMIT:
        return None
    target_node = argument_node(call.node, 0, "func")
    if target_node is None:
        return None
    return candidate(
        Pattern.ON_COMMIT, call.node, job_target(target_node, call.state.resolver), call, []
    )


def decorator_site(
    decorator: ast.expr,
    dotted: str,
    node: ast.FunctionDef | ast.AsyncFunctionDef,
    outer: FunctionState,
    frameworks: set[Framework],
) -> RawSite | None:
    """``@receiver(post_save, sender=X)``, ``@sig.connect_via(app)`` and
    ``@scheduler.scheduled_job(...)`` make the function ``node`` (defined in ``outer``) a job."""
    found = _decorator_kind(decorator, dotted, outer.resolver, frameworks)
    if found is None:
        return None
    pattern, detail, to_confirm = found
    if pattern is Pattern.SIGNAL_RECEIVER and only_imports(node):
        return None  # registration plumbing: imports a module so its tasks register
    function = f"{outer.resolver.scope.prefix}.{node.name}"
    job = JobTarget(function, TargetKind.FUNCTION, function.rpartition(".")[2])
    return RawSite(
        pattern=pattern,
        span=span_of(decorator),
        target=job.target,
        target_kind=job.kind,
        target_source=job.source,
        enclosing_function=outer.qualname,
        detail=detail,
        signals=_decorated_signals(decorator, outer.resolver)
        if pattern is Pattern.SIGNAL_RECEIVER
        else [],
        sender=_decorated_sender(decorator, outer.resolver)
        if pattern is Pattern.SIGNAL_RECEIVER
        else "",
        signal_to_confirm=to_confirm,
    )


def _decorated_sender(decorator: ast.expr, resolver: Resolver) -> str:
    """``@receiver(sig, sender=X)``, ``@sig.connect_via(X)``."""
    if not isinstance(decorator, ast.Call):
        return ""
    func = decorator.func
    if isinstance(func, ast.Attribute) and func.attr == "connect_via":
        return sender_name(argument_node(decorator, 0, "sender"), resolver)
    return sender_name(argument_node(decorator, 99, "sender"), resolver)


def _decorated_signals(decorator: ast.expr, resolver: Resolver) -> list[str]:
    """``@receiver(sig)`` / ``@receiver([a, b])``, ``@sig.connect``, ``@sig.connect_via(x)``."""
    call = decorator if isinstance(decorator, ast.Call) else None
    func = call.func if call is not None else decorator
    if isinstance(func, ast.Attribute) and func.attr in ("connect", "connect_via"):
        return signal_names(func.value, resolver)
    if call is None:
        return []
    return signal_names(argument_node(call, 0, "signal"), resolver)


def _decorator_kind(
    decorator: ast.expr, dotted: str, resolver: Resolver, frameworks: set[Framework]
) -> tuple[Pattern, str, bool] | None:
    """The site's pattern, its detail, and whether the classifier must confirm the signal
    (``@sig.connect`` on an object imported from another module)."""
    text = resolver.text
    blinker = blinker_decorator(decorator, resolver, frameworks)
    if blinker is not None:
        return Pattern.SIGNAL_RECEIVER, blinker, False
    if isinstance(decorator, ast.Attribute) and _imported_connect(decorator, resolver):
        return Pattern.SIGNAL_RECEIVER, f"connected to {text.segment(decorator.value)}", True
    if dotted in RECEIVER_DECORATORS:
        if _lifecycle_only(decorator):
            return None
        return Pattern.SIGNAL_RECEIVER, f"receiver of {_signals(decorator, text)}", False
    if scheduler_decorator(decorator, dotted):
        return Pattern.SCHEDULER, f"scheduled by {text.segment(decorator)}", False
    return None


def _imported_connect(decorator: ast.expr, resolver: Resolver) -> bool:
    """``@order_paid.connect`` on an object imported from another module (see
    ``imported_object``): a receiver once the classifier confirms the signal."""
    return (
        isinstance(decorator, ast.Attribute)
        and decorator.attr == "connect"
        and imported_object(decorator.value, resolver)
    )


def _lifecycle_only(decorator: ast.expr) -> bool:
    """``@receiver(setting_changed)``, ``@receiver([pre_migrate, post_migrate])``."""
    if not isinstance(decorator, ast.Call) or not decorator.args:
        return False
    signal = decorator.args[0]
    names = signal.elts if isinstance(signal, ast.List | ast.Tuple) else [signal]
    return bool(names) and all(_last_name(n) in LIFECYCLE_SIGNALS for n in names)


def _last_name(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    return node.attr if isinstance(node, ast.Attribute) else ""


def _signals(decorator: ast.expr, text: SourceText) -> str:
    if not isinstance(decorator, ast.Call) or not decorator.args:
        return text.segment(decorator)
    sender = argument_node(decorator, 99, "sender")
    note = f" (sender={text.segment(sender)})" if sender is not None else ""
    return f"{text.segment(decorator.args[0])}{note}"
