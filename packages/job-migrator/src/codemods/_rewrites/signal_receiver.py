"""Signal receivers: the receiver enqueues the job instead of running it.

A receiver that calls the job (``@receiver(post_save, sender=Order)`` or
``post_save.connect(on_saved)``, whose body calls ``resize(instance)``):
every call of the job in its body becomes ``resize.enqueue(instance)``. The
scanner may point at the call or at the receiver; both are handled.

A receiver that *is* the job (``@receiver(...) def on_saved(sender, instance,
created, **kwargs)``) is split: the function keeps its name and its body and
becomes the job (registered with ``@job``); its decorators go to a new
receiver ``on_saved_receiver`` with the same parameters, which enqueues the job
with them, by keyword. The runtime stores ``sender`` (a model class) by label
and ``instance`` by reference (its model codec); ``created``, ``raw``,
``using`` and ``update_fields`` are plain or tagged data.

The ``signal`` Django passes is a live ``Signal`` object, never storable: the
new receiver drops it (``kwargs.pop("signal", None)``, or ``signal=None`` for a
named parameter), so it does not make every call fall back to running
in-process. A receiver that returns a value stays (``send()`` hands it to the sender:
signals used as a plugin registry), and so does one whose body reads its
``signal``, and so does one
for ``pre_delete`` / ``post_delete`` (and a job call inside one that hands on
``instance``, ``origin`` or ``**kwargs``): the instance's row is gone when a
worker would read it again. A call passing values of it (``instance.pk``) moves.
The same holds for any ``pre_*`` signal (``pre_save``...): it is sent before the
sender acts, and what the receiver changes on the instance must happen first.
A receiver of ``post_delete`` (and other post_* signals) that never reads its instance
(``instance_free``) moves without it: its new receiver drops ``instance`` and ``origin``.
Whatever else ``**kwargs`` carries is passed on and checked at run time. A
receiver that calls its job with ``**kwargs`` passes on the same, without
``signal`` (``**{k: v for k, v in kwargs.items() if k != "signal"}``).
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from codemods._rewrites.enqueue import enqueue_statement, is_job_ref
from codemods._syntax import last_name, statement_call
from codemods._triggers import (
    _DELETE_SIGNALS,
    ORIGIN,
    POST_DELETE,
    READS_ORIGIN,
    READS_SIGNAL,
    RETURNS,
    SHAPE,
    SIGNAL,
    _reads_signal,
    _returns_value,
    changes_instance,
    delete_signal,
    reads,
)
from codemods._types import Block, Edit, Skip, Target

CONNECTED = (
    "the receiver is itself the job, connected with `.connect(...)`: give its definition "
    "the `@receiver(<signal>, sender=...)` decorator instead of the connect call, rescan "
    "and apply again (the receiver is then split into the job and a receiver that enqueues it)"
)
TAKEN = (
    "the receiver is itself the job, and the name `{name}` its new receiver would take is "
    "already bound in the module: rename that, and apply again"
)
DELETES = (
    "the receiver handles {signal}: by the time a worker runs, the instance's row is deleted, "
    "and the runtime carries a model instance by reference (the worker reads the row again); "
    "keep it in-process, or move the work into a job taking the values it reads of the "
    "instance (`instance.pk`, a file name) and call that from the receiver, then apply again"
)
BEFORE = (
    "the receiver handles {signal}, sent before the sender acts (a pre_save receiver sets "
    "fields the save then writes; what it changes on the instance must happen first), and a "
    "worker would run it afterwards, on a copy read again from the database; keep it "
    "in-process, or move only its slow part into a job taking values (`instance.pk`) called "
    "from the receiver, then apply again"
)
_INSTANCE_NAMES = frozenset({"instance", "origin"})


def rewrite(block: Block, index: int, target: Target) -> Edit | Skip | None:
    call = statement_call(block.statements[index])
    if (
        call is not None
        and last_name(call.func) == "connect"
        and call.args
        and is_job_ref(call.args[0].value, target)
    ):
        held = delete_signal(call.func)
        return Skip(held_reason(held) if held else CONNECTED)
    if call is not None and is_job_ref(call.func, target):
        statements = list(block.statements)
        new = statements[index].deep_replace(call, _without_signal(call))
        statements[index] = cst.ensure_type(new, cst.SimpleStatementLine)
        block = Block(statements, block.scope_names)
    return enqueue_statement(block, index, target)


def _without_signal(call: cst.Call) -> cst.Call:
    """``job(instance, **kwargs)`` passes on everything but Django's ``signal``."""
    args = [
        a.with_changes(value=cst.parse_expression(_FILTERED.format(rest=a.value.value)))
        if a.star == "**" and isinstance(a.value, cst.Name)
        else a
        for a in call.args
    ]
    return call.with_changes(args=args)


