"""asyncio hand-offs whose result is unused -> ``fn.enqueue(a)``.

* ``asyncio.create_task(fn(a))`` / ``ensure_future(fn(a))`` / ``tg.create_task(fn(a))``
* ``loop.run_in_executor(None, fn, a)``
* ``asyncio.to_thread(fn, a)``; awaited or not: an awaited hand-off whose
  value is discarded becomes a plain ``fn.enqueue(a)`` statement.
"""

from __future__ import annotations

import libcst as cst

from codemods._rewrites.enqueue import enqueue_handoff
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
    return Edit({index: [replace_expression(stmt, new)]})
