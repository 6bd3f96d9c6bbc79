"""A receiver that is the job, connected with ``signal.connect(handler, ...)``.

Django documents two ways to register a receiver: ``@receiver(...)`` on its
definition, and ``signal.connect(handler, sender=..., dispatch_uid=...)``, often
in an ``AppConfig.ready()``. For the second, the function stays the job (it gets
``@job``) and the connect call now registers a new module-level function
``<name>_receiver`` next to it, in the module of the connect call::

    def reindex_receiver(sender, **kwargs):
        from shop.signals import reindex  # the job's module, imported when the signal fires
        kwargs.pop("signal", None)  # a live Signal object: not passed on
        reindex.enqueue(sender=sender, **kwargs)

Django sends every receiver its arguments by keyword (``signal=``, ``sender=``
and the signal's own), so this one signature serves every job. The job's module
is imported inside the receiver: a connect call in ``ready()`` runs when the app
registry is ready, and importing models-dependent code at the top of ``apps.py``
would fail. The receiver is a module-level function, so the weak reference
``connect()`` keeps by default stays alive; ``sender=``, ``weak=`` and
``dispatch_uid=`` are kept as written. A ``post_delete`` connect snapshots the
instance (by value, see ``signal_receiver``); any ``pre_*`` signal keeps the
receiver in-process. Every connect call of the job is rewritten, or none
(:func:`all_or_none`, checked when the sites are selected).
"""

from __future__ import annotations

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from codemods._project import Project
from codemods._rewrites import signal_receiver as sr
from codemods._rewrites.enqueue import is_job_ref
from codemods._syntax import last_name
from codemods._types import Skip, Target
from inventory.models import CallSite, Job, Pattern

RECEIVER_KEYWORD = "receiver"
NESTED = (
    "the receiver is itself the job, connected inside a module-level `{kind}` block: move the "
    "connect call into a function (`AppConfig.ready()`) or to the module's top level, and "
    "apply again"
)


def handler(call: cst.Call, target: Target) -> cst.Arg | None:
    """The connect call's argument naming the job: the first positional, or ``receiver=``."""
    positional = [a for a in call.args if a.keyword is None and not a.star]
    named = [a for a in call.args if a.keyword is not None and a.keyword.value == RECEIVER_KEYWORD]
    found = (positional or named)[:1]
    return found[0] if found and is_job_ref(found[0].value, target) else None


def is_connect(call: cst.Call | None, target: Target) -> bool:
    return (
        call is not None and last_name(call.func) == "connect" and handler(call, target) is not None
    )


def receiver(call: cst.Call, target: Target, here: str) -> tuple[cst.Call, cst.FunctionDef] | Skip:
    """The connect call registering ``<name>_receiver``, and that function; a Skip for a
    ``pre_*`` signal. ``here`` is the connect call's module."""
    held = sr._delete_signal(call.func)
    by_value = held == sr.POST_DELETE
    if held and not by_value:
        return Skip(sr.held_reason(held))
    name = sr.receiver_name(target)
    arg = handler(call, target)
    assert arg is not None  # is_connect was checked
    new_call = call.deep_replace(arg.value, cst.Name(name))
    return cst.ensure_type(new_call, cst.Call), _function(target, here, by_value)


def _function(target: Target, here: str, by_value: bool) -> cst.FunctionDef:
    module, _, _ = target.job.qualname.rpartition(".")
    lines = [] if module == here else [f"from {module} import {target.name}"]
    lines += [
        f'kwargs.pop("{n}", None)  # {sr._WHY[n]}: not passed on' for n in sr._DROPPED[by_value]
    ]
    if by_value:
        lines.append(
            f'kwargs["{sr.INSTANCE}"] = {sr.SNAPSHOT}(kwargs["{sr.INSTANCE}"])  # {sr._BY_VALUE}'
        )
    lines.append(f"{target.name}.enqueue(sender=sender, **kwargs)")
    source = f"def {sr.receiver_name(target)}(sender, **kwargs):\n" + "".join(
        f"    {line}\n" for line in lines
    )
    func = cst.ensure_type(cst.parse_statement(source), cst.FunctionDef)
    return func.with_changes(leading_lines=[], lines_after_decorators=[])


def by_value(call: cst.Call) -> bool:
    return sr._delete_signal(call.func) == sr.POST_DELETE


