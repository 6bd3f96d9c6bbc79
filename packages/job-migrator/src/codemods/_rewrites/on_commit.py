"""``transaction.on_commit(...)``: the job is enqueued after the commit, as before it ran.

* ``on_commit(lambda: fn(x))`` -> ``on_commit(lambda: fn.enqueue(x))``
* ``on_commit(partial(fn, x))`` -> ``on_commit(partial(fn.enqueue, x))`` (arguments
  are still bound when the callback is registered, exactly as before)
* ``on_commit(fn)`` -> ``on_commit(fn.enqueue)``
"""

from __future__ import annotations

import libcst as cst

from codemods._rewrites.enqueue import enqueue_call, is_job_ref
from codemods._syntax import last_name, statement_call
from codemods._types import Block, Edit, Skip, Target


def rewrite(block: Block, index: int, target: Target) -> Edit | Skip | None:
    stmt = block.statements[index]
    call = statement_call(stmt)
    if call is None or last_name(call.func) != "on_commit" or not call.args:
        return None
    callback = _rewrite_callback(call.args[0].value, target)
    if callback is None or isinstance(callback, Skip):
        return callback
    new_args = [call.args[0].with_changes(value=callback), *call.args[1:]]
    new = stmt.deep_replace(call, call.with_changes(args=new_args))
    return Edit({index: [cst.ensure_type(new, cst.SimpleStatementLine)]})


def _rewrite_callback(expr: cst.BaseExpression, target: Target) -> cst.BaseExpression | Skip | None:
    if is_job_ref(expr, target):
        if target.key_template is not None:
            return Skip("on_commit(fn) with an idempotency key: write the lambda by hand")
        if target.wrapper is not None and target.wrapper.passes:
            # A lifted nested function: its free variables read at commit, as the closure did.
            new = enqueue_call(expr, [], target)
            if isinstance(new, Skip):
                return new
            return cst.Lambda(params=cst.Parameters(), body=new)
        func = cst.Name(target.wrapper.name) if target.wrapper is not None else expr
        return cst.Attribute(value=func, attr=cst.Name("enqueue"))
    if (
        isinstance(expr, cst.Lambda)
        and isinstance(expr.body, cst.Call)
        and is_job_ref(expr.body.func, target)
    ):
        new = enqueue_call(expr.body.func, list(expr.body.args), target, like=expr.body)
        return new if isinstance(new, Skip) else expr.with_changes(body=new)
    if isinstance(expr, cst.Call) and last_name(expr.func) == "partial" and expr.args:
        return _rewrite_partial(expr, target)
    return None


def _rewrite_partial(expr: cst.Call, target: Target) -> cst.BaseExpression | Skip | None:
    head, *rest = expr.args
    if head.keyword is not None or not is_job_ref(head.value, target):
        return None
    new = enqueue_call(head.value, list(rest), target)
    if isinstance(new, Skip):
        return new
    enqueue_ref = new.func
    extra = new.args[len(rest) :]  # the idempotency_key argument, when one was added
    return expr.with_changes(
        args=[head.with_changes(value=enqueue_ref), *new.args[: len(rest)], *extra]
    )
