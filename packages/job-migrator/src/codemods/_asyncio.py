"""asyncio hand-offs whose result is unused -> ``fn.enqueue(a)``.

* ``asyncio.create_task(fn(a))`` / ``ensure_future(fn(a))`` / ``tg.create_task(fn(a))``
* ``loop.run_in_executor(None, fn, a)``
* ``asyncio.to_thread(fn, a)``; awaited or not: an awaited hand-off whose
  value is discarded becomes a plain ``fn.enqueue(a)`` statement.
"""

from __future__ import annotations

import libcst as cst

from codemods._targets import (
    enqueue_call,
    is_job_ref,
    join_args,
    last_name,
    replace_expression,
    statement_call,
    unwrap,
)
from codemods._types import Block, Edit, Skip, Target

_TASKS = frozenset({"create_task", "ensure_future"})


def rewrite(block: Block, index: int, target: Target) -> Edit | Skip | None:
    stmt = block.statements[index]
    call = statement_call(stmt)
    if call is None:
        return None
    new = enqueue_for(call, target)
    if new is None or isinstance(new, Skip):
        return new
    assert isinstance(stmt, cst.SimpleStatementLine)
    return Edit({index: [replace_expression(stmt, new)]})


def enqueue_for(call: cst.Call, target: Target) -> cst.Call | Skip | None:
    method = (
        last_name(call.func) if not isinstance(call.func, cst.Attribute) else call.func.attr.value
    )
    positional = [a for a in call.args if a.keyword is None]
    if method in _TASKS and positional and isinstance(positional[0].value, cst.Call):
        coro = positional[0].value
        return (
            enqueue_call(coro.func, list(coro.args), target, like=coro)
            if is_job_ref(coro.func, target)
            else None
        )
    skip = {"run_in_executor": 1, "to_thread": 0}.get(method or "")
    if skip is None or len(call.args) <= skip:
        return None
    found = unwrap(call.args[skip].value, target)
    if found is None:
        return None
    return enqueue_call(found[0], join_args(found[1], call.args[skip + 1 :]), target, like=call)
