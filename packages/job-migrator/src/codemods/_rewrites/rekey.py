"""A moved site whose job now needs a key: ``job.enqueue(a)`` -> ``job.enqueue(a, idempotency_key=...)``.

A job moved before its verdict was decided (``--job`` / ``--hold-unknown``: held), or
moved idempotent and later found to need a key, keeps the sites the first apply
wrote. Once its key is declared and the verdict rule lets it move with that key
(``codemods._select._rekeyed``), a later apply gives each of those enqueues the
key (until then, each says what is missing), built from the call's own arguments
exactly as for a site moved keyed (:func:`codemods._rewrites.enqueue.key_expression`). ``.options(...)`` takes the key
when the call already binds options, or when the job has a parameter of that name.
An enqueue that already passes a key, or an ``enqueue_many`` (whose keys are a
list, ``idempotency_keys=``), is left with the reason.
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from codemods._rewrites.enqueue import (
    KEYWORD_EQUAL,
    append_arg,
    is_job_ref,
    key_expression,
    without_options,
)
from codemods._types import Block, Edit, Skip, Status, Target

KEYED = "already passes idempotency_key: its key stays as written"
MANY = (
    "enqueue_many queues several calls, each with a key of its own: pass "
    "idempotency_keys=[...] (one per call, from the declared key) by hand"
)
KEY = "idempotency_key"


def rewrite(block: Block, index: int, target: Target) -> Edit | Skip | None:
    stmt = block.statements[index]
    calls = [c for c in m.findall(stmt, m.Call(func=m.Attribute())) if _enqueues(c, target)]
    if not calls:
        return None
    replaced: cst.CSTNode = stmt
    for call in calls:
        assert isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute)
        if call.func.attr.value == "enqueue_many":
            return Skip(MANY, Status.ALREADY)
        owner = call.func.value
        options = _options(owner)
        if any(_has_key(c) for c in (call, options) if c is not None):
            return Skip(KEYED, Status.ALREADY)
        if target.key_template is None:  # the key is not declared, or the job not named
            return Skip(target.rekey, Status.ALREADY)
        job = without_options(owner)
        key = key_expression(target.key_template, call.args, target.job.parameters, job)
        if isinstance(key, Skip):
            return key
        arg = cst.Arg(keyword=cst.Name(KEY), value=key, equal=KEYWORD_EQUAL)
        if options is not None:
            owner = options.with_changes(args=append_arg(list(options.args), arg))
            new = call.with_changes(func=call.func.with_changes(value=owner))
        elif KEY in target.job.parameters:
            bound = cst.Call(func=cst.Attribute(value=job, attr=cst.Name("options")), args=[arg])
            new = call.with_changes(func=call.func.with_changes(value=bound))
        else:
            new = call.with_changes(args=append_arg(list(call.args), arg))
        replaced = replaced.deep_replace(call, new)
    assert isinstance(replaced, cst.BaseStatement)
    return Edit(replacements={index: [replaced]})


def _enqueues(call: cst.CSTNode, target: Target) -> bool:
    """``<job>.enqueue(...)``, ``<job>.options(...).enqueue(...)`` or ``enqueue_many``."""
    assert isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute)
    if call.func.attr.value not in ("enqueue", "enqueue_many"):
        return False
    return is_job_ref(without_options(call.func.value), target)


def _options(expr: cst.BaseExpression) -> cst.Call | None:
    if (
        isinstance(expr, cst.Call)
        and isinstance(expr.func, cst.Attribute)
        and expr.func.attr.value == "options"
    ):
        return expr
    return None


def _has_key(call: cst.Call) -> bool:
    return any(a.keyword is not None and a.keyword.value == KEY for a in call.args)
