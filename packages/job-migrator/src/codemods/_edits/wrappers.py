"""Thin wrapper jobs (a Thread subclass's run, a service object's method) written into a module once.

The wrapper goes right after the top-level definition it calls, set off by
two blank lines as a formatter would; ``register`` then decorates it. A
second run finds the function and adds nothing.
"""

from __future__ import annotations

import libcst as cst

from codemods._types import Wrapper


def add_wrapper(module: cst.Module, wrapper: Wrapper) -> cst.Module:
    """``module`` with ``wrapper``'s function after the definition of ``wrapper.after``."""
    body = list(module.body)
    names = [s.name.value if isinstance(s, cst.FunctionDef | cst.ClassDef) else None for s in body]
    if wrapper.name in names:
        return module
    at = names.index(wrapper.after) if wrapper.after in names else len(body) - 1
    new = cst.parse_statement(wrapper.source)
    new = new.with_changes(leading_lines=[cst.EmptyLine(), cst.EmptyLine()])
    return module.with_changes(body=[*body[: at + 1], new, *body[at + 1 :]])
