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
