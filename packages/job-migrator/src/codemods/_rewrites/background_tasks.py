"""``background_tasks.add_task(fn, a, k=v)`` -> ``fn.enqueue(a, k=v)``.

The ``BackgroundTasks`` parameter the call went through is offered for
removal; the function-level pass drops it only when nothing else in the
handler still uses it (FastAPI injects it, so the signature may shrink).
"""

from __future__ import annotations

import libcst as cst

from codemods._rewrites.enqueue import enqueue_call, join_args, unwrap
from codemods._syntax import replace_expression, statement_call
from codemods._types import Block, Edit, Import, Skip, Target

# Dropped only when nothing in the module uses the name any more.
UNUSED_IMPORTS = (
    Import("fastapi", "BackgroundTasks"),
    Import("starlette.background", "BackgroundTasks"),
)


def rewrite(block: Block, index: int, target: Target) -> Edit | Skip | None:
    stmt = block.statements[index]
    call = statement_call(stmt)
    if (
        call is None
        or not isinstance(call.func, cst.Attribute)
        or call.func.attr.value != "add_task"
    ):
        return None
    if not call.args or call.args[0].keyword is not None:
        return None
    found = unwrap(call.args[0].value, target)
    if found is None:
        return None
    func, bound = found
    assert isinstance(stmt, cst.SimpleStatementLine)
    new = enqueue_call(func, join_args(bound, call.args[1:]), target, like=call)
    if isinstance(new, Skip):
        return new
    receiver = call.func.value
    dropped = frozenset({receiver.value}) if isinstance(receiver, cst.Name) else frozenset()
    return Edit(
        {index: [replace_expression(stmt, new)]}, dropped_params=dropped, removes=UNUSED_IMPORTS
    )
