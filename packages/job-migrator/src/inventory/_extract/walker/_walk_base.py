"""What every part of the walker shares: the file, the current function, the uses of values."""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import TypeVar, cast

from inventory._extract._nodes import child_fields
from inventory._extract._scopes import ClassCtx, ScopeKind
from inventory._extract._source import SourceText
from inventory._extract._state import FunctionState, Use, UseKind
from inventory.models import Framework
from inventory.summary import FileSummary

Visit = Callable[["WalkerBase", ast.AST], None]


class WalkerBase:
    """One depth-first walk over a module, in source order (bindings precede their uses)."""

    text: SourceText
    summary: FileSummary
    module: str
    classes: dict[str, ClassCtx]
    frameworks: set[Framework]
    routes: dict[str, Framework]  # functions registered as handlers by a call -> framework
    # view class qualname -> {parameter name: the class the framework builds it from}
    handed: dict[str, dict[str, str]]
    consumers: set[str]  # functions running a ``while True`` loop over a queue or socket
    containers: frozenset[str]  # module-level names bound to an in-memory container
    state_names: frozenset[str]  # names whose use sends a function to ``_process_state``
    request_names: frozenset[str]  # names whose use sends it to ``_request_reads``
    top_classes: frozenset[str]  # the classes the module defines at its top level

    def class_reads(self, qualname: str) -> frozenset[str]:
        raise NotImplementedError  # the Walker's, read once per class when asked

    uses: dict[int, Use]  # id(node) -> what its parent does with its value
    state: FunctionState
    lambda_depth: int
    sinks: list[set[str]]  # parameters mentioned by the arguments of the calls being visited
    # type -> unbound visitor; class-level so a walker holds no cycle through bound methods
    dispatch: dict[type[ast.AST], Visit] = {}

    def visit(self, node: ast.AST) -> None:
        handler = self.dispatch.get(type(node))
        if handler is None:
            self.visit_children(node)
        else:
            handler(self, node)

    def visit_children(self, node: ast.AST) -> None:
        # ast.iter_child_nodes, without visiting Load/Store contexts and operators.
        for name in child_fields(type(node)):
            value = getattr(node, name)
            if isinstance(value, list):
                for item in value:
                    if isinstance(item, ast.AST):
                        self.visit(item)
            elif isinstance(value, ast.AST):
                self.visit(value)

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


N = TypeVar("N", bound=ast.AST)
W = TypeVar("W", bound=WalkerBase)


def visitor(kind: type[N], visit: Callable[[W, N], None]) -> tuple[type[ast.AST], Visit]:
    """One entry of a ``dispatch`` table; mypy checks that ``visit`` takes a ``kind`` node."""
    # The cast forgets the node type the signature just checked: sound, because ``visit``
    # keys the table on ``type(node)`` and so only ever hands ``visit`` a ``kind`` node.
    return kind, cast(Visit, visit)
