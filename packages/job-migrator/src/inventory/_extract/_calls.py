"""One call expression as a :class:`CallInfo`."""

from __future__ import annotations

import ast

from inventory._extract._library import statement_class
from inventory._extract._resolve import Resolved, Resolver, public_name
from inventory._extract._source import SourceText, clean, span_of
from inventory._extract.values._values import argument_type
from inventory.summary import CallInfo

Literal = str | int | float | bool | None
EXPR = "<expr>"
_LITERAL_TYPES = (str, int, float, bool, type(None))


def literal(node: ast.expr) -> Literal:
    """The value of a literal argument, ``"<expr>"`` for anything else."""
    if isinstance(node, ast.Constant):
        value = node.value
        if isinstance(value, _LITERAL_TYPES):
            return clean(value[:200]) if isinstance(value, str) else value
        return EXPR
    if (
        isinstance(node, ast.UnaryOp)
        and isinstance(node.op, ast.USub)
        and isinstance(node.operand, ast.Constant)
    ):
        value = node.operand.value
        if isinstance(value, int | float) and not isinstance(value, bool):
            return -value
    return EXPR


def call_info(
    node: ast.Call, resolved: Resolved, used: bool, module: str, text: SourceText
) -> CallInfo:
    """``uses_param`` is filled by the walker while it visits the arguments."""
    args = [literal(a) for a in node.args]
    kwargs = {(k.arg or "**"): literal(k.value) for k in node.keywords}
    return CallInfo(
        target=public_name(resolved.target, module),
        receiver=resolved.receiver,
        receiver_source=resolved.receiver_source,
        receiver_param=resolved.receiver_param,
        span=span_of(node),
        args=args,
        arg_sources=[text.source(a) for a in node.args],
        kwargs=kwargs,
        kwarg_sources={(k.arg or "**"): text.source(k.value) for k in node.keywords},
        result_used=used,
        returned_from=public_name(resolved.returned, module),
        receiver_declared=resolved.declared,
    )


def argument_types(args: list[ast.expr], resolver: Resolver, module: str) -> list[str]:
    """The class of each positional argument that is a name of a known class ("" for the
    others): ``session.execute(stmt)`` does what the statement ``stmt`` was built as.
    An argument made by a function whose module is another file keeps the name of that
    call (``pkg.queries.build()``, ``pkg.queries.build().order_by()``, see
    ``values.argument_type``): the classifier types it once it has read what ``build``
    returns (``_classify/_statements.py``)."""
    found = [statement_class(argument_type(a, resolver)) for a in args]
    return [public_name(t, module) if t else "" for t in found] if any(found) else []
