"""``background_tasks.add_task(fn, a, k=v)`` -> ``fn.enqueue(a, k=v)``.

The ``BackgroundTasks`` parameter the call went through is offered for
removal; the function-level pass drops it only when nothing else in the
handler still uses it (FastAPI injects it, so the signature may shrink).
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m
from libcst.codemod import CodemodContext
from libcst.codemod.visitors import RemoveImportsVisitor

from codemods._targets import enqueue_call, join_args, replace_expression, statement_call, unwrap
from codemods._types import Block, Edit, Skip, Target


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
    return Edit({index: [replace_expression(stmt, new)]}, dropped_params=dropped)


def drop_unused_params(func: cst.FunctionDef, names: frozenset[str]) -> cst.FunctionDef:
    """Remove parameters in ``names`` that the function body no longer mentions."""
    unused = {n for n in names if not _mentions(func.body, n)}
    params = func.params
    kept = [p for p in params.params if p.name.value not in unused]
    if len(kept) == len(params.params):
        return func
    if kept and len(kept) < len(params.params) and params.params[-1].name.value in unused:
        # The last parameter went: its comma (or its absence) moves to the new last one.
        kept[-1] = kept[-1].with_changes(comma=params.params[-1].comma)
    return func.with_changes(params=params.with_changes(params=kept))


def _mentions(node: cst.CSTNode, name: str) -> bool:
    return bool(m.findall(node, m.Name(name)))


_IMPORTS = (("fastapi", "BackgroundTasks"), ("starlette.background", "BackgroundTasks"))


def remove_unused_imports(module: cst.Module) -> cst.Module:
    """Drop a ``BackgroundTasks`` import that nothing uses any more (and only then)."""
    visitor = RemoveImportsVisitor(CodemodContext(), [(mod, obj, None) for mod, obj in _IMPORTS])
    return visitor.transform_module(module)
