"""``Thread(target=fn, args=(a,), kwargs={"k": v}).start()`` -> ``fn.enqueue(a, k=v)``.

Also ``multiprocessing.Process`` (same constructor), an aliased ``Thread``,
``partial(fn, a)`` and ``lambda: fn(a)`` targets, and the two-statement form
``t = Thread(...)`` / ``t.start()`` when ``t`` is used nowhere else in the
block (otherwise ``t.join()`` or ``t.daemon`` would lose their thread), or only
kept in a list to be joined at shutdown (``procs.append(t)``: that statement goes).
A ``Thread`` subclass started as ``Cls(a, b).start()`` (``codemods._threadjob``)
becomes ``run_cls.enqueue(a, b)``.

Every form passes ``.options(inline=InlineShape.THREAD)``: while the gate keeps
the job inline, it still runs in a thread of its own, not in the request.
"""

from __future__ import annotations

from collections.abc import Sequence

import libcst as cst
import libcst.matchers as m

from codemods._rewrites.enqueue import (
    KEYWORD_EQUAL,
    Inline,
    SiteShape,
    enqueue_call,
    is_job_ref,
    join_args,
    shaped,
    unwrap,
)
from codemods._syntax import replace_expression, statement_call
from codemods._types import Block, Edit, Skip, Target

THREAD = Inline(SiteShape.THREAD)


def rewrite(block: Block, index: int, target: Target) -> Edit | Skip | None:
    stmt = block.statements[index]
    call = statement_call(stmt)
    if call is not None and _is_start(call) and isinstance(call.func, cst.Attribute):
        ctor = call.func.value
        if isinstance(ctor, cst.Call):
            return _replace(stmt, ctor, index, target)
        if isinstance(ctor, cst.Name):
            return _two_statements(
                block, _assignment_of(block.statements, index, ctor.value), index, target
            )
    name = _assigned_thread(stmt)
    if name is not None:
        return _two_statements(block, index, _start_of(block.statements, index, name), target)
    return None


def _is_start(call: cst.Call) -> bool:
    return (
        isinstance(call.func, cst.Attribute) and call.func.attr.value == "start" and not call.args
    )


def _replace(
    stmt: cst.BaseStatement, ctor: cst.Call, index: int, target: Target
) -> Edit | Skip | None:
    new = _enqueue_from_ctor(ctor, target)
    if new is None or isinstance(new, Skip):
        return new
    assert isinstance(stmt, cst.SimpleStatementLine)
    return shaped({index: [replace_expression(stmt, new)]}, THREAD, target)


def _enqueue_from_ctor(ctor: cst.Call, target: Target) -> cst.Call | Skip | None:
    kw = {a.keyword.value: a.value for a in ctor.args if a.keyword is not None}
    if target.wrapper is not None and is_job_ref(ctor.func, target):
        # A Thread subclass: its constructor's arguments are the job's.
        return enqueue_call(ctor.func, list(ctor.args), target, inline=THREAD)
    if "target" not in kw:
        return None
    found = unwrap(kw["target"], target)
    if found is None:
        return None
    func, bound = found
    args = join_args(bound, _positional(kw.get("args")), _keywords(kw.get("kwargs")))
    return enqueue_call(func, args, target, inline=THREAD)


def _positional(expr: cst.BaseExpression | None) -> list[cst.Arg]:
    if expr is None:
        return []
    if isinstance(expr, cst.Tuple | cst.List):
        return [_element_arg(e) for e in expr.elements]
    return [cst.Arg(value=expr, star="*")]


def _element_arg(element: cst.BaseElement) -> cst.Arg:
    if isinstance(element, cst.StarredElement):
        return cst.Arg(value=element.value, star="*")
    return cst.Arg(value=element.value)


def _keywords(expr: cst.BaseExpression | None) -> list[cst.Arg]:
    if expr is None:
        return []
    if isinstance(expr, cst.Dict) and all(_identifier_key(e) for e in expr.elements):
        return [_keyword_arg(e) for e in expr.elements]
    return [cst.Arg(value=expr, star="**")]


