"""The shape every ``202 Accepted`` rewrite of a Flask or Django handler shares.

The job's result may only feed the response body: ``return fn(a)``, or
``x = fn(a)`` whose one other use is the ``return`` ending the same block.
That return is replaced by the framework's 202 answer (job id, status URL).
Where the result decides what the user is told (a redirect, a branch in the
return, ``x or ...``, a flash or any other use) the site stays manual.
"""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst
import libcst.matchers as m

from codemods._rewrites.enqueue import enqueue_call, enqueue_handoff, is_job_ref
from codemods._syntax import last_name
from codemods._types import Block, Edit, Import, Skip, Status, Target
from inventory.models import Pattern

MANUAL = (
    "the result is used beyond the response body: an enqueue returns a job handle at once, "
    "not the job's outcome, so what the handler does or tells the user would change; either "
    'keep this site inline, or change what the user is told to "we will send ..." and '
    "rewrite it by hand"
)
# Calls whose argument decides where the user goes, not what the body says.
_DECIDING_CALLS = frozenset(
    {"redirect", "HttpResponseRedirect", "HttpResponsePermanentRedirect", "flash", "abort"}
)
_DECIDING = m.IfExp() | m.BooleanOperation() | m.Comparison() | m.UnaryOperation()

Answer = Callable[[str], cst.BaseExpression]  # the job handle's name -> the 202 response


def rewrite_accepted(
    block: Block, index: int, target: Target, answer: Answer, adds: tuple[Import, ...]
) -> Edit | Skip:
    """``handle = fn.enqueue(a)`` then ``return <answer>``, or a manual Skip."""
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
    response = cst.Return(value=answer(handle))
    if isinstance(small, cst.Return):
        return Edit({index: [first, cst.SimpleStatementLine([response])]}, adds=adds)
    name = cst.ensure_type(cst.ensure_type(small, cst.Assign).targets[0].target, cst.Name).value
    last = _only_return_using(block, index, name)
    if last is None:
        return Skip(MANUAL, Status.MANUAL)
    final = cst.ensure_type(block.statements[last], cst.SimpleStatementLine)
    return Edit({index: [first], last: [final.with_changes(body=[response])]}, adds=adds)


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


def _only_return_using(block: Block, index: int, name: str) -> int | None:
    """The index of the block's final ``return`` when it is ``name``'s only other use, as body."""
    last = len(block.statements) - 1
    final = block.statements[last]
    if last == index or not m.matches(final, m.SimpleStatementLine(body=[m.Return()])):
        return None
    uses = len(m.findall(final, m.Name(name)))
    if not uses or block.scope_names.get(name, 0) != uses + 1 or _decides(final):
        return None
    return last


def _decides(stmt: cst.BaseStatement) -> bool:
    """The return branches, compares or redirects: the result may decide what the user sees."""
    if m.findall(stmt, _DECIDING):
        return True
    calls = m.findall(stmt, m.Call())
    return any(last_name(cst.ensure_type(c, cst.Call).func) in _DECIDING_CALLS for c in calls)


def _assign(name: str, value: cst.BaseExpression) -> cst.Assign:
    return cst.Assign(targets=[cst.AssignTarget(target=cst.Name(name))], value=value)


def _fresh(block: Block) -> str:
    names = ["job_handle", *(f"job_handle_{i}" for i in range(1, 100))]
    return next(n for n in names if n not in block.scope_names)
