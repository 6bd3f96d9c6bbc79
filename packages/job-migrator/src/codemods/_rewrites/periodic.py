"""A scheduler registration becomes the job's periodic declaration: the registration goes.

``sched.add_job(fn, "interval", minutes=5)`` and ``schedule.every(5).minutes.do(fn)``
statements are removed (a block left empty gets ``pass``); ``@sched.scheduled_job(...)``
is removed from the job's decorators. The schedule itself (``every=`` / ``cron=``)
was translated at selection (``codemods._triggers``) and goes into the job's
``@job(...)`` when it is registered, only for a site rewritten here: a job is
never ticked by the runtime while its in-process registration still runs it.

The scheduler object and its start or run loop stay: other jobs, or code this
pass cannot see, may still register on it (the outcome's report says so).
"""

from __future__ import annotations

import libcst as cst

from codemods._rewrites.enqueue import is_job_ref
from codemods._syntax import statement_call
from codemods._triggers import job_argument, method, translate
from codemods._types import Block, Edit, Import, Skip, Target

_STATEMENT_FORMS = ("add_job", "do")


def rewrite(block: Block, index: int, target: Target) -> Edit | Skip | None:
    """Remove the registration statement at ``index`` when it registers the target job."""
    call = statement_call(block.statements[index])
    if call is None or method(call) not in _STATEMENT_FORMS:
        return None
    found = job_argument(call)
    if found is None or not is_job_ref(found, target):
        return None
    if not _same_schedule(call, target):
        return Skip("the registration changed since it was selected: rescan")
    return Edit(_removed(block, index), removes=(Import("schedule"),))


def _removed(block: Block, index: int) -> dict[int, list[cst.BaseStatement]]:
    """The statement gone; a block left empty gets ``pass``, the next statement its blank lines."""
    if len(block.statements) == 1:
        return {index: [cst.SimpleStatementLine([cst.Pass()])]}
    if index + 1 == len(block.statements):
        return {index: []}
    gone, after = block.statements[index], block.statements[index + 1]
    if not isinstance(gone, cst.SimpleStatementLine) or not isinstance(
        after, cst.SimpleStatementLine | cst.BaseCompoundStatement
    ):
        return {index: []}
    blank = [line for line in gone.leading_lines if line.comment is None]
    moved = after.with_changes(leading_lines=[*blank, *after.leading_lines])
    return {index: [], index + 1: [moved]}


def remove_decorator(func: cst.FunctionDef, target: Target) -> cst.FunctionDef | Skip:
    """The job without its ``@sched.scheduled_job(...)`` decorator."""
    kept = [d for d in func.decorators if not _scheduled(d)]
    if len(kept) != len(func.decorators) - 1:
        return Skip("not exactly one @scheduled_job decorator on the job: left as it is")
    dropped = next(d for d in func.decorators if _scheduled(d))
    decorator = dropped.decorator
    assert isinstance(decorator, cst.Call)  # _scheduled only matches calls
    if not _same_schedule(decorator, target):
        return Skip("the registration changed since it was selected: rescan")
    if kept and dropped is func.decorators[0]:
        kept[0] = kept[0].with_changes(leading_lines=dropped.leading_lines)
    return func.with_changes(decorators=kept)


def _scheduled(decorator: cst.Decorator) -> bool:
    expr = decorator.decorator
    return isinstance(expr, cst.Call) and method(expr) == "scheduled_job"


def _same_schedule(call: cst.Call, target: Target) -> bool:
    """The registration still says what the selection translated (``@job`` arguments)."""
    found = translate(call)
    return not isinstance(found, str) and found.arguments() == target.schedule