def _identifier_key(element: cst.BaseDictElement) -> bool:
    if not isinstance(element, cst.DictElement) or not isinstance(element.key, cst.SimpleString):
        return False
    return str(element.key.evaluated_value).isidentifier()


def _keyword_arg(element: cst.BaseDictElement) -> cst.Arg:
    assert isinstance(element, cst.DictElement) and isinstance(element.key, cst.SimpleString)
    return cst.Arg(
        keyword=cst.Name(str(element.key.evaluated_value)), value=element.value, equal=KEYWORD_EQUAL
    )


def _assigned_thread(stmt: cst.BaseStatement) -> str | None:
    """``t`` for ``t = Thread(target=...)``."""
    pattern = m.SimpleStatementLine(
        body=[
            m.Assign(
                targets=[m.AssignTarget(target=m.Name())],
                value=m.Call(
                    args=[m.ZeroOrMore(), m.Arg(keyword=m.Name("target")), m.ZeroOrMore()]
                ),
            )
        ]
    )
    if not isinstance(stmt, cst.SimpleStatementLine) or not m.matches(stmt, pattern):
        return None
    assign = cst.ensure_type(stmt.body[0], cst.Assign)
    return cst.ensure_type(assign.targets[0].target, cst.Name).value


def _start_of(body: Sequence[cst.BaseStatement], index: int, name: str) -> int | None:
    for j in range(index + 1, len(body)):
        call = statement_call(body[j])
        if (
            call is not None
            and _is_start(call)
            and m.matches(call.func, m.Attribute(value=m.Name(name)))
        ):
            return j
    return None


def _assignment_of(body: Sequence[cst.BaseStatement], index: int, name: str) -> int | None:
    for j in range(index - 1, -1, -1):
        if _assigned_thread(body[j]) == name:
            return j
    return None


def _two_statements(
    block: Block, assign_at: int | None, start_at: int | None, target: Target
) -> Edit | Skip | None:
    if assign_at is None or start_at is None:
        return None
    assign_stmt, start_stmt = block.statements[assign_at], block.statements[start_at]
    name = _assigned_thread(assign_stmt)
    assert name is not None and isinstance(assign_stmt, cst.SimpleStatementLine)
    kept = _kept_for_join(block.statements, start_at, name)
    uses = 2 + (kept is not None)  # the assignment and .start(), and maybe a join list
    if block.scope_names.get(name, 0) != uses:
        return Skip(f"the thread object {name!r} is used after start(): rewrite by hand")
    ctor = cst.ensure_type(cst.ensure_type(assign_stmt.body[0], cst.Assign).value, cst.Call)
    new = _enqueue_from_ctor(ctor, target)
    if new is None or isinstance(new, Skip):
        return new
    assert isinstance(start_stmt, cst.SimpleStatementLine)
    # The removed assignment's comments move down to the statement that replaces the pair.
    moved = replace_expression(start_stmt, new)
    moved = moved.with_changes(
        leading_lines=[*assign_stmt.leading_lines, *start_stmt.leading_lines]
    )
    dropped: dict[int, list[cst.BaseStatement]] = {kept: []} if kept is not None else {}
    return shaped({assign_at: [], start_at: [moved], **dropped}, THREAD, target)


def _kept_for_join(body: Sequence[cst.BaseStatement], start_at: int, name: str) -> int | None:
    """``workers.append(t)`` right after ``t.start()``: kept only to be joined later.

    A queued job needs no join (it is stored, and a worker runs it), so the
    statement goes with the thread.
    """
    if start_at + 1 >= len(body):
        return None
    call = statement_call(body[start_at + 1])
    append = m.Call(func=m.Attribute(attr=m.Name("append")), args=[m.Arg(value=m.Name(name))])
    return start_at + 1 if call is not None and m.matches(call, append) else None