_FILTERED = '{{k: v for k, v in {rest}.items() if k != "signal"}}'


def delete_receiver(func: cst.FunctionDef) -> str | None:
    """The delete or ``pre_*`` signal (``post_delete``, ``pre_save``) a decorated receiver
    handles, else None."""
    for decorator in func.decorators:
        found = delete_signal(decorator.decorator)
        if found:
            return found
    return None


def held_reason(signal: str) -> str:
    """Why a receiver of ``signal`` (a delete, or a ``pre_*`` signal) stays in-process."""
    return (DELETES if signal in _DELETE_SIGNALS else BEFORE).format(signal=signal)


def hands_on_instance(call: cst.Call) -> bool:
    """The call passes a receiver's ``instance`` / ``origin`` whole, or its ``**kwargs``."""
    return any(
        a.star == "**" or (isinstance(a.value, cst.Name) and a.value.value in _INSTANCE_NAMES)
        for a in call.args
    )


def instance_by_value(block: Block, index: int) -> Block | None:
    """The block with the job call's ``instance`` argument snapshotted (``snapshot(instance)``);
    None when the call hands on ``**kwargs`` or ``origin`` (not carried by value)."""
    call = statement_call(block.statements[index])
    if call is None or any(
        a.star == "**" or (isinstance(a.value, cst.Name) and a.value.value == ORIGIN)
        for a in call.args
    ):
        return None
    wrapped = cst.parse_expression(f"{SNAPSHOT}({INSTANCE})")
    args = [
        a.with_changes(value=wrapped) if m.matches(a.value, m.Name(INSTANCE)) else a
        for a in call.args
    ]
    statements = list(block.statements)
    new = statements[index].deep_replace(call, call.with_changes(args=args))
    statements[index] = cst.ensure_type(new, cst.SimpleStatementLine)
    return Block(statements, block.scope_names)


def receiver_name(target: Target) -> str:
    return f"{target.name}_receiver"


def split_receiver(
    func: cst.FunctionDef, target: Target, taken: frozenset[str]
) -> tuple[cst.FunctionDef, cst.FunctionDef] | Skip | None:
    """The job (the function, undecorated) and its new receiver; a Skip when it cannot move;
    None when ``func`` is not the job."""
    if func.name.value != target.name:
        return None
    problem = _problem(func, target, taken)
    if problem is not None:
        return problem
    job = func.with_changes(decorators=[])
    mode = _BY_VALUE_MODE if snapshots(func) else _REFERENCE
    if delete_receiver(func) and mode == _REFERENCE:
        mode = _WITHOUT_INSTANCE  # ``_problem`` let it through: it never reads the instance
    receiver = cst.FunctionDef(
        name=cst.Name(receiver_name(target)),
        params=func.params,
        body=cst.IndentedBlock(body=_receiver_body(func.params, target, mode)),
        decorators=func.decorators,
        leading_lines=[cst.EmptyLine(), cst.EmptyLine()],
    )
    return job, receiver


def _problem(func: cst.FunctionDef, target: Target, taken: frozenset[str]) -> Skip | None:
    params = func.params
    if not func.decorators:
        return Skip(CONNECTED)
    if func.asynchronous is not None:
        return Skip(SHAPE.format(what="a coroutine"))
    # ``Signal.send`` passes only keywords (``receiver(signal=self, sender=sender, **named)``),
    # so ``*args`` is always empty: harmless; positional-only parameters could never be filled.
    if params.posonly_params:
        return Skip(SHAPE.format(what="given positional-only parameters"))
    deleted = delete_receiver(func)
    if deleted and not snapshots(func) and not instance_free(func):
        return Skip(held_reason(deleted))
    if deleted and reads(func, ORIGIN):
        return Skip(READS_ORIGIN)
    changed = changes_instance(target.job) if deleted else None
    if changed:
        return Skip(changed)
    if deleted and SNAPSHOT in taken:
        return Skip(TAKEN.format(name=SNAPSHOT))
    if receiver_name(target) in taken:
        return Skip(TAKEN.format(name=receiver_name(target)))
    if _reads_signal(func):
        return Skip(READS_SIGNAL)
    if _returns_value(func):
        return Skip(RETURNS)
    return None


