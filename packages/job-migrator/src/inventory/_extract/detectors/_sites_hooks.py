"""Work handed to a framework or library to run later: BackgroundTasks, on_commit,
Django signals, APScheduler and ``schedule``."""

from __future__ import annotations

import ast

from inventory._extract._scopes import BindingKind
from inventory._extract._source import SourceText, span_of
from inventory._extract._state import Candidate
from inventory._extract.detectors._site_common import CallSite, argument_node, candidate
from inventory._extract.detectors._targets import (
    JobTarget,
    call_arguments,
    job_target,
    packed_arguments,
)
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
SIGNAL_TYPES = frozenset(
    {
        "django.dispatch.Signal",
        "django.dispatch.dispatcher.Signal",
        "django.db.models.signals.ModelSignal",
    }
)
RECEIVER_DECORATORS = frozenset({"django.dispatch.receiver", "django.dispatch.dispatcher.receiver"})
# Django signals sent by tests, ``manage.py migrate`` or at import: framework lifecycle
# hooks, never request-path work (moving "create permissions after migrate" to a worker
# would break migrate).
LIFECYCLE_SIGNALS = frozenset({"setting_changed", "pre_migrate", "post_migrate", "class_prepared"})
# Signals of libraries that fire outside the request path (inside the Celery worker).
_NOT_DJANGO_SIGNALS = ("celery.", "kombu.", "billiard.", "blinker.", "flask.", "gunicorn.")
FLASK_APSCHEDULER = frozenset(
    {"flask_apscheduler.APScheduler", "flask_apscheduler.scheduler.APScheduler"}
)


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


def signal_connect(call: CallSite) -> Candidate | None:
    if call.method != "connect":
        return None
    head = call.target.removesuffix(".connect")
    if head.rpartition(".")[2] in LIFECYCLE_SIGNALS:
        return None
    target_node = argument_node(call.node, 0, "receiver")
    if target_node is None or not (_is_signal(call) or _imported_signal(call, target_node)):
        return None
    if _vetoing_receiver(call, target_node):
        return None  # connect(check_quota): it only checks and raises, in the sender
    text = call.state.resolver.text
    detail = f"connected to {call.resolved.receiver_source}{_sender(call.node, text)}"
    return candidate(
        Pattern.SIGNAL_RECEIVER,
        call.node,
        job_target(target_node, call.state.resolver),
        call,
        [],
        detail,
    )


def _vetoing_receiver(call: CallSite, receiver: ast.expr) -> bool:
    """A function of this file that only inspects and raises (see :func:`only_vetoes`);
    one defined elsewhere is checked by the classifier, from its summary."""
    if not isinstance(receiver, ast.Name):
        return False
    found = call.state.resolver.scope.lookup(receiver.id)
    if found is None or found.kind is not BindingKind.FUNCTION:
        return False
    node = found.node
    return isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and only_vetoes(node)


def _is_signal(call: CallSite) -> bool:
    if call.receiver_type in SIGNAL_TYPES:
        return True
    head = call.target.removesuffix(".connect")
    if head.startswith(_NOT_DJANGO_SIGNALS):
        return False
    if head.startswith("django.") and ".signals." in head:
        return True
    # A project's own ``signals`` module, in a Django project.
    return Framework.DJANGO in call.frameworks and ".signals." in head and not head.startswith("?")


def _imported_signal(call: CallSite, receiver: ast.expr) -> bool:
    """``order_paid.connect(send_invoice)`` in a Django file, ``order_paid`` imported from a
    project module (``shop.events``) and ``send_invoice`` a function of this file.

    The signal's type is in another file; a lowercase imported object connected to one of
    this file's functions is taken for a signal (a DB driver's ``connect(dsn)`` takes no
    function).
    """
    binding = call.resolved.binding
    if Framework.DJANGO not in call.frameworks or binding is None:
        return False
    if binding.kind is not BindingKind.IMPORT or not isinstance(call.node.func, ast.Attribute):
        return False
    if not isinstance(call.node.func.value, ast.Name):
        return False  # ``module.attr.connect``: handled by the ``.signals.`` rule
    head = call.target.removesuffix(".connect")
    if head.startswith((*_NOT_DJANGO_SIGNALS, "django.", "?")) or not head.islower():
        return False
    if not isinstance(receiver, ast.Name):
        return False
    found = call.state.resolver.scope.lookup(receiver.id)
    return found is not None and found.kind is BindingKind.FUNCTION


