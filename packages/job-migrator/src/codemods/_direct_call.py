"""Direct call whose result is unused: ``fn(a, k=v)`` -> ``fn.enqueue(a, k=v)``.

The callee keeps the name it is written with (an alias, ``module.fn``), so
whatever the application's tests patch still intercepts the call site.
An awaited direct call (``await fn(a)``) becomes a plain ``fn.enqueue(a)``.
"""

from __future__ import annotations

import libcst as cst

from codemods._targets import enqueue_call, is_job_ref, replace_expression, statement_call
from codemods._types import Block, Edit, Skip, Target


def rewrite(block: Block, index: int, target: Target) -> Edit | Skip | None:
    stmt = block.statements[index]
    call = statement_call(stmt)
    if call is None or not is_job_ref(call.func, target):
        return None
    assert isinstance(stmt, cst.SimpleStatementLine)
    new = enqueue_call(call.func, list(call.args), target, like=call)
    if isinstance(new, Skip):
        return new
    return Edit({index: [replace_expression(stmt, new)]})
