"""Executors whose futures are unused.

* ``executor.submit(fn, a, k=v)`` ->
  ``fn.options(inline=InlineShape.EXECUTOR, executor=executor).enqueue(a, k=v)``
* ``executor.map(fn, xs)`` -> ``for item in xs: fn.options(...).enqueue(item)``
  (several iterables are zipped, as ``map`` does)

The executor goes along so that, while the gate keeps the job inline, the job
still runs in it and not in the caller.
"""

from __future__ import annotations

import libcst as cst

from codemods._rewrites.enqueue import (
    Inline,
    SiteShape,
    enqueue_call,
    join_args,
    shaped,
    unwrap,
)
from codemods._syntax import code, replace_expression, statement_call
from codemods._types import Block, Edit, Skip, Target


def rewrite(block: Block, index: int, target: Target) -> Edit | Skip | None:
    stmt = block.statements[index]
    call = statement_call(stmt)
    if call is None or not isinstance(call.func, cst.Attribute) or not call.args:
        return None
    method = call.func.attr.value
    if method not in ("submit", "map") or call.args[0].keyword is not None:
        return None
    found = unwrap(call.args[0].value, target)
    if found is None:
        return None
    assert isinstance(stmt, cst.SimpleStatementLine)
    inline = Inline(SiteShape.EXECUTOR, call.func.value)
    if method == "submit":
        args = join_args(found[1], call.args[1:])
        new = enqueue_call(found[0], args, target, call, inline)
        return (
            new
            if isinstance(new, Skip)
            else shaped({index: [replace_expression(stmt, new)]}, inline, target)
        )
    return _map_loop(block, index, stmt, call, found, target, inline)


def _map_loop(
    block: Block,
    index: int,
    stmt: cst.SimpleStatementLine,
    call: cst.Call,
    found: tuple[cst.BaseExpression, list[cst.Arg]],
    target: Target,
    inline: Inline,
) -> Edit | Skip:
    iterables = call.args[1:]
    if not iterables or any(a.keyword is not None or a.star for a in iterables):
        return Skip("executor.map with keyword arguments (timeout, chunksize): rewrite by hand")
    names = _fresh_names(block, len(iterables))
    item_args = [cst.Arg(value=cst.Name(n)) for n in names]
    new = enqueue_call(found[0], join_args(found[1], item_args), target, inline=inline)
    if isinstance(new, Skip):
        return new
    source = (
        code(iterables[0].value)
        if len(iterables) == 1
        else f"zip({', '.join(code(a.value) for a in iterables)})"
    )
    loop = cst.parse_statement(f"for {', '.join(names)} in {source}:\n    {code(new)}\n")
    assert isinstance(loop, cst.For) and isinstance(loop.body, cst.IndentedBlock)
    loop = loop.with_changes(
        leading_lines=stmt.leading_lines,
        body=loop.body.with_changes(header=stmt.trailing_whitespace),
    )
    return shaped({index: [loop]}, inline, target)


def _fresh_names(block: Block, count: int) -> list[str]:
    """Loop variables the enclosing function does not use (they outlive the loop)."""
    used = set(block.scope_names)
    base = "item" if count == 1 else "items"
    names: list[str] = []
    suffix = 0
    while len(names) < count:
        candidate = base if count == 1 and suffix == 0 else f"{base[:4]}_{suffix}"
        suffix += 1
        if candidate not in used:
            names.append(candidate)
    return names