def connect_at(source: str, line: int, target: Target) -> cst.Call | None:
    """The connect call of the job on ``line`` of ``source``, else None."""
    wrapper = MetadataWrapper(cst.parse_module(source), unsafe_skip_copy=True)
    positions = wrapper.resolve(PositionProvider)
    for node, pos in positions.items():
        if isinstance(node, cst.Call) and pos.start.line == line and is_connect(node, target):
            return node
    return None


PLACES = (
    "the receiver is itself the job, and {count} registrations of it were found ({places}), "
    "{why}: every one is rewritten or none, as a registration left in place would run the job "
    "in-process too; {fix}, and apply again"
)


def all_or_none(site: CallSite, sites: list[CallSite], job: Job, project: Project) -> str | None:
    """Why ``site``, a connect call registering the job itself, cannot move; None when it and
    every other registration of the job (``sites``: all the job's sites) can."""
    receivers = [s for s in sites if s.pattern is Pattern.SIGNAL_RECEIVER]
    kinds = {s.location: _registration(s, job, project) for s in receivers}
    if kinds.get(site.location) not in (_CONNECT, _HELD):
        return None  # not a connect call of the job itself: the other rewrites decide
    held = [s for s in receivers if kinds[s.location] in (_NOT_CONNECT, _HELD)]
    if held and len(receivers) > 1:
        places = ", ".join(f"{s.location.path}:{s.location.line}" for s in receivers)
        why = _why(kinds[held[0].location] or _NOT_CONNECT, held[0])
        return PLACES.format(count=len(receivers), places=places, why=why, fix=_FIX)
    return _definition_problem(job, project)


_NOT_CONNECT = "not a connect call"
_HELD = "held"
_CONNECT = "connect"
_FIX = (
    "make every registration a `signal.connect(<job>, ...)` of a post_* signal (or all `@receiver`)"
)


def _why(kind: str, at: CallSite) -> str:
    where = f"{at.location.path}:{at.location.line}"
    if kind == _HELD:
        return f"and the one at {where} is of a signal whose receiver stays in-process"
    return f"and the one at {where} is not a `connect(<job>, ...)` call this rewrite can change"


def _registration(site: CallSite, job: Job, project: Project) -> str | None:
    """How ``site`` registers the job: a connect call (held: of a ``pre_*`` signal), something
    else; None when the site is no registration of the job itself (a call inside a receiver)."""
    info = project.module_at(site.location.path)
    name = job.qualname.rpartition(".")[2]
    call = None if info is None else _connect_named(info.text, site.location.line, name)
    if call is not None:
        held = sr._delete_signal(call.func)
        return _HELD if held and held != sr.POST_DELETE else _CONNECT
    if site.enclosing_function == job.qualname or site.enclosing_function is None:
        return _NOT_CONNECT  # the decorator form, a connect in a loop, a factory
    return None


def _connect_named(source: str, line: int, name: str) -> cst.Call | None:
    wrapper = MetadataWrapper(cst.parse_module(source), unsafe_skip_copy=True)
    for node, pos in wrapper.resolve(PositionProvider).items():
        if isinstance(node, cst.Call) and pos.start.line == line and _names_handler(node, name):
            return node
    return None


def _names_handler(call: cst.Call, name: str) -> bool:
    if last_name(call.func) != "connect":
        return False
    positional = [a for a in call.args if a.keyword is None and not a.star]
    named = [a for a in call.args if a.keyword is not None and a.keyword.value == RECEIVER_KEYWORD]
    found = (positional or named)[:1]
    return bool(found) and last_name(found[0].value) == name


def _definition_problem(job: Job, project: Project) -> str | None:
    """The job's own definition cannot be called by the new receiver (by keyword, no value)."""
    if job.location is None:
        return None
    info = project.module_at(job.location.path)
    name = job.qualname.rpartition(".")[2]
    module = None if info is None else cst.parse_module(info.text)
    func = next(
        (
            n
            for n in (module.body if module else [])
            if isinstance(n, cst.FunctionDef) and n.name.value == name
        ),
        None,
    )
    if func is None:
        return "the receiver is itself the job, and is not a module-level function: " + _FIXDEF
    if func.decorators:
        return "the receiver is itself the job, and is decorated as well as connected: " + _FIXDEF
    return sr.connected_problem(func)


_FIXDEF = "make it a plain module-level `def` taking `sender, **kwargs`, and apply again"
