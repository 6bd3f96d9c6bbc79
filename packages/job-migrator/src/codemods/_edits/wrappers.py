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


def retire_nested(module: cst.Module, wrapper: Wrapper) -> cst.Module:
    """The nested function ``wrapper`` lifted: removed, or (``delegates``) calling the lifted one."""
    if not wrapper.lifts:
        return module
    return module.visit(_Retire(wrapper))


class _Retire(cst.CSTTransformer):
    def __init__(self, wrapper: Wrapper) -> None:
        super().__init__()
        self.wrapper = wrapper
        self._scopes: list[tuple[str, bool]] = []  # (name, is_class)

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._scopes.append((node.name.value, True))

    def leave_ClassDef(
        self, original_node: cst.ClassDef, updated_node: cst.ClassDef
    ) -> cst.ClassDef:
        self._scopes.pop()
        return updated_node

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._scopes.append((node.name.value, False))

    def leave_IndentedBlock(
        self, original_node: cst.IndentedBlock, updated_node: cst.IndentedBlock
    ) -> cst.IndentedBlock:
        """A block whose first statement went starts at its next one, without a blank line."""
        body = list(updated_node.body)
        if len(body) == len(original_node.body) or not body or body[0] is original_node.body[0]:
            return updated_node
        first = body[0]
        lines = list(getattr(first, "leading_lines", ()))
        while lines and lines[0].comment is None:
            lines.pop(0)
        return updated_node.with_changes(body=[first.with_changes(leading_lines=lines), *body[1:]])

    def leave_FunctionDef(
        self, original_node: cst.FunctionDef, updated_node: cst.FunctionDef
    ) -> cst.FunctionDef | cst.RemovalSentinel:
        self._scopes.pop()
        qualpath = ".".join(n if cls else f"{n}.<locals>" for n, cls in self._scopes)
        qualpath = f"{qualpath}.{updated_node.name.value}" if qualpath else updated_node.name.value
        if qualpath != self.wrapper.lifts:
            return updated_node
        if not self.wrapper.delegates:
            return cst.RemovalSentinel.REMOVE
        params = [p.name.value for p in updated_node.params.params]
        passed = ", ".join([*params, *(f"{v}={v}" for v in self.wrapper.passes)])
        awaited = "await " if updated_node.asynchronous is not None else ""
        body = cst.parse_statement(f"return {awaited}{self.wrapper.name}({passed})")
        return updated_node.with_changes(body=cst.IndentedBlock(body=[body]))
