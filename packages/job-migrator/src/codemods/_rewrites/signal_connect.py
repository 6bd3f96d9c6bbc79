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
``dispatch_uid=`` are kept as written. A ``post_delete`` connect registers
``<name>_deleted_receiver``, which snapshots the instance (by value, see
``signal_receiver``), so a job connected to post_save and post_delete moves with
a receiver for each; any ``pre_*`` signal keeps the
receiver in-process. Every connect call of the job is rewritten, or none
(:func:`all_or_none`, checked when the sites are selected).
"""

from __future__ import annotations

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from codemods._rewrites import signal_receiver as sr
from codemods._rewrites.enqueue import is_job_ref
from codemods._syntax import last_name
from codemods._triggers import POST_DELETE, delete_signal
from codemods._types import Skip, Target

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
    held = delete_signal(call.func)
    by_value = held == POST_DELETE
    if held and not by_value:
        return Skip(sr.held_reason(held))
    name = receiver_name(target, by_value)
    arg = handler(call, target)
    assert arg is not None  # is_connect was checked
    new_call = call.deep_replace(arg.value, cst.Name(name))
    return cst.ensure_type(new_call, cst.Call), _function(target, here, by_value)


def _function(target: Target, here: str, by_value: bool) -> cst.FunctionDef:
    module, _, _ = target.job.qualname.rpartition(".")
    lines = [] if module == here else [f"from {module} import {target.name}"]
    lines += [
        f'kwargs.pop("{n}", None)  # {sr._WHY[n]}: not passed on'
        for n in sr._DROPPED[sr._BY_VALUE_MODE if by_value else sr._REFERENCE]
    ]
    if by_value:
        lines.append(
            f'kwargs["{sr.INSTANCE}"] = {sr.SNAPSHOT}(kwargs["{sr.INSTANCE}"])  # {sr._BY_VALUE}'
        )
    lines.append(f"{target.name}.enqueue(sender=sender, **kwargs)")
    source = f"def {receiver_name(target, by_value)}(sender, **kwargs):\n" + "".join(
        f"    {line}\n" for line in lines
    )
    func = cst.ensure_type(cst.parse_statement(source), cst.FunctionDef)
    return func.with_changes(leading_lines=[], lines_after_decorators=[])


def receiver_name(target: Target, by_value: bool) -> str:
    """``<name>_receiver``; a post_delete connect's own (it snapshots the instance, the others
    read the row again) is ``<name>_deleted_receiver``, so one job serves both."""
    return f"{target.name}_deleted_receiver" if by_value else sr.receiver_name(target)


def by_value(call: cst.Call) -> bool:
    return delete_signal(call.func) == POST_DELETE


def connect_at(source: str, line: int, target: Target) -> cst.Call | None:
    """The connect call of the job on ``line`` of ``source``, else None."""
    wrapper = MetadataWrapper(cst.parse_module(source), unsafe_skip_copy=True)
    positions = wrapper.resolve(PositionProvider)
    for node, pos in positions.items():
        if isinstance(node, cst.Call) and pos.start.line == line and is_connect(node, target):
            return node
    return None
