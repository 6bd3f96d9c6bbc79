"""FastAPI handlers that use the job's result: enqueue and answer ``202 Accepted``.

The response carries the job id and the URL of the generated status endpoint
(``GET /jobs/{job_id}``, see ``codemods._edits.status_endpoint``). Only shapes where the
result's sole consumer is the handler's response are rewritten:

* ``return fn(a)`` / ``return await asyncio.to_thread(fn, a)``
* ``x = fn(a)`` (or an awaited hand-off) whose only other use is the ``return``
  that ends the same block.

Anything else (the result feeds other work, a condition, a log line) stays as
it is and is reported ``manual`` with the consuming lines.
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from codemods._rewrites.enqueue import enqueue_call, enqueue_handoff, is_job_ref
from codemods._types import Block, Edit, Import, Skip, Status, Target
from inventory.models import Pattern

MANUAL = "the result is used beyond the response: enqueueing would change what the handler does"
RESPONSE_IMPORT = Import("fastapi.responses", "JSONResponse")


def rewrite(block: Block, index: int, target: Target) -> Edit | Skip | None:
    stmt = block.statements[index]
    if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1:
        return Skip(MANUAL, Status.MANUAL)
    small = stmt.body[0]
    value = _handoff_value(small)
    enqueue = _enqueue(value, target) if value is not None else None
    if enqueue is None or isinstance(enqueue, Skip):
        return enqueue if isinstance(enqueue, Skip) else Skip(MANUAL, Status.MANUAL)
    handle = _fresh(block)
    first = stmt.with_changes(body=[_assign(handle, enqueue)])
    if isinstance(small, cst.Return):
        response = cst.SimpleStatementLine([_accepted(handle)])
        return Edit({index: [first, response]}, adds=(RESPONSE_IMPORT,))
    assert isinstance(small, cst.Assign)  # _handoff_value accepts a return or an assignment
    return _assigned(block, index, small, first, handle)


def _handoff_value(small: cst.BaseSmallStatement) -> cst.BaseExpression | None:
    if isinstance(small, cst.Return):
        return small.value
    if isinstance(small, cst.Assign) and m.matches(
        small, m.Assign(targets=[m.AssignTarget(target=m.Name())])
    ):
        return small.value
    return None


def _enqueue(value: cst.BaseExpression, target: Target) -> cst.Call | Skip | None:
    call = value.expression if isinstance(value, cst.Await) else value
    if not isinstance(call, cst.Call):
        return None
    if target.site.pattern is Pattern.DIRECT_CALL and is_job_ref(call.func, target):
        return enqueue_call(call.func, list(call.args), target, like=call)
    if target.site.pattern is Pattern.RUN_IN_EXECUTOR:
        # The handler awaited the value for its answer: inline, it still waits for it.
        return enqueue_handoff(call, target, keep_shape=False)
    return None


def _assigned(
    block: Block,
    index: int,
    small: cst.Assign,
    first: cst.SimpleStatementLine,
    handle: str,
) -> Edit | Skip:
    """``x = fn(a)`` whose only other use is the ``return`` that ends the block."""
    name = cst.ensure_type(small.targets[0].target, cst.Name).value
    last = len(block.statements) - 1
    final = block.statements[last]
    is_return = isinstance(final, cst.SimpleStatementLine) and m.matches(
        final, m.SimpleStatementLine(body=[m.Return()])
    )
    uses = len(m.findall(final, m.Name(name))) if is_return else 0
    if last == index or not uses or block.scope_names.get(name, 0) != uses + 1:
        return Skip(MANUAL, Status.MANUAL)
    assert isinstance(final, cst.SimpleStatementLine)
    response = final.with_changes(body=[_accepted(handle)])
    return Edit({index: [first], last: [response]}, adds=(RESPONSE_IMPORT,))


def _assign(name: str, value: cst.BaseExpression) -> cst.Assign:
    return cst.Assign(targets=[cst.AssignTarget(target=cst.Name(name))], value=value)


def _accepted(handle: str) -> cst.Return:
    return cst.Return(
        value=cst.parse_expression(
            f'JSONResponse({{"job_id": {handle}.id, "status_url": f"/jobs/{{{handle}.id}}"}}, status_code=202)'
        )
    )


def _fresh(block: Block) -> str:
    names = ["job_handle", *(f"job_handle_{i}" for i in range(1, 100))]
    return next(n for n in names if n not in block.scope_names)
