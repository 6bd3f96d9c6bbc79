"""Function signatures: drop the parameters a rewrite made unnecessary."""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m


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


# Side-effect-free lookups whose only purpose was the call a rewrite replaced.
_LOOKUPS = frozenset({"get_running_loop", "get_event_loop"})


def drop_dead_lookups(original: cst.FunctionDef, func: cst.FunctionDef) -> cst.FunctionDef:
    """Remove ``loop = asyncio.get_running_loop()`` when the rewrite took the name's last use."""
    return func.with_changes(body=func.body.visit(_DropDeadLookups(original, func)))


class _DropDeadLookups(cst.CSTTransformer):
    def __init__(self, original: cst.FunctionDef, func: cst.FunctionDef) -> None:
        super().__init__()
        self._before = original
        self._after = func

    def leave_SimpleStatementLine(
        self, original_node: cst.SimpleStatementLine, updated_node: cst.SimpleStatementLine
    ) -> cst.SimpleStatementLine | cst.RemovalSentinel:
        name = _lookup_target(updated_node)
        if name is None or len(m.findall(self._before, m.Name(name))) < 2:
            return updated_node
        return (
            cst.RemoveFromParent()
            if len(m.findall(self._after, m.Name(name))) == 1
            else updated_node
        )


def _lookup_target(stmt: cst.SimpleStatementLine) -> str | None:
    pattern = m.Assign(
        targets=[m.AssignTarget(target=m.Name())],
        value=m.Call(func=m.Attribute(attr=m.Name()) | m.Name(), args=[]),
    )
    if len(stmt.body) != 1 or not m.matches(stmt.body[0], pattern):
        return None
    assign = cst.ensure_type(stmt.body[0], cst.Assign)
    func = cst.ensure_type(assign.value, cst.Call).func
    called = (
        func.attr.value
        if isinstance(func, cst.Attribute)
        else cst.ensure_type(func, cst.Name).value
    )
    return cst.ensure_type(assign.targets[0].target, cst.Name).value if called in _LOOKUPS else None
