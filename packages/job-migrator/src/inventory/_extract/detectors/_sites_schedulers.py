"""In-process schedulers: APScheduler (3.x and 4.x), Flask-APScheduler and ``schedule``.

Registrations, by each library's documented API:

* APScheduler: ``scheduler.add_job(func, trigger, args, kwargs, ...)`` (3.x),
  ``add_schedule(func, trigger, ...)`` / ``add_job(func, ...)`` (4.x), the decorator
  ``@scheduler.scheduled_job(trigger, ...)``; the job may be given as ``func=``.
* Flask-APScheduler: ``scheduler.add_job(id, func, **trigger)`` and
  ``@scheduler.task(trigger, id=..., ...)``.
* ``schedule``: ``schedule.every(n).unit.do(job, *args)`` and ``@repeat(every(n).unit)``.

The scheduler may be typed here (built in this file, on ``self`` in ``__init__``) or only
named so (``from app.ext import scheduler``, ``self.scheduler`` of an unknown type). A
registration may be reached indirectly: ``sync_to_async(scheduler.add_job)(f, ...)``,
``to_thread(scheduler.add_job, f)``, ``partial(scheduler.add_job, f, ...)``.
"""

from __future__ import annotations

import ast
from enum import StrEnum

from inventory._extract._resolve import Resolved
from inventory._extract._state import Candidate
from inventory._extract.detectors._site_common import CallSite, argument_node, candidate
from inventory._extract.detectors._targets import (
    call_arguments,
    job_target,
    packed_arguments,
)
from inventory._extract.values._values import PARTIALS
from inventory.models import Pattern
from inventory.summary import ReceiverKind

FLASK_APSCHEDULER = frozenset(
    {"flask_apscheduler.APScheduler", "flask_apscheduler.scheduler.APScheduler"}
)
REGISTRATIONS = frozenset({"add_job", "add_schedule"})
SCHEDULE_DECORATORS = frozenset({"schedule.repeat"})
_NAMES = ("sched",)  # scheduler, sched, _scheduler, job_scheduler
_GUESSABLE = (ReceiverKind.MODULE, ReceiverKind.CLASS, ReceiverKind.UNKNOWN)
_TRIGGERS = frozenset({"interval", "cron", "date"})


def scheduler_call(call: CallSite) -> Candidate | None:
    node = call.node
    if call.method in REGISTRATIONS:
        shape = _scheduler_shape(call.resolved)
        return _registration(call, shape, node.args, node.keywords) if shape else None
    if call.target in PARTIALS:
        return _partial_registration(call)
    if call.method == "do" and call.target.startswith("schedule.") and ".every" in call.target:
        target_node = argument_node(node, 0, "job_func")
        if target_node is None:
            return None
        resolver = call.state.resolver
        arguments = call_arguments(node.args[1:], node.keywords, resolver)
        job = job_target(target_node, resolver)
        return candidate(Pattern.SCHEDULER, node, job, call, arguments)
    return None


class Api(StrEnum):
    """Whose registration API a scheduler's ``add_job`` follows."""

    APSCHEDULER = "apscheduler"  # add_job(func, trigger, args, kwargs, ...)
    FLASK = "flask_apscheduler"  # add_job(id, func, **trigger)
    NAMED = "named"  # typed nowhere: APScheduler's shape unless an id comes first


def _scheduler_shape(resolved: Resolved) -> tuple[Api, str] | None:
    """The scheduler's API and a note for the site's detail; None when the receiver is no
    scheduler (``board.add_job(title)``)."""
    rtype = resolved.receiver_type or ""
    if rtype in FLASK_APSCHEDULER:
        return Api.FLASK, ""
    if rtype.startswith("apscheduler."):
        return Api.APSCHEDULER, ""
    note = _named_scheduler(resolved)
    return (Api.NAMED, note) if note else None


def _named_scheduler(resolved: Resolved) -> str | None:
    """``self.scheduler``, ``jobs.sched`` or ``shared`` imported as ``app.ext.scheduler``:
    an object of a type not known here, a scheduler by its name."""
    if resolved.receiver_type is not None or resolved.receiver not in _GUESSABLE:
        return None
    written = resolved.receiver_source
    owner = resolved.target.rpartition(".")[0].rpartition(".")[2]
    for name in (written.rpartition(".")[2], owner):
        if any(word in name.lower() for word in _NAMES) and name.isidentifier():
            return f"{written} taken for a scheduler from its name"
    return None


