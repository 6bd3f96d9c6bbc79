"""asyncio hand-offs whose result is unused -> ``fn.options(inline=...).enqueue(a)``.

* ``asyncio.create_task(fn(a))`` / ``ensure_future(fn(a))`` / ``tg.create_task(fn(a))``
  (``inline=InlineShape.TASK``)
* ``loop.run_in_executor(None, fn, a)`` (``inline=InlineShape.EXECUTOR``; a pool
  other than ``None`` goes along as ``executor=``)
* ``asyncio.to_thread(fn, a)`` (``EXECUTOR``, the loop's default); awaited or
  not: an awaited hand-off whose value is discarded becomes a plain statement.

While the gate keeps the job inline, the runtime runs it in that shape (on the
loop, in the executor), never in the request.
"""

from __future__ import annotations

import libcst as cst

from codemods._rewrites.enqueue import enqueue_handoff, shape_imports
from codemods._syntax import replace_expression, statement_call
from codemods._types import Block, Edit, Skip, Target


def rewrite(block: Block, index: int, target: Target) -> Edit | Skip | None:
    stmt = block.statements[index]
    call = statement_call(stmt)
    if call is None:
        return None
    new = enqueue_handoff(call, target)
    if new is None or isinstance(new, Skip):
        return new
    assert isinstance(stmt, cst.SimpleStatementLine)
    # Every hand-off keeps its shape (a task, an executor): the import goes with it.
    return Edit({index: [replace_expression(stmt, new)]}, adds=shape_imports(target))