def _sender(node: ast.Call, text: SourceText) -> str:
    sender = next((k.value for k in node.keywords if k.arg == "sender"), None)
    return f" (sender={text.segment(sender)})" if sender is not None else ""


def scheduler_call(call: CallSite) -> Candidate | None:
    node, resolver = call.node, call.state.resolver
    if call.method == "add_job" and call.receiver_type in FLASK_APSCHEDULER:
        # Flask-APScheduler: add_job(id, func, **trigger_args)
        target_node = argument_node(node, 1, "func")
        arguments = packed_arguments(
            argument_node(node, 99, "args"), argument_node(node, 99, "kwargs"), resolver
        )
    elif call.method == "add_job" and (call.receiver_type or "").startswith("apscheduler."):
        target_node = argument_node(node, 0, "func")
        arguments = packed_arguments(
            argument_node(node, 2, "args"), argument_node(node, 3, "kwargs"), resolver
        )
    elif call.method == "do" and call.target.startswith("schedule.") and ".every" in call.target:
        target_node = argument_node(node, 0, "job_func")
        arguments = call_arguments(node.args[1:], node.keywords, resolver)
    else:
        return None
    if target_node is None:
        return None
    return candidate(Pattern.SCHEDULER, node, job_target(target_node, resolver), call, arguments)


def decorator_site(
    decorator: ast.expr, dotted: str, function: str, enclosing: str | None, text: SourceText
) -> RawSite | None:
    """``@receiver(post_save, sender=X)`` and ``@scheduler.scheduled_job(...)`` make the function a job."""
    if dotted in RECEIVER_DECORATORS:
        if _lifecycle_only(decorator):
            return None
        pattern, detail = Pattern.SIGNAL_RECEIVER, f"receiver of {_signals(decorator, text)}"
    elif _scheduler_decorator(dotted):
        pattern, detail = Pattern.SCHEDULER, f"scheduled by {text.segment(decorator)}"
    else:
        return None
    job = JobTarget(function, TargetKind.FUNCTION, function.rpartition(".")[2])
    return RawSite(
        pattern=pattern,
        span=span_of(decorator),
        target=job.target,
        target_kind=job.kind,
        target_source=job.source,
        enclosing_function=enclosing,
        detail=detail,
    )


def _scheduler_decorator(dotted: str) -> bool:
    """``@scheduler.scheduled_job(...)`` (APScheduler), ``@scheduler.task(...)`` (Flask-APScheduler)."""
    if dotted.startswith("apscheduler.") and dotted.endswith(".scheduled_job"):
        return True
    head, _, last = dotted.rpartition(".")
    return last == "task" and head in FLASK_APSCHEDULER


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
    return f"{text.segment(decorator.args[0])}{_sender(decorator, text)}"


def only_vetoes(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """A body that only inspects and raises: ``if is_blocked(user): raise ValidationError(...)``.

    Connected to a signal, such a receiver is a synchronous veto: ``send()`` runs it in
    the sender, which gets the exception at once (a form's ``clean``, a permission check);
    nothing is left to run later, so it is not a job. Only ``if`` / ``assert``, local
    names bound to a value, ``return`` / ``return None``, ``pass`` and ``raise`` are
    allowed, with at least one ``raise``: a call made as a statement, an attribute or
    item set, a loop, ``with``, ``try`` or ``global`` may be an effect.
    """
    body = node.body
    if body and _docstring(body[0]):
        body = body[1:]
    raises: list[bool] = []
    return _inspects(body, raises) and any(raises)


def _inspects(body: list[ast.stmt], raises: list[bool]) -> bool:
    for stmt in body:
        if isinstance(stmt, ast.Raise):
            raises.append(True)
        elif isinstance(stmt, ast.If):
            if not (_inspects(stmt.body, raises) and _inspects(stmt.orelse, raises)):
                return False
        elif isinstance(stmt, ast.Assert):
            raises.append(True)
        elif isinstance(stmt, ast.Return):
            if stmt.value is not None and not _none(stmt.value):
                return False  # a value the sender collects: not a plain veto
        elif isinstance(stmt, ast.Assign):
            if not all(isinstance(t, ast.Name) for t in stmt.targets):
                return False
        elif isinstance(stmt, ast.AnnAssign):
            if not isinstance(stmt.target, ast.Name):
                return False
        elif not isinstance(stmt, ast.Pass):
            return False
    return True


def _docstring(stmt: ast.stmt) -> bool:
    return (
        isinstance(stmt, ast.Expr)
        and isinstance(stmt.value, ast.Constant)
        and isinstance(stmt.value.value, str)
    )


def _none(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is None