def _registration(
    call: CallSite, shape: tuple[Api, str], args: list[ast.expr], keywords: list[ast.keyword]
) -> Candidate | None:
    """The job of ``add_job(...)`` given ``args`` and ``keywords`` as the call passes them."""
    resolver = call.state.resolver
    api, note = shape
    flask = api is Api.FLASK or (api is Api.NAMED and _id_first(args))
    probe = ast.Call(func=call.node.func, args=args, keywords=keywords)
    target_node = argument_node(probe, 1 if flask else 0, "func")
    if target_node is None:
        return None
    packed = (99, 99) if flask else (2, 3)  # Flask-APScheduler: args= / kwargs= only
    arguments = packed_arguments(
        argument_node(probe, packed[0], "args"), argument_node(probe, packed[1], "kwargs"), resolver
    )
    job = job_target(target_node, resolver)
    return candidate(Pattern.SCHEDULER, call.node, job, call, arguments, note)


def _id_first(args: list[ast.expr]) -> bool:
    """``add_job("purge", purge, ...)``: Flask-APScheduler's id before the function
    (APScheduler's text references are ``"module:function"``)."""
    first = args[0] if args else None
    if not (isinstance(first, ast.Constant) and isinstance(first.value, str)):
        return False
    return len(args) >= 2 and ":" not in first.value


def _partial_registration(call: CallSite) -> Candidate | None:
    """``partial(scheduler.add_job, refresh, "interval", minutes=5)``: registered when
    the partial is called; the site is where the job is named."""
    node = call.node
    if not node.args or not isinstance(node.args[0], ast.Attribute):
        return None
    method = node.args[0]
    if method.attr not in REGISTRATIONS:
        return None
    shape = _scheduler_shape(call.state.resolver.expr(method))
    return _registration(call, shape, node.args[1:], node.keywords) if shape else None


def registration_handed(
    call: CallSite, target: ast.expr, args: list[ast.expr], keywords: list[ast.keyword]
) -> Candidate | None:
    """``sync_to_async(scheduler.add_job)(f, ...)``, ``to_thread(scheduler.add_job, f)``:
    a scheduler registration run by a thread runner is the registration, not a thread's job."""
    if not isinstance(target, ast.Attribute) or target.attr not in REGISTRATIONS:
        return None
    shape = _scheduler_shape(call.state.resolver.expr(target))
    return _registration(call, shape, args, keywords) if shape else None


def partial_registration(target: ast.expr, call: CallSite) -> bool:
    """``run_in_executor(None, partial(scheduler.add_job, f))``: the partial's own call is
    the site (see :func:`scheduler_call`)."""
    if not isinstance(target, ast.Call) or not target.args:
        return False
    inner = target.args[0]
    head = call.state.resolver.expr(target.func).target
    return head in PARTIALS and isinstance(inner, ast.Attribute) and _registers(inner, call)


def _registers(method: ast.Attribute, call: CallSite) -> bool:
    resolved = call.state.resolver.expr(method)
    return method.attr in REGISTRATIONS and _scheduler_shape(resolved) is not None


def scheduler_decorator(decorator: ast.expr, dotted: str) -> bool:
    """``@scheduler.scheduled_job(...)`` (APScheduler), ``@scheduler.task(trigger, ...)``
    (Flask-APScheduler), ``@repeat(every(10).minutes)`` (``schedule``)."""
    head, _, last = dotted.rpartition(".")
    if dotted in SCHEDULE_DECORATORS or last == "scheduled_job":
        return True  # names only these libraries use
    if last != "task":
        return False
    if head in FLASK_APSCHEDULER:
        return True
    # ``@scheduler.task("interval", ...)`` on a scheduler of another module; Celery's
    # ``@app.task`` takes no trigger.
    named = any(word in head.rpartition(".")[2].lower() for word in _NAMES)
    return named and isinstance(decorator, ast.Call) and _trigger_given(decorator)


def _trigger_given(decorator: ast.Call) -> bool:
    first = argument_node(decorator, 0, "trigger")
    return isinstance(first, ast.Constant) and first.value in _TRIGGERS
