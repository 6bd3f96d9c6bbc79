"""What every part of the walker shares: the file, the current function, the uses of values."""

from __future__ import annotations

import ast
from collections.abc import Callable

from inventory._extract._scopes import ClassCtx, ScopeKind
from inventory._extract._source import SourceText
from inventory._extract._state import FunctionState, Use, UseKind
from inventory.models import Framework
from inventory.summary import FileSummary

Visit = Callable[[ast.AST], None]


class WalkerBase:
    """One depth-first walk over a module, in source order (bindings precede their uses)."""

    text: SourceText
    summary: FileSummary
    module: str
    classes: dict[str, ClassCtx]
    frameworks: set[Framework]
    consumers: set[str]  # functions running a ``while True`` loop over a queue or socket
    uses: dict[int, Use]  # id(node) -> what its parent does with its value
    state: FunctionState
    lambda_depth: int
    dispatch: dict[type, Visit]

    def visit(self, node: ast.AST) -> None:
        handler = self.dispatch.get(type(node))
        if handler is None:
            for child in ast.iter_child_nodes(node):
                self.visit(child)
        else:
            handler(node)

    def visit_children(self, node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            self.visit(child)

    def mark(self, node: ast.expr, kind: UseKind, name: str = "") -> None:
        self.uses[id(node)] = Use(kind, name)

    def consume(self, name: str) -> None:
        """``name`` (a future, task or list of them) is waited for in this function."""
        bound = self.state.watch.get(name)
        if bound is not None:
            self.state.consumed.add(bound)

    @property
    def in_function(self) -> bool:
        return self.state.resolver.scope.kind is ScopeKind.FUNCTION
