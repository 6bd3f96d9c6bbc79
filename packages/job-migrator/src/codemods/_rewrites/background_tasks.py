"""``background_tasks.add_task(fn, a, k=v)`` -> ``background_tasks.add_task(fn.enqueue, a, k=v)``.

Starlette runs a background task after the response is sent, one after the
other, a plain function in its thread pool. Handing it ``fn.enqueue`` keeps
all of that: the job is queued after the response, and while the gate keeps
it inline (or an argument cannot be stored and the call falls back) it runs
there, as it did before the migration, never in the request. A plain
``fn.enqueue(a)`` in the handler would run an inline job before the response,
on the event loop of an ``async def`` handler.

A coroutine job is the exception: Starlette awaited it on the running loop,
and ``fn.enqueue`` run from its thread pool would give it a loop of its own.
It becomes ``fn.options(inline=InlineShape.TASK).enqueue(a)``, a task on the
handler's loop while it runs inline, and the ``BackgroundTasks`` parameter the
call went through is offered for removal (the function-level pass drops it
only when nothing else in the handler still uses it).
"""

from __future__ import annotations

import libcst as cst

from codemods._rewrites.enqueue import Inline, SiteShape, enqueue_call, join_args, shaped, unwrap
from codemods._syntax import replace_expression, statement_call
from codemods._types import Block, Edit, Import, Skip, Target

# Dropped only when nothing in the module uses the name any more.
UNUSED_IMPORTS = (
    Import("fastapi", "BackgroundTasks"),
    Import("starlette.background", "BackgroundTasks"),
)
_ONE_SPACE = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))


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
    args = join_args(bound, call.args[1:])
    if target.job.is_async:
        new = enqueue_call(func, args, target, like=call, inline=Inline(SiteShape.TASK))
        if isinstance(new, Skip):
            return new
        edit = shaped({index: [replace_expression(stmt, new)]}, Inline(SiteShape.TASK), target)
        receiver = call.func.value
        dropped = frozenset({receiver.value}) if isinstance(receiver, cst.Name) else frozenset()
        return Edit(
            edit.replacements, adds=edit.adds, dropped_params=dropped, removes=UNUSED_IMPORTS
        )
    new = enqueue_call(func, args, target, like=call)
    if isinstance(new, Skip):
        return new
    return Edit({index: [replace_expression(stmt, _handed(call, new))]})


def _handed(call: cst.Call, enqueue: cst.Call) -> cst.Call:
    """``call`` handing ``enqueue``'s method (``fn.enqueue``) and arguments to ``add_task``."""
    first = call.args[0]
    comma = first.comma
    if enqueue.args and not isinstance(comma, cst.Comma):
        comma = _ONE_SPACE  # ``add_task(lambda: fn(a))``: the arguments were the lambda's
    handed = first.with_changes(value=enqueue.func, comma=comma)
    return call.with_changes(args=[handed, *enqueue.args])