def snapshots(func: cst.FunctionDef) -> bool:
    """A ``post_delete`` receiver and nothing else: it moves with the instance by value."""
    names = {
        n.value for d in func.decorators for n in m.findall(d, m.Name()) if isinstance(n, cst.Name)
    }
    return names & _MODEL_SIGNALS == {POST_DELETE}


def instance_free(func: cst.FunctionDef) -> bool:
    """A receiver of ``post_delete`` and of other signals sent after the sender acted
    (``post_save``, ``m2m_changed``; no ``pre_*``), whose body never reads the instance nor
    ``origin``, and reads its ``**kwargs`` only by literal keys (``kwargs.get("raw")``): the
    deleted row is nothing to it, so its new receiver passes neither on."""
    names = {
        n.value for d in func.decorators for n in m.findall(d, m.Name()) if isinstance(n, cst.Name)
    }
    if POST_DELETE not in names or any(n.startswith("pre_") for n in names & _MODEL_SIGNALS):
        return False
    if reads(func, INSTANCE) or reads(func, ORIGIN):
        return False
    star = func.params.star_kwarg
    return star is None or _read_by_key(func.body, star.name.value)


def _read_by_key(body: cst.BaseSuite, name: str) -> bool:
    """Every use of ``name`` in ``body`` is ``name["key"]``, ``name.get("key", ...)`` or
    ``"key" in name`` with a literal key: the mapping is never handed on whole."""
    uses = len(m.findall(body, m.Name(name)))
    key = m.SimpleString()
    keyed = m.findall(
        body, m.Subscript(value=m.Name(name), slice=[m.SubscriptElement(m.Index(key))])
    )
    got = m.findall(
        body,
        m.Call(
            func=m.Attribute(value=m.Name(name), attr=m.Name("get")),
            args=[m.Arg(key), m.ZeroOrMore()],
        ),
    )
    tested = m.findall(
        body,
        m.Comparison(left=key, comparisons=[m.ComparisonTarget(m.In() | m.NotIn(), m.Name(name))]),
    )
    return uses == len(keyed) + len(got) + len(tested)


def _receiver_body(params: cst.Parameters, target: Target, mode: str) -> list[cst.BaseStatement]:
    named = [p.name.value for p in [*params.params, *params.kwonly_params]]
    by_value = mode == _BY_VALUE_MODE
    dropped = _DROPPED[mode]
    passed = [_passed(n, dropped, by_value) for n in named]
    lines: list[str] = []
    star = params.star_kwarg
    if star is not None:
        rest = star.name.value
        lines += [f'{rest}.pop("{n}", None)  # {_WHY[n]}: not passed on' for n in dropped]
        if by_value and INSTANCE not in named:
            lines.append(f'{rest}["{INSTANCE}"] = {SNAPSHOT}({rest}["{INSTANCE}"])  # {_BY_VALUE}')
        passed.append(f"**{rest}")
    lines.append(f"{target.name}.enqueue({', '.join(passed)})")
    return [cst.parse_statement(line) for line in lines]


def _passed(name: str, dropped: tuple[str, ...], by_value: bool) -> str:
    if name in dropped:
        return f"{name}=None"
    if by_value and name == INSTANCE:
        return f"{name}={SNAPSHOT}({name})"
    return f"{name}={name}"


INSTANCE = "instance"
SNAPSHOT = "snapshot"  # queue_runtime.codecs.snapshot: the deleted instance by value
_BY_VALUE = "its row is deleted: by value"
_REFERENCE = "by reference"  # the worker reads the instance's row again
_BY_VALUE_MODE = "by value"  # post_delete: snapshot(instance)
_WITHOUT_INSTANCE = "without the instance"  # a receiver that never reads it (``instance_free``)
_DROPPED = {
    _REFERENCE: (SIGNAL,),
    _BY_VALUE_MODE: (SIGNAL, ORIGIN),
    _WITHOUT_INSTANCE: (SIGNAL, ORIGIN, INSTANCE),
}
_WHY = {
    SIGNAL: "a live Signal object",
    ORIGIN: "what delete() was called on (gone too)",
    INSTANCE: "never read by the job, and its row may be deleted",
}
_MODEL_SIGNALS = frozenset(
    {"pre_init", "post_init", "pre_save", "post_save", "pre_delete", "post_delete"}
    | {"m2m_changed", "pre_migrate", "post_migrate", "class_prepared"}
)
