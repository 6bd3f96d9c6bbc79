"""Small libcst helpers every layer uses: names, source text, expression statements.

They know nothing about jobs or targets (that is ``_rewrites.enqueue``).
"""

from __future__ import annotations

import libcst as cst

_EMPTY = cst.Module(body=[])


def code(node: cst.CSTNode) -> str:
    return _EMPTY.code_for_node(node)


def dotted(expr: cst.BaseExpression) -> str | None:
    """``a.b.c`` for a Name/Attribute chain, None for anything else."""
    if isinstance(expr, cst.Name):
        return expr.value
    if isinstance(expr, cst.Attribute):
        head = dotted(expr.value)
        return None if head is None else f"{head}.{expr.attr.value}"
    return None


def last_name(expr: cst.BaseExpression) -> str | None:
    name = dotted(expr)
    return None if name is None else name.rsplit(".", 1)[-1]


def statement_call(stmt: cst.BaseStatement) -> cst.Call | None:
    """The call of an expression statement (``await`` unwrapped), else None."""
    if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1:
        return None
    expr = stmt.body[0]
    if not isinstance(expr, cst.Expr):
        return None
    value = expr.value.expression if isinstance(expr.value, cst.Await) else expr.value
    return value if isinstance(value, cst.Call) else None


def replace_expression(stmt: cst.SimpleStatementLine, call: cst.Call) -> cst.SimpleStatementLine:
    """The statement with its expression (and any ``await``) replaced by ``call``."""
    expr = stmt.body[0]
    assert isinstance(expr, cst.Expr)
    return stmt.with_changes(body=[expr.with_changes(value=call)])
